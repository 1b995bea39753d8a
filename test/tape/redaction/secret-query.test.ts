/**
 * Query parameters named as credentials: redacted on the tape in any spelling (`api-key`, `api_key`, `apiKey`),
 * left out of the exact key so that a replay with another key matches, and shown as `***` in printed URLs. Look-alikes
 * that are not credentials (a pagination cursor, a token count) stay readable and keep distinguishing requests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AzureOpenAI } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { startProxy } from '../../../src/front/server.js';
import { queryKey } from '../../../src/replay/exact-key.js';
import { createRedactor, REDACTED } from '../../../src/tape/redaction/redact.js';
import { secretQueryMatcher } from '../../../src/tape/redaction/secret-query.js';
import { readTape } from '../../../src/tape/tape-reader.js';
import { redactUrlCredentials } from '../../../src/tape/redaction/url-credentials.js';
import { openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../../helpers/scripted-upstream.js';

/** Credentials APIs take in the query, as they are spelled there. */
const SECRETS = [
  'key', // Gemini, Google APIs
  'api-key', // Azure OpenAI (Realtime from a browser)
  'api_key',
  'apiKey',
  'apikey', // Supabase
  'subscription-key', // Azure API Management
  'Ocp-Apim-Subscription-Key',
  'access_token', // OAuth 2, Gemini Live ephemeral tokens
  'token',
  'Authorization', // Azure OpenAI Realtime from a browser with a token provider
  'auth', // Firebase
  'client_secret',
  'password',
  'sig', // Azure SAS
  'signature',
  'X-Amz-Signature',
  'X-Amz-Security-Token',
  'X-Goog-Signature',
];
/** Parameters that only look like it. */
const READABLE = [
  'model',
  'api-version',
  'deployment',
  'pageToken',
  'page_token',
  'next_token',
  'max_tokens',
  'X-Amz-Credential',
  'X-Amz-Date',
  'keys',
  'monkey',
  'se',
  'sp',
  'sv',
  'alt',
];

describe('query parameter names', () => {
  const secret = secretQueryMatcher();
  it.each(SECRETS)('%s holds a credential', (name) => expect(secret(name)).toBe(true));
  it.each(READABLE)('%s stays readable', (name) => expect(secret(name)).toBe(false));

  it('the redactor redacts them (request query and URLs) and keeps the look-alikes', () => {
    const r = createRedactor({ query: ['my_gateway_pass'] });
    const query = [...SECRETS, ...READABLE, 'myGatewayPass'].map((k): [string, string] => [k, `value-of-${k}`]);
    const out = r.exchange({
      type: 'exchange',
      id: '000000',
      seq: 0,
      startedAt: '2026-01-01T00:00:00.000Z',
      offsetMs: 0,
      transport: 'http',
      route: '/x',
      request: { method: 'GET', path: '/', query, headers: {}, body: { kind: 'empty' } },
      timing: { durationMs: 0 },
    });
    for (const [k, v] of out.request.query) expect(v, k).toBe(READABLE.includes(k) ? `value-of-${k}` : REDACTED);
    expect(r.url('https://x.openai.azure.com/openai?api-version=1&api-key=k1&subscription-key=k2')).toBe(
      'https://x.openai.azure.com/openai?api-version=1&api-key=[REDACTED]&subscription-key=[REDACTED]',
    );
  });

  it('they are left out of the exact key: another key, same key; another cursor, another key', () => {
    const key = (q: [string, string][]): string => queryKey(q);
    expect(
      key([
        ['api-version', '1'],
        ['api-key', 'live-key'],
        ['subscription-key', 'a'],
      ]),
    ).toBe(
      key([
        ['api-version', '1'],
        ['api-key', REDACTED],
        ['subscription-key', '[REDACTED:2]'],
      ]),
    );
    expect(key([['pageToken', 'p1']])).not.toBe(key([['pageToken', 'p2']]));
    // A name the config adds compares the way the redaction does (any case, `-` and `_` ignored).
    expect(queryKey([['myGatewayPass', 'live']], ['my_gateway_pass'])).toBe(queryKey([['myGatewayPass', REDACTED]], ['my_gateway_pass']));
  });

  it('printed URLs show them as ***', () => {
    expect(redactUrlCredentials('could not reach wss://x.azure.com/openai/realtime?api-version=1&api-key=k1&deployment=d (502)')).toBe(
      'could not reach wss://x.azure.com/openai/realtime?api-version=1&api-key=***&deployment=d (502)',
    );
    expect(redactUrlCredentials('https://gw/x?subscription-key=k2&sig=abc%3D&pageToken=p')).toBe(
      'https://gw/x?subscription-key=***&sig=***&pageToken=p',
    );
  });
});

describe('plain HTTP: Azure OpenAI behind API Management (`?subscription-key=`) with the openai SDK', () => {
  let dir: string;
  let upstream: ScriptedUpstream;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-secret-query-'));
    upstream = await startScriptedUpstream(() => openaiChat({ content: 'hi there' }));
  });
  afterAll(async () => {
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ask = async (base: string, subscriptionKey: string): Promise<string | null | undefined> => {
    const client = new AzureOpenAI({
      baseURL: `${base}/azure/openai`,
      apiKey: 'azure-api-key-0001',
      apiVersion: '2024-10-21',
      deployment: 'gpt-4o-mini',
      defaultQuery: { 'subscription-key': subscriptionKey },
      maxRetries: 0,
    });
    const res = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    return res.choices[0]?.message.content;
  };

  it('the key goes upstream, not onto the tape, and a replay with another key matches', async () => {
    const log = createLogger('silent');
    const rec = await startProxy({
      mode: 'record',
      tape: 'apim',
      dir,
      port: 0,
      log,
      routes: [{ prefix: '/azure', upstream: upstream.url }],
    });
    expect(await ask(rec.url, 'apim-subscription-key-0002')).toBe('hi there');
    await rec.close();
    expect(new URL(upstream.requests[0]!.url, 'http://x').searchParams.get('subscription-key')).toBe('apim-subscription-key-0002');
    const tape = await readTape(path.join(dir, 'apim.jsonl'));
    const ex = tape.exchanges[0]!;
    expect(Object.fromEntries(ex.request.query)).toEqual({ 'api-version': '2024-10-21', 'subscription-key': REDACTED });
    expect(ex.request.headers['api-key']).toBe(REDACTED);
    expect(JSON.stringify(tape)).not.toContain('apim-subscription-key-0002');

    const rep = await startProxy({ mode: 'replay', tape: 'apim', dir, port: 0, log, routes: [], saveAs: 'apim-replay' });
    expect(await ask(rep.url, 'another-subscription-key')).toBe('hi there');
    await rep.close();
    expect(upstream.requests).toHaveLength(1);
    const out = await readTape(path.join(dir, 'apim-replay.jsonl'));
    expect(out.exchanges[0]?.match?.kind).toBe('exact');
  });
});
