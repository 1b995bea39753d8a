/**
 * The official Python `mcp` client (its `OAuthClientProvider`, over httpx) through the same OAuth-protected deployment
 * as the TypeScript test: recorded through a route, then replayed with both servers stopped and a fresh client. The
 * Python SDK checks more than the TypeScript one: the authorization server's `issuer` against the URL it was found
 * at, and the redirect's `iss` (RFC 9207) against that issuer, so tapedeck's URLs must agree everywhere.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { startProxy } from '../../../src/front/server.js';
import { createMcpResponder } from '../../../src/transports/mcp/responder.js';
import { createOAuthResponder } from '../../../src/transports/oauth/responder.js';
import { loadTape } from '../../../src/tape/tape-reader.js';
import { startProtectedMcp, type ProtectedMcp } from '../../helpers/oauth-servers.js';

const CLIENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'python_oauth_client.py');
const log = createLogger('silent');

/** python3 with the `mcp` package (installed by .ci/run when it can), or why not. */
function pythonMcp(): string | undefined {
  if (spawnSync('python3', ['--version']).status !== 0) return 'python3 is not installed';
  const probe = spawnSync('python3', ['-c', 'import mcp.client.auth, httpx2'], { timeout: 60_000, encoding: 'utf8' });
  if (probe.status === 0) return undefined;
  return `the Python mcp package is not installed (pip install mcp): ${(probe.stderr || '').trim().split('\n').pop() ?? ''}`;
}

/** Run the Python client against `url`; its one JSON line. */
function runPython(url: string): Promise<{ echo: string; seen: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', [CLIENT, url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`python client exited ${code}: ${err.trim().split('\n').slice(-8).join('\n')}`));
      resolve(JSON.parse(out.trim().split('\n').pop() ?? '{}') as { echo: string; seen: string[] });
    });
  });
}

let unavailable: string | undefined;
let dir: string;
let servers: ProtectedMcp | undefined;
let recorded: { echo: string; seen: string[] } | undefined;

beforeAll(async () => {
  unavailable = pythonMcp();
  if (unavailable !== undefined) return;
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-py-oauth-'));
  servers = await startProtectedMcp();
  const rec = await startProxy({
    mode: 'record',
    tape: 'py-oauth',
    dir,
    port: 0,
    routes: [{ prefix: '/remote/mcp', upstream: servers.url }],
    log,
  });
  try {
    recorded = await runPython(`${rec.url}/remote/mcp`);
  } finally {
    await rec.close();
    await servers.stop();
  }
}, 120_000);
afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('OAuth through a route (Python mcp client)', () => {
  it('records, then replays with both servers stopped and a fresh client; nothing secret on either tape', async (ctx) => {
    if (unavailable !== undefined) {
      console.log(`skipped: ${unavailable}`);
      ctx.skip();
      return;
    }
    expect(recorded?.echo).toBe('hello from python');
    const rep = await startProxy({
      mode: 'replay',
      tape: 'py-oauth',
      dir,
      port: 0,
      routes: [],
      saveAs: 'py-oauth-replay',
      responders: [createOAuthResponder(), createMcpResponder()],
      log,
    });
    let replayed: { echo: string; seen: string[] };
    try {
      replayed = await runPython(`${rep.url}/remote/mcp`);
    } finally {
      await rep.close();
    }
    expect(replayed.echo).toBe('hello from python');
    const out = await loadTape(dir, 'py-oauth-replay');
    expect(out.exchanges.filter((ex) => ex.match?.kind === 'miss')).toEqual([]);
    const secrets = [...(servers?.issued ?? []), ...(recorded?.seen ?? []), ...replayed.seen];
    expect(secrets.length).toBeGreaterThanOrEqual(6);
    for (const tape of ['py-oauth', 'py-oauth-replay']) {
      const text = readFileSync(path.join(dir, `${tape}.jsonl`), 'utf8');
      for (const s of secrets) expect(text.includes(s), `${tape} holds ${s.slice(0, 6)}...`).toBe(false);
    }
  });
});
