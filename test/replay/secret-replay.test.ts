import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/front/server.js';
import { createMatcher } from '../../src/replay/matcher.js';
import { explainCandidates } from '../../src/replay/explain.js';
import { exactKey } from '../../src/replay/exact-key.js';
import { readTape } from '../../src/tape/tape-reader.js';
import type { Exchange } from '../../src/tape/schema.js';
import { lastUserText, openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

const GHP = 'ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
const OTHER_GHP = 'ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2';
const QUERY_KEY = 'AIzaSyD4x7Qm2Wn9Lp3Kc8Vb1Hj6Gf5Ds0Ra2Te';

describe('replay of requests that carried secrets', () => {
  let upstream: ScriptedUpstream;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-secret-replay-'));
    upstream = await startScriptedUpstream((req) => {
      const text = lastUserText(req.body);
      return openaiChat({ content: `done: ${text.length} chars`, usage: [20, 4] });
    });
  });
  afterAll(async () => {
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers exactly through the real proxy when the body carried a secret, with none on any tape or miss report', async () => {
    const routes = [{ prefix: '/openai', upstream: upstream.url }];
    const ask = (client: OpenAI, token: string, extra = '') =>
      client.chat.completions
        .create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: `Clone the repo with token ${token}${extra}` }],
          // A tool definition whose argument is *named* password stays as it is (it is a schema, not a secret).
          tools: [
            { type: 'function', function: { name: 'login', parameters: { type: 'object', properties: { password: { type: 'string' } } } } },
          ],
          metadata: { api_key: 'hunter2' },
        })
        .withResponse();

    const rec = await startProxy({ mode: 'record', tape: 'agent', dir, port: 0, routes });
    const live = new OpenAI({
      apiKey: 'sk-test',
      baseURL: `${rec.url}/openai/v1`,
      maxRetries: 0,
      defaultQuery: { v: '1', key: QUERY_KEY },
    });
    const recorded = await ask(live, GHP);
    await rec.close();
    expect(JSON.stringify(upstream.requests[0]?.body)).toContain(GHP); // the live call kept it

    const tape = await readTape(path.join(dir, 'agent.jsonl'));
    const body = tape.exchanges[0]!.request.body as { json: { messages: { content: string }[]; metadata: unknown; tools: unknown } };
    expect(body.json.messages[0]!.content).toBe('Clone the repo with token [REDACTED:1]');
    expect(body.json.metadata).toEqual({ api_key: '[REDACTED:2]' });
    expect(JSON.stringify(body.json.tools)).toContain('"password":{"type":"string"}');

    // Replay: the agent sends the real secret again (or a rotated one) and is answered exactly.
    const rep = await startProxy({ mode: 'replay', tape: 'agent', dir, port: 0, routes: [], saveAs: 'agent-replay' });
    const client = new OpenAI({
      apiKey: 'sk-other',
      baseURL: `${rep.url}/openai/v1`,
      maxRetries: 0,
      defaultQuery: { v: '1', key: QUERY_KEY },
    });
    const again = await ask(client, GHP);
    expect(again.response.headers.get('x-tapedeck-match')).toBe('exact');
    expect(again.data).toEqual(recorded.data);
    const rotated = await ask(client, OTHER_GHP);
    expect(rotated.response.headers.get('x-tapedeck-match')).toBe('exact');

    // A miss: a changed query and prompt. The report quotes both sides, redacted.
    const missClient = new OpenAI({
      apiKey: 'sk-other',
      baseURL: `${rep.url}/openai/v1`,
      maxRetries: 0,
      defaultQuery: { v: '2', key: QUERY_KEY },
    });
    const miss: unknown = await ask(missClient, GHP, ` (backup ${OTHER_GHP})`).catch((err: unknown) => err);
    await rep.close();
    expect(miss).toBeInstanceOf(OpenAI.APIError);
    const report = JSON.stringify((miss as InstanceType<typeof OpenAI.APIError>).error);
    expect(report).toContain('query:');
    expect(report).toContain('[REDACTED]');
    expect(report).not.toContain(QUERY_KEY);
    expect(report).not.toContain(GHP);
    expect(report).not.toContain('hunter2');

    for (const f of readdirSync(dir)) {
      const text = readFileSync(path.join(dir, f), 'utf8');
      for (const secret of [GHP, OTHER_GHP, QUERY_KEY, 'hunter2']) expect(text).not.toContain(secret);
    }
  });
});

describe('exact key and miss explanations', () => {
  const ex = (body: unknown, query: [string, string][] = []): Exchange => ({
    type: 'exchange',
    id: '000000',
    seq: 0,
    startedAt: '2026-01-01T00:00:00.000Z',
    offsetMs: 0,
    transport: 'http',
    route: '/api',
    request: { method: 'POST', path: '/v1/run', query, headers: {}, body: { kind: 'json', json: body } },
    response: { status: 200, headers: {}, body: { kind: 'json', json: { ok: true } } },
    timing: { durationMs: 1 },
  });

  it('gives a request with the secret and the recording with its marker the same key, position for position', async () => {
    const recorded = ex({ text: 'token [REDACTED:1] and [REDACTED:2]', api_key: '[REDACTED:3]', n: 1 });
    const incoming = ex({ text: `token ${GHP} and ${OTHER_GHP}`, api_key: 'plain-password', n: 1 });
    expect(exactKey(incoming)).toBe(exactKey(recorded));
    // Not a blanket pass: a secret in another place, or another value elsewhere, is another request.
    expect(exactKey(ex({ text: `token and ${GHP} ${OTHER_GHP}`, api_key: 'x', n: 1 }))).not.toBe(exactKey(recorded));
    expect(exactKey(ex({ ...(incoming.request.body as { json: object }).json, n: 2 }))).not.toBe(exactKey(recorded));
    const form = (s: string): Exchange => ({ ...ex(null), request: { ...ex(null).request, body: { kind: 'text', text: s } } });
    expect(exactKey(form('grant_type=password&password=[REDACTED:4]'))).toBe(exactKey(form('grant_type=password&password=pa55')));
    const outcome = await createMatcher([recorded]).match({ route: '/api', request: incoming.request });
    expect(outcome.kind).toBe('exact');
  });

  it('quotes only redacted values from both sides in a miss report', () => {
    const recorded = ex({ prompt: `use ${GHP}`, password: 'recorded-pw', n: 1 }, [['key', 'rec-query-secret']]);
    const incoming = ex({ prompt: `use ${OTHER_GHP} now`, password: 'incoming-pw', n: 2 }, [
      ['key', 'incoming-query-secret'],
      ['v', '2'],
    ]);
    const [c] = explainCandidates(incoming, [recorded], 3);
    const text = c!.differences.join('\n');
    expect(text).toContain('body.n: 1 vs 2');
    expect(text).toContain('body.prompt: "use [REDACTED]" vs "use [REDACTED] now"');
    expect(text).toContain('query: [["key","[REDACTED]"]] vs [["key","[REDACTED]"],["v","2"]]');
    for (const secret of [GHP, OTHER_GHP, 'recorded-pw', 'incoming-pw', 'rec-query-secret', 'incoming-query-secret'])
      expect(text).not.toContain(secret);
  });
});
