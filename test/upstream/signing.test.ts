/**
 * The signing seam end to end (`src/providers/signing.ts`): a provider added through the registry with a signer (the
 * tests' HMAC one, shaped like SigV4) and an upstream that refuses any request whose signature does not cover what
 * arrived. The client signs for tapedeck's address with its own secret, as an AWS SDK would; tapedeck signs every
 * forwarded request again with its own: when recording, when `--llm live` rewrites the body, and when drift sends the
 * tape's calls again. Neither signature ever reaches a tape.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDrift } from '../../src/drift/run-drift.js';
import { startProxy } from '../../src/front/server.js';
import { createLogger } from '../../src/log.js';
import { registerProvider } from '../../src/providers/registry.js';
import type { ProviderAdapter } from '../../src/providers/types.js';
import { createDirStore } from '../../src/tape/stores/dir-store.js';
import { createLlmLiveResponder } from '../../src/transports/http/llm-live.js';
import { hmacSigner, verifyHmac } from '../providers/hmac-signer.js';
import { readBody, startLocalServer, type LocalServer } from '../helpers/local-server.js';

const log = createLogger('silent');
const SECRET = 'tapedecks-own-secret-for-signing';
const CLIENT_SIGNATURE = 'TEST-HMAC key=client, signature=client-signature-for-tapedecks-address';
let dir: string;
let server: LocalServer;
let upstream: string;
let unregister: () => void;
/** Every request the upstream got: whether its signature held, the model it asked for, its authorization. */
const seen: { valid: boolean; model: unknown; authorization: string }[] = [];

const signed: ProviderAdapter = {
  api: 'signed.invoke',
  provider: { name: 'signedco', signer: hmacSigner(SECRET) },
  detect: ({ path, method }) => (method === 'POST' && path.startsWith('/model/') ? 'signedco' : undefined),
  describeRequest: (body) => ({ model: typeof body.model === 'string' ? body.model : undefined, streamed: false }),
  describeBody(answer, body) {
    answer.text += typeof body.said === 'string' ? body.said : '';
  },
  describeEvent: () => undefined,
  conversation: () => [],
  errorBody: (status, type, message) => ({ message, type, status }),
  applyOverrides(body, path, o) {
    const applied: Record<string, { from: unknown; to: unknown }> = {};
    if (o.model !== undefined) {
      applied.model = { from: body.model, to: o.model };
      body.model = o.model;
    }
    return { body, path, applied };
  },
};

beforeAll(async () => {
  unregister = registerProvider(signed);
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-signing-'));
  server = await startLocalServer((req, res) => {
    void readBody(req).then((body) => {
      const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
      const valid = verifyHmac(SECRET, { method: req.method ?? 'GET', url, headers: req.headers, body });
      const model = (JSON.parse(body.toString() || '{}') as { model?: unknown }).model;
      seen.push({ valid, model, authorization: String(req.headers.authorization) });
      if (!valid) {
        res.writeHead(403, { 'content-type': 'application/json' }).end('{"message":"signature does not match"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ said: `hello from ${String(model)}` }));
    });
  });
  upstream = server.url;
});
afterAll(async () => {
  unregister();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** POST a call as a client that signed it for tapedeck's address with its own secret. */
async function invoke(base: string, model: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}/signed/model/${model}/invoke`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: CLIENT_SIGNATURE,
      'x-test-date': '2001-01-01T00:00:00.000Z',
      'x-test-content-sha256': 'client-hash',
    },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, body: await res.json() };
}

/** Every file of the tapes folder, as text. */
function allTapeText(): string {
  return readdirSync(dir, { recursive: true })
    .map((f) => path.join(dir, String(f)))
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
}

describe('a provider that signs its requests', () => {
  it('gets each forwarded request signed again by tapedeck: record, --llm live with a new body, drift', async () => {
    const routes = [{ prefix: '/signed', upstream }];
    const rec = await startProxy({ mode: 'record', tape: 'signed', dir, port: 0, log, routes });
    const recorded = await invoke(rec.url, 'm1');
    await rec.close();
    expect(recorded).toEqual({ status: 200, body: { said: 'hello from m1' } });

    // --llm live with another model: the body changes, so only a new signature can pass.
    const replay = await startProxy({
      mode: 'replay',
      tape: 'signed',
      dir,
      port: 0,
      log,
      routes: [],
      saveAs: 'signed-live',
      responders: [createLlmLiveResponder({ model: 'm2' })],
    });
    const live = await invoke(replay.url, 'm1');
    await replay.close();
    expect(live).toEqual({ status: 200, body: { said: 'hello from m2' } });

    const report = await runDrift({ store: createDirStore(dir), tape: 'signed', costOf: () => null, env: {} });
    expect(report.calls).toHaveLength(1);
    expect(report.dropped).toEqual([]);

    expect(seen.map((s) => [s.valid, s.model])).toEqual([
      [true, 'm1'],
      [true, 'm2'],
      [true, 'm1'],
    ]);
    // Neither the client's signature nor tapedeck's is on any tape.
    const text = allTapeText();
    expect(text).not.toContain('client-signature');
    expect(text).not.toContain('client-hash');
    for (const s of seen) expect(text).not.toContain(s.authorization.split('signature=')[1]);
    const tape = await createDirStore(dir).load('signed');
    expect(tape.exchanges[0]?.request.headers).toMatchObject({ authorization: '[REDACTED]', 'x-test-date': '[REDACTED]' });
  });

  it('a signer that cannot sign: the client is told so, and nothing is sent', async () => {
    const failing = registerProvider({
      ...signed,
      provider: { name: 'signedco', signer: { ...hmacSigner(SECRET), sign: () => Promise.reject(new Error('no credentials found')) } },
    });
    const before = seen.length;
    try {
      const rec = await startProxy({ mode: 'record', tape: 'unsigned', dir, port: 0, log, routes: [{ prefix: '/signed', upstream }] });
      const res = await invoke(rec.url, 'm1');
      await rec.close();
      expect(res.status).toBe(502);
      expect(JSON.stringify(res.body)).toContain('could not sign the request (test-hmac): no credentials found');
      expect(seen.length).toBe(before);
      const tape = await createDirStore(dir).load('unsigned');
      expect(tape.exchanges[0]?.error?.code).toBe('SIGNING_FAILED');
    } finally {
      failing();
    }
  });
});
