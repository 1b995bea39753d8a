import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSecretDetector, createMarkerReplacer } from '../../../src/tape/redaction/secrets.js';
import { createTapeWriter, type NewExchange } from '../../../src/tape/stores/tape-writer.js';
import { readTape } from '../../../src/tape/tape-reader.js';

// Fake credentials in the real shapes (none of them is live).
export const GHP = 'ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
export const AKIA = 'AKIAQ3ZLMXB4RT7W2KJN';
export const JWT =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
export const OPENAI = 'sk-proj-Xq2Lw9Zt4Rb7Nc1Vh8Jk3Mp6Sd0Fg5Yu2Ie7Oa9Wr4Tb1';
export const ANTHROPIC = 'sk-ant-api03-Zx9Wv8Ut7Sr6Qp5On4Ml3Kj2Ih1Gf0Ed9Cb8Aa7Zy6Xw5Vu4';
export const GOOGLE = 'AIzaSyD4x7Qm2Wn9Lp3Kc8Vb1Hj6Gf5Ds0Ra2Te';
export const SLACK = 'xoxb-1234567890-9876543210-AbCdEfGhIjKlMnOpQrStUvWx';
const PEM =
  '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1c4xQ2bQ9Y8\nZk3Jq7Lm2Np5Rs8Tv1Wx4Yz7Ab0Cd3Ef6\n-----END RSA PRIVATE KEY-----';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-secrets-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const base = (request: Partial<NewExchange['request']>, response?: NewExchange['response']): NewExchange => ({
  startedAt: new Date().toISOString(),
  offsetMs: 1,
  transport: 'http',
  route: '/api',
  request: {
    method: 'POST',
    path: '/v1/x',
    query: [],
    headers: { 'content-type': 'application/json' },
    body: { kind: 'empty' },
    ...request,
  },
  ...(response ? { response } : {}),
  timing: { durationMs: 1 },
});

async function writeAndRead(exchanges: NewExchange[], redact = {}): Promise<{ text: string; files: string }> {
  const w = await createTapeWriter({ dir, name: 't', header: { mode: 'record', routes: [] }, redact });
  for (const ex of exchanges) await w.append(ex);
  await w.close();
  const sideDir = path.join(dir, 't.files');
  let files = '';
  try {
    for (const f of readdirSync(sideDir)) files += readFileSync(path.join(sideDir, f), 'utf8');
  } catch {
    // no side files
  }
  return { text: readFileSync(path.join(dir, 't.jsonl'), 'utf8'), files };
}

describe('secrets inside bodies', () => {
  it('redacts secret-named fields at any depth, both sides, MCP tools/call arguments and an OAuth response', async () => {
    const { text } = await writeAndRead([
      base({
        body: {
          kind: 'json',
          json: {
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: {
              name: 'deploy',
              arguments: { api_key: 'hunter2-plain', nested: [{ Password: 'p@ss w0rd' }], github: GHP, aws: AKIA },
            },
          },
        },
      }),
      base(
        {
          path: '/oauth/token',
          body: { kind: 'text', text: 'grant_type=refresh_token&client_id=abc&client_secret=s3cr3t-value&refresh_token=rt-123' },
        },
        {
          status: 200,
          headers: {},
          body: {
            kind: 'json',
            json: { access_token: 'at-very-secret', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt-456', id_token: JWT },
          },
        },
      ),
    ]);
    for (const secret of ['hunter2-plain', 'p@ss w0rd', GHP, AKIA, 's3cr3t-value', 'rt-123', 'at-very-secret', 'rt-456', JWT])
      expect(text).not.toContain(secret);
    const tape = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    const args = (tape[1] as { request: { body: { json: { params: { arguments: Record<string, unknown> } } } } }).request.body.json.params
      .arguments;
    expect(args).toEqual({ api_key: '[REDACTED:1]', nested: [{ Password: '[REDACTED:2]' }], github: '[REDACTED:3]', aws: '[REDACTED:4]' });
    // Ordinary fields stay: the grant type, the client id, token_type, expires_in.
    expect(text).toContain('grant_type=refresh_token&client_id=abc&client_secret=[REDACTED:');
    expect(text).toContain('"token_type":"Bearer","expires_in":3600');
  });

  it('gives the same secret the same marker within a tape, and a new one a new number; appending numbers on', async () => {
    const ask = (key: string): NewExchange => base({ body: { kind: 'json', json: { prompt: `use ${key} please`, api_key: key } } });
    const w = await createTapeWriter({ dir, name: 'm', header: { mode: 'record', routes: [] } });
    await w.append(ask(GHP));
    await w.append(ask(OPENAI));
    await w.append(ask(GHP));
    await w.close();
    const appended = await createTapeWriter({ dir, name: 'm', ifExists: 'append', header: { mode: 'record', routes: [] } });
    await appended.append(ask(GOOGLE));
    await appended.close();
    const bodies = (await readTape(path.join(dir, 'm.jsonl'))).exchanges.map((e) => (e.request.body as { json: unknown }).json);
    expect(bodies).toEqual([
      { prompt: 'use [REDACTED:1] please', api_key: '[REDACTED:1]' },
      { prompt: 'use [REDACTED:2] please', api_key: '[REDACTED:2]' },
      { prompt: 'use [REDACTED:1] please', api_key: '[REDACTED:1]' },
      { prompt: 'use [REDACTED:3] please', api_key: '[REDACTED:3]' },
    ]);
  });

  it('redacts credential values in SSE data, raw and tail, in JSON inside strings, and in side files', async () => {
    const big = 'x'.repeat(2 * 1024 * 1024);
    const { text, files } = await writeAndRead(
      [
        base(
          { body: { kind: 'json', json: { messages: [{ role: 'user', content: `key ${ANTHROPIC}` }] } } },
          {
            status: 200,
            headers: { 'content-type': 'text/event-stream' },
            events: [
              { offsetMs: 1, data: JSON.stringify({ delta: { text: `here: ${SLACK}` } }) },
              { offsetMs: 2, data: JSON.stringify({ tool: { arguments: JSON.stringify({ password: 'pw-in-args', q: 'ok' }) } }) },
              { offsetMs: 3, data: `{"a":"${GOOGLE}"}`, raw: `data:{"a":"${GOOGLE}"}\r\n\r\n` },
            ],
            tail: `data: {"secret": "tail-secret", "pem": ${JSON.stringify(PEM)}`,
          },
        ),
        base({
          body: {
            kind: 'json',
            json: { doc: big, credentials: { aws_secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY' }, note: OPENAI },
          },
        }),
      ],
      {},
    );
    for (const secret of [ANTHROPIC, SLACK, 'pw-in-args', GOOGLE, 'tail-secret', 'MIIEowIBAAKCAQEA1c4xQ2bQ9Y8', 'wJalrXUtnFEMI', OPENAI]) {
      expect(text).not.toContain(secret);
      expect(files).not.toContain(secret);
    }
    expect(files.length).toBeGreaterThan(big.length);
    expect(files).toContain('"aws_secret_access_key":"[REDACTED:');
    const tape = await readTape(path.join(dir, 't.jsonl'));
    expect(tape.problems).toEqual([]);
    const events = tape.exchanges[0]!.response!.events!;
    // The same secret in `data` and `raw` gets the same marker, so the event still serialises consistently.
    expect(events[2]!.data).toBe('{"a":"[REDACTED:4]"}');
    expect(events[2]!.raw).toBe('data:{"a":"[REDACTED:4]"}\r\n\r\n');
    expect(JSON.parse(JSON.parse(events[1]!.data).tool.arguments)).toEqual({ password: '[REDACTED:3]', q: 'ok' });
  });

  it('leaves real provider bodies alone: ids, tool-call ids, UUIDs, logprob tokens, usage, signatures, tool schemas', async () => {
    const detector = createSecretDetector();
    const bodies: unknown[] = [
      {
        id: 'chatcmpl-AqZx8yBv3Lk2Mn9Pq4Rs7Tu1Vw',
        object: 'chat.completion',
        system_fingerprint: 'fp_44709d6fcb',
        choices: [
          {
            message: {
              role: 'assistant',
              content: 'The task-management-system-design doc is at https://example.com/docs?id=550e8400-e29b-41d4-a716-446655440000',
              tool_calls: [
                {
                  id: 'call_Zq8WmX2vLk4Rn7Tp1Ys3Ub6Hc',
                  type: 'function',
                  function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
                },
              ],
            },
            logprobs: {
              content: [{ token: 'Hello', logprob: -0.01, bytes: [72, 101], top_logprobs: [{ token: ' Hi', logprob: -4.2, bytes: [32] }] }],
            },
          },
        ],
        usage: { prompt_tokens: 19, completion_tokens: 10, total_tokens: 29, completion_tokens_details: { reasoning_tokens: 0 } },
      },
      {
        id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
        type: 'message',
        content: [
          {
            type: 'thinking',
            thinking: 'Let me think about the max_tokens budget.',
            signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds7RM8a5qXh0EQmY8R0y4ibTkPUR3Crn2TkE9sXQ3VuGZ2SF3uXWiM3Mk3Gx',
          },
          { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { location: 'San Francisco' } },
        ],
        usage: { input_tokens: 2095, output_tokens: 503, cache_read_input_tokens: 0 },
      },
      {
        jsonrpc: '2.0',
        id: 2,
        result: {
          tools: [
            {
              name: 'login',
              description: 'Log in with a password and an API token',
              inputSchema: {
                type: 'object',
                properties: { password: { type: 'string' }, token: { type: 'string', minLength: 8 } },
                required: ['password'],
              },
            },
          ],
          _meta: { progressToken: 'abc-123' },
        },
      },
      {
        candidates: [{ content: { parts: [{ text: 'Asia and Europe' }], role: 'model' } }],
        usageMetadata: { promptTokenCount: 4, totalTokenCount: 9 },
      },
      { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.0023, -0.0091] }], model: 'text-embedding-3-small' },
    ];
    for (const body of bodies) {
      const replace = createMarkerReplacer();
      expect(detector.redact(body, replace)).toBe(body);
    }
    // A whole line of a streamed answer: nothing for the prefilter to find, so the walk never runs.
    const chunk = `{"id":"chatcmpl-stream1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"one"},"finish_reason":null}],"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16}}`;
    expect(detector.mayHold(chunk)).toBe(false);
  });

  it('is configured by redact: extra field names, value rules off, extra value rules', async () => {
    const ex = base({ body: { kind: 'json', json: { pin_code: '4711', note: GHP, internal: 'corp-tok-ABCDEF123456' } } });
    const custom = await writeAndRead([ex], {
      fields: ['pinCode'],
      values: false,
      rules: [{ id: 'corp', regex: 'corp-tok-[A-Z0-9]{12}' }],
    });
    expect(custom.text).not.toContain('4711');
    expect(custom.text).toContain(GHP); // value rules off
    expect(custom.text).not.toContain('corp-tok-ABCDEF123456');
  });
});
