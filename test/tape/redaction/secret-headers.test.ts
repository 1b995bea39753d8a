import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { startProxy } from '../../../src/front/server.js';
import { createRedactor, REDACTED } from '../../../src/tape/redaction/redact.js';
import { isSecretHeaderName } from '../../../src/tape/redaction/secret-headers.js';
import { readTape } from '../../../src/tape/tape-reader.js';
import { runCliInProcess } from '../../helpers/cli-in-process.js';
import { openaiChat, startScriptedUpstream, type Reply, type ScriptedUpstream } from '../../helpers/scripted-upstream.js';
import { handExchange, handHeader, writeHandTape } from '../../helpers/hand-tape.js';

/** Real header names from providers, gateways and platforms that carry a credential. */
const SECRETS = [
  'Authorization',
  'Proxy-Authorization',
  'x-api-key', // Anthropic
  'api-key', // Azure OpenAI
  'x-goog-api-key', // Gemini
  'x-portkey-api-key',
  'x-portkey-virtual-key',
  'x-litellm-api-key',
  'ocp-apim-subscription-key', // Azure API Management
  'x-functions-key', // Azure Functions
  'helicone-auth',
  'cf-aig-authorization', // Cloudflare AI Gateway
  'cf-access-jwt-assertion', // Cloudflare Access
  'cf-access-client-secret',
  'x-goog-iap-jwt-assertion',
  'x-auth-token',
  'x-auth-key', // Cloudflare
  'x-amz-security-token',
  'x-amz-server-side-encryption-customer-key',
  'private-token', // GitLab
  'x-gitlab-token',
  'x-github-token',
  'x-shopify-access-token',
  'x-access-token',
  'x-refresh-token',
  'x-id-token',
  'x-csrf-token',
  'x-xsrf-token',
  'x-ms-token-aad-access-token',
  'x-client-secret',
  'x-webhook-secret',
  'x-db-password',
  'x-rapidapi-key',
  'dd-api-key', // Datadog
  'x-algolia-api-key',
  'apikey', // Supabase
  'x-apikey',
  'x_api_key',
  'X-Session-Token',
  'x-credentials',
  'cookie',
  'set-cookie',
  'x-bearer',
  'x-my-gateway-auth',
];

/** Real header names that only look like it: they stay readable on the tape. */
const READABLE = [
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-tokens',
  'x-ratelimit-limit-requests',
  'anthropic-ratelimit-tokens-limit',
  'anthropic-ratelimit-tokens-remaining',
  'anthropic-ratelimit-tokens-reset',
  'anthropic-ratelimit-input-tokens-limit',
  'anthropic-ratelimit-input-tokens-remaining',
  'anthropic-ratelimit-output-tokens-reset',
  'anthropic-ratelimit-requests-remaining',
  'openai-processing-ms',
  'openai-organization',
  'openai-project',
  'openai-version',
  'anthropic-organization-id',
  'anthropic-version',
  'anthropic-beta',
  'x-request-id',
  'request-id',
  'x-stainless-lang',
  'x-stainless-retry-count',
  'x-goog-api-client',
  'x-goog-user-project',
  'x-amz-date',
  'x-amz-content-sha256',
  'x-amz-server-side-encryption-customer-key-md5',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
  'idempotency-key',
  'x-idempotency-key',
  'sec-websocket-key',
  'x-cache-key',
  'www-authenticate',
  'x-author',
  'content-type',
  'content-length',
  'retry-after',
  'cf-ray',
  'access-control-allow-headers',
  'keep-alive',
  'x-api-version',
  'api-version',
  'x-key-id',
  'x-tapedeck-match',
];

describe('header names that say they hold a credential', () => {
  it.each(SECRETS)('%s is a secret', (name) => expect(isSecretHeaderName(name)).toBe(true));
  it.each(READABLE)('%s stays readable', (name) => expect(isSecretHeaderName(name)).toBe(false));

  it('the redactor redacts them on both sides and keeps the look-alikes', () => {
    const r = createRedactor();
    const headers = Object.fromEntries([...SECRETS, ...READABLE].map((h) => [h, `value of ${h}`]));
    const out = r.headers(headers);
    for (const h of SECRETS) expect(out[h], h).toBe(REDACTED);
    for (const h of READABLE) expect(out[h], h).toBe(`value of ${h}`);
  });
});

describe('recorded and scanned', () => {
  let dir: string;
  let upstream: ScriptedUpstream;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-secret-headers-'));
    upstream = await startScriptedUpstream(() => ({
      ...(openaiChat({ content: 'hi' }) as Extract<Reply, { kind: 'json' }>),
      headers: { 'x-gateway-session-token': 'tok-response-secret-123', 'x-ratelimit-remaining-tokens': '9000' },
    }));
  });
  afterAll(async () => {
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a gateway key header never reaches the tape; the rate-limit counts do', async () => {
    const proxy = await startProxy({
      mode: 'record',
      tape: 'gateway',
      dir,
      port: 0,
      routes: [{ prefix: '/portkey', upstream: upstream.url }],
      log: createLogger('silent'),
    });
    const res = await fetch(`${proxy.url}/portkey/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-portkey-api-key': 'pk-plain-gateway-key-0001',
        'x-litellm-api-key': 'sk-litellm-0002',
      },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    await proxy.close();
    // The upstream got the real keys.
    expect(upstream.requests[0]?.headers['x-portkey-api-key']).toBe('pk-plain-gateway-key-0001');
    const tape = await readTape(path.join(dir, 'gateway.jsonl'));
    const ex = tape.exchanges[0]!;
    expect(ex.request.headers['x-portkey-api-key']).toBe(REDACTED);
    expect(ex.request.headers['x-litellm-api-key']).toBe(REDACTED);
    expect(ex.response?.headers['x-gateway-session-token']).toBe(REDACTED);
    expect(ex.response?.headers['x-ratelimit-remaining-tokens']).toBe('9000');
  });

  it('tapedeck scan reports such headers on a tape written without the rule', async () => {
    writeHandTape(path.join(dir, 'old.jsonl'), [
      handHeader('old'),
      handExchange(1, {
        route: '/portkey',
        request: {
          method: 'POST',
          path: '/v1/chat/completions',
          query: [],
          headers: { 'x-portkey-api-key': 'pk-plain-gateway-key-0001' },
          body: { kind: 'empty' },
        },
        response: { status: 200, headers: { 'x-ratelimit-remaining-tokens': '9000', 'x-csrf-token': 'abcdef' }, body: { kind: 'empty' } },
      }),
    ]);
    const r = await runCliInProcess(['scan', 'old', '--dir', dir, '--json']);
    expect(r.code, r.stderr).toBe(1);
    const findings = JSON.parse(r.stdout) as { path: string; rule: string }[];
    expect(findings.map((f) => [f.path, f.rule])).toEqual([
      ['request.headers.x-portkey-api-key', 'secret-header'],
      ['response.headers.x-csrf-token', 'secret-header'],
    ]);
  });
});
