/**
 * An OAuth-protected MCP server as deployed, through a route: the SDK's bearer middleware in front of an SDK server,
 * an authorization server on another port that binds tokens to the server's URL, and the official TypeScript SDK
 * client with an in-memory OAuth provider. Recorded through tapedeck, then replayed with both servers stopped and a
 * fresh client (no tokens, no registration): the whole flow completes offline against the tape.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { startProxy } from '../../../src/front/server.js';
import { createMcpResponder } from '../../../src/transports/mcp/responder.js';
import { createOAuthResponder } from '../../../src/transports/oauth/responder.js';
import { loadTape } from '../../../src/tape/tape-reader.js';
import { bodyText } from '../../../src/tape/body.js';
import { runTrouble } from '../../../src/inspect/run-trouble.js';
import { toHar } from '../../../src/export/har.js';
import { otlpJson, tapeSpans } from '../../../src/export/otlp.js';
import { InMemoryOAuthClient, startProtectedMcp, type ProtectedMcp } from '../../helpers/oauth-servers.js';
import { runSdkFlow, type FlowResult } from './sdk-flow.js';

const log = createLogger('silent');
let dir: string;
let servers: ProtectedMcp;
let recorded: FlowResult;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-oauth-'));
  servers = await startProtectedMcp();
  const rec = await startProxy({
    mode: 'record',
    tape: 'oauth',
    dir,
    port: 0,
    routes: [{ prefix: '/remote/mcp', upstream: servers.url }],
    log,
  });
  try {
    recorded = await runSdkFlow(`${rec.url}/remote/mcp`, { write: true });
  } finally {
    await rec.close();
    await servers.stop();
  }
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function replaying<T>(saveAs: string, run: (url: string) => Promise<T>): Promise<T> {
  const rep = await startProxy({
    mode: 'replay',
    tape: 'oauth',
    dir,
    port: 0,
    routes: [],
    saveAs,
    responders: [createOAuthResponder(), createMcpResponder()],
    log,
  });
  try {
    return await run(`${rep.url}/remote/mcp`);
  } finally {
    await rep.close();
  }
}

describe('OAuth through a route (TypeScript SDK client)', () => {
  it('records the whole flow through tapedeck; the real servers saw their own URLs', async () => {
    expect(recorded).toMatchObject({ echo: 'hello', write: 'wrote note' });
    const tape = await loadTape(dir, 'oauth');
    const issuer = new URL(servers.issuer).origin;
    const at = (p: string) => tape.exchanges.filter((ex) => ex.request.path === p);
    // The metadata, registration, authorization and token requests all went through the route, to the real servers.
    expect(at('/.well-known/oauth-protected-resource/mcp')[0]?.upstream).toBe(new URL(servers.url).origin);
    for (const p of ['/.well-known/oauth-authorization-server', '/register', '/authorize', '/token'])
      expect(at(p).map((ex) => ex.upstream)).toContain(issuer);
    // RFC 8707: the resource the authorization server saw is the real server's, never tapedeck's.
    const token = at('/token')[0];
    expect(bodyText(token?.request.body)).toContain(`resource=${encodeURIComponent(servers.url)}`);
    expect(at('/authorize')[0]?.request.query).toContainEqual(['resource', servers.url]);
    // A step-up: a 403 insufficient_scope, then a wider authorization.
    expect(tape.exchanges.some((ex) => ex.response?.status === 403)).toBe(true);
    expect(at('/authorize')).toHaveLength(2);
    // The challenges and the step-up are the flow, not failures of the upstream.
    expect(runTrouble(tape.exchanges)).toBeUndefined();
  });

  it('replays with both servers stopped and a fresh client: the flow completes offline, the recorded results come back', async () => {
    const replayed = await replaying('oauth-replay', (url) => runSdkFlow(url, { write: true }));
    expect(replayed).toMatchObject({ echo: 'hello', write: 'wrote note' });
    const out = await loadTape(dir, 'oauth-replay');
    expect(runTrouble(out.exchanges)).toBeUndefined();
    expect(out.exchanges.filter((ex) => ex.match?.kind === 'miss').map((ex) => [ex.request.path, ex.match?.reason])).toEqual([]);
    const stages = out.exchanges
      .filter((ex) => ex.match?.stage === 'oauth')
      .map((ex) => [ex.request.method, ex.request.path.replace(/\/remote\/mcp/, '')]);
    expect(stages).toContainEqual(['POST', '/.oauth/register']);
    expect(stages).toContainEqual(['POST', '/.oauth/token']);
    // The replay's own codes and tokens are redacted on the replay tape as the recording's were.
    const text = readFileSync(path.join(dir, 'oauth-replay.jsonl'), 'utf8');
    for (const secret of replayed.seen) expect(text).not.toContain(secret);
  });

  it('takes any well-formed bearer token: a client holding one from another run goes straight to its calls', async () => {
    const provider = new InMemoryOAuthClient();
    provider.saveTokens({ access_token: 'a-token-from-yesterday', token_type: 'Bearer' });
    const echo = await replaying('oauth-token', async (url) => {
      const client = new Client({ name: 'oauth-agent', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
      const r = (await client.callTool({ name: 'echo', arguments: { text: 'hello' } })) as { content: { text: string }[] };
      await client.close();
      return r.content[0]?.text;
    });
    expect(echo).toBe('hello');
  });

  it('no token, code, verifier or secret the servers issued or the client made is on any tape, nor in its HAR or trace', async () => {
    const secrets = [...new Set([...servers.issued, ...recorded.seen])];
    // Client secrets, registration access tokens, codes, access and refresh tokens; the client's verifiers.
    expect(servers.issued.length).toBeGreaterThanOrEqual(8);
    expect(recorded.seen.length).toBeGreaterThanOrEqual(6);
    const tapes = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
    expect(tapes.length).toBeGreaterThanOrEqual(2);
    for (const f of tapes) {
      const tape = await loadTape(dir, f.replace(/\.jsonl$/, ''));
      const outputs = {
        tape: readFileSync(path.join(dir, f), 'utf8'),
        har: JSON.stringify(toHar(tape)),
        otlp: otlpJson(tapeSpans(tape)),
      };
      for (const [what, text] of Object.entries(outputs))
        for (const s of secrets) expect(text.includes(s), `${f} (${what}) holds ${s.slice(0, 6)}...`).toBe(false);
    }
  });
});
