/**
 * `wss://` to any host through the forward proxy (HTTPS_PROXY) in wrapper mode: CONNECT, TLS with the local CA, then
 * the upgrade inside the tunnel; recorded against an upstream with its own self-signed certificate, then replayed
 * with it gone. And inside the no-egress sandbox, where the agent reaches nothing but tapedeck.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxSupport } from '../../../src/run/sandbox.js';
import { readTape } from '../../../src/tape/tape-reader.js';
import { runCli } from '../../helpers/cli.js';
import { selfSignedCert } from '../../helpers/https-upstream.js';
import { realtimeScript, startWsUpstream, type WsUpstream } from '../../helpers/ws-upstream.js';

const AGENT = path.join(import.meta.dirname, 'fixtures', 'proxied-agent.mjs');
let dir: string;
let env: NodeJS.ProcessEnv;
let upstream: WsUpstream;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-ws-fwd-'));
  // A host name, not an address: https-proxy-agent checks a certificate against the name only (an IP target fails
  // its check whatever the proxy does).
  const tls = selfSignedCert('localhost');
  upstream = await startWsUpstream(realtimeScript(), { tls });
  upstream.url = upstream.url.replace('127.0.0.1', 'localhost');
  // tapedeck trusts the upstream's own certificate; the agent trusts tapedeck's CA (wrapper mode adds it).
  writeFileSync(path.join(dir, 'upstream-cert.pem'), tls.cert);
  env = { TAPEDECK_CA_DIR: path.join(dir, 'ca'), NODE_EXTRA_CA_CERTS: path.join(dir, 'upstream-cert.pem') };
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

const lines = (stdout: string): unknown[] =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as unknown);

describe('wss:// through HTTPS_PROXY in wrapper mode', () => {
  it('records the session inside the CONNECT tunnel, then replays it with the upstream gone', async () => {
    const agent = ['--', process.execPath, AGENT, upstream.url.replace('https', 'wss')];
    const rec = await runCli(['record', '--tape', 'fwd', '--dir', dir, ...agent], env);
    expect(rec.code, rec.stderr + rec.stdout).toBe(0);
    const recorded = lines(rec.stdout);
    expect(recorded).toContainEqual(expect.objectContaining({ type: 'response.output_text.done', text: 'It is sunny in Paris.' }));
    expect(recorded.at(-1)).toEqual({ closed: 1000, reason: 'done' });
    expect(upstream.connections).toBe(1);
    const tape = await readTape(path.join(dir, 'fwd.jsonl'));
    expect(tape.exchanges.map((e) => [e.transport, e.route, e.request.path])).toEqual([['websocket', upstream.url, '/v1/realtime']]);
    expect(tape.exchanges[0]?.request.headers.authorization).toBe('[REDACTED]');

    const rep = await runCli(['replay', '--tape', 'fwd', '--dir', dir, '--save-as', 'fwd-replay', ...agent], env);
    expect(rep.code, rep.stderr + rep.stdout).toBe(0);
    expect(lines(rep.stdout)).toEqual(recorded);
    expect(upstream.connections).toBe(1);
  });

  const support = sandboxSupport();
  it.skipIf(!support.ok)(
    `replays it inside the sandbox, where nothing but tapedeck is reachable${support.ok ? '' : ` (skipped: ${support.reason})`}`,
    async () => {
      const agent = ['--', process.execPath, AGENT, upstream.url.replace('https', 'wss')];
      const rep = await runCli(['replay', '--tape', 'fwd', '--dir', dir, '--save-as', 'fwd-sandbox', '--sandbox', ...agent], env);
      expect(rep.code, rep.stderr + rep.stdout).toBe(0);
      expect(lines(rep.stdout)).toContainEqual(
        expect.objectContaining({ type: 'response.output_text.done', text: 'It is sunny in Paris.' }),
      );
      expect(upstream.connections).toBe(1);
    },
  );
});
