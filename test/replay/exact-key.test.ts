/**
 * The exact key (src/replay/exact-key.ts) as replay uses it, by its public behaviour: two requests that mean the same
 * get the same key, any difference that changes the meaning gets another.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  canonicalBody,
  DEFAULT_IGNORED_FIELDS,
  exactKey,
  queryKey,
  stripFields,
  withoutSecrets,
  type KeyedRequest,
} from '../../src/replay/exact-key.js';
import { indexKey } from '../../src/engine/tape-session.js';
import { STREAMED_BODY_BYTES } from '../../src/tape/large-body.js';
import type { Body } from '../../src/tape/schema.js';

const KEY = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';

function req(body: Body, over: Partial<KeyedRequest['request']> = {}, route = '/openai'): KeyedRequest {
  return { route, request: { method: 'POST', path: '/v1/chat/completions', query: [], body, ...over } };
}
const json = (value: unknown): Body => ({ kind: 'json', json: value });

describe('exactKey', () => {
  it('is the same for the same request whatever the order of its JSON keys and query parameters', () => {
    const a = req(json({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], temperature: 0 }), {
      query: [
        ['b', '2'],
        ['a', '1'],
      ],
    });
    const b = req(json({ temperature: 0, messages: [{ content: 'hi', role: 'user' }], model: 'gpt-4o' }), {
      query: [
        ['a', '1'],
        ['b', '2'],
      ],
    });
    expect(exactKey(a)).toBe(exactKey(b));
    expect(exactKey(a, {})).toBe(exactKey({ ...a, request: { ...a.request, method: 'post' } }));
  });

  it('differs when the method, route, path, query or body differs', () => {
    const base = req(json({ model: 'gpt-4o', n: 1 }));
    const keys = [
      base,
      { ...base, request: { ...base.request, method: 'PUT' } },
      { ...base, route: '/other' },
      { ...base, request: { ...base.request, path: '/v1/responses' } },
      { ...base, request: { ...base.request, query: [['a', '1']] as [string, string][] } },
      req(json({ model: 'gpt-4o', n: 2 })),
      req(json([{ model: 'gpt-4o', n: 1 }])),
      req({ kind: 'text', text: 'model=gpt-4o&n=1' }),
    ].map((r) => exactKey(r));
    expect(new Set(keys).size).toBe(keys.length);
    // JSON sent as text is the same request as that JSON.
    expect(exactKey(req({ kind: 'text', text: '{"n":1, "model":"gpt-4o"}' }))).toBe(exactKey(base));
  });

  it('leaves out JSON-RPC ids and _meta, but keeps an id outside JSON-RPC', () => {
    const call = (id: number, meta: unknown): Body =>
      json({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'add', arguments: { a: 1 }, _meta: meta } });
    expect(exactKey(req(call(1, { progressToken: 'p1' }), {}, '/mcp'))).toBe(exactKey(req(call(42, { progressToken: 'p9' }), {}, '/mcp')));
    expect(exactKey(req(json({ id: 1, q: 'x' })))).not.toBe(exactKey(req(json({ id: 2, q: 'x' }))));
    // A batch: each message's id is left out.
    expect(exactKey(req(json([call(1, undefined), call(2, undefined)].map((b) => (b as { json: unknown }).json))))).toBe(
      exactKey(req(json([call(7, undefined), call(8, undefined)].map((b) => (b as { json: unknown }).json)))),
    );
  });

  it('leaves out the fields and query parameters it is told to, and secret query parameters always', () => {
    const a = req(json({ model: 'm', user: 'u1', meta: { trace: 't1', keep: 1 } }), { query: [['api_key', 'secret-1']] });
    const b = req(json({ model: 'm', user: 'u2', meta: { trace: 't2', keep: 1 } }), { query: [['API_KEY', 'secret-2']] });
    expect(exactKey(a)).not.toBe(exactKey(b));
    expect(exactKey(a, { ignoreFields: ['user', 'meta.trace'] })).toBe(exactKey(b, { ignoreFields: ['user', 'meta.trace'] }));
    expect(exactKey(a, { ignoreFields: ['user', 'meta.*'] })).toBe(exactKey(b, { ignoreFields: ['user', 'meta.*'] }));
    const withRun = (run: string): KeyedRequest => req(json({ model: 'm' }), { query: [['run', run]] });
    expect(exactKey(withRun('1'))).not.toBe(exactKey(withRun('2')));
    expect(exactKey(withRun('1'), { ignoreQuery: ['RUN'] })).toBe(exactKey(withRun('2'), { ignoreQuery: ['run'] }));
  });

  it('gives a request carrying a secret the key of the recording that carries its redaction marker', () => {
    const live = req(json({ model: 'm', messages: [{ role: 'user', content: `my key is ${KEY}` }] }));
    const taped = req(json({ model: 'm', messages: [{ role: 'user', content: 'my key is [REDACTED:3]' }] }));
    expect(exactKey(live)).toBe(exactKey(taped));
    expect(exactKey(live)).not.toContain(KEY);
    expect(exactKey(req(json({ model: 'm', messages: [{ role: 'user', content: 'my key is sk-nothing' }] })))).not.toBe(exactKey(taped));
    // In the path and in text bodies too.
    expect(exactKey(req({ kind: 'text', text: `key=${KEY}` }, { path: `/v1/${KEY}` }))).toBe(
      exactKey(req({ kind: 'text', text: 'key=[REDACTED:1]' }, { path: '/v1/[REDACTED:2]' })),
    );
  });
});

describe('indexKey (the exact_key column of a database store)', () => {
  it('is the sha256, in hex, of the exact key: what a query can compute for a request', () => {
    const r = req(json({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }));
    expect(exactKey(r)).toBe('POST /openai/v1/chat/completions?\n{"messages":[{"content":"hi","role":"user"}],"model":"gpt-4o"}');
    expect(indexKey({ ...r, seq: 0 } as unknown as Parameters<typeof indexKey>[0])).toBe(
      createHash('sha256').update(exactKey(r)).digest('hex'),
    );
  });

  it('keys under the options replay matches with: a configured ignored field is not a difference in the index either', () => {
    const a = req(json({ model: 'gpt-4o', metadata: { run: 'a1' }, messages: [{ role: 'user', content: 'hi' }] }));
    const b = req(json({ model: 'gpt-4o', metadata: { run: 'b2' }, messages: [{ role: 'user', content: 'hi' }] }));
    const asExchange = (r: typeof a): Parameters<typeof indexKey>[0] => ({ ...r, seq: 0 }) as unknown as Parameters<typeof indexKey>[0];
    const keyed = { ignoreFields: [...DEFAULT_IGNORED_FIELDS, 'metadata.run'] };
    expect(indexKey(asExchange(a))).not.toBe(indexKey(asExchange(b)));
    expect(indexKey(asExchange(a), keyed)).toBe(indexKey(asExchange(b), keyed));
    expect(indexKey(asExchange(a), keyed)).toBe(createHash('sha256').update(exactKey(b, keyed)).digest('hex'));
  });
});

describe('canonicalBody', () => {
  it('keys a body too large to hold by the sha256 of its bytes, stored or read back whole', () => {
    const text = 'x'.repeat(STREAMED_BODY_BYTES + 1);
    const sha = createHash('sha256').update(text).digest('hex');
    const stored: Body = { kind: 'file', file: `t.files/${sha}.txt`, encoding: 'text', bytes: text.length, sha256: sha };
    expect(canonicalBody({ kind: 'text', text })).toBe(`sha256:${sha}`);
    expect(canonicalBody(stored)).toBe(`sha256:${sha}`);
    expect(canonicalBody({ kind: 'base64', base64: Buffer.from(text).toString('base64') })).toBe(`sha256:${sha}`);
  });

  it('writes small bodies as they are: stable JSON, text, base64, empty', () => {
    expect(canonicalBody(json({ b: 1, a: [2, { d: 1, c: 0 }] }))).toBe('{"a":[2,{"c":0,"d":1}],"b":1}');
    expect(canonicalBody({ kind: 'text', text: 'plain' })).toBe('plain');
    expect(canonicalBody({ kind: 'base64', base64: 'AAEC' })).toBe('base64:AAEC');
    expect(canonicalBody({ kind: 'empty' })).toBe('');
  });
});

describe('the helpers replay reports use', () => {
  it('stripFields copies: the input is left as it was', () => {
    const input = { jsonrpc: '2.0', id: 3, params: { _meta: { x: 1 }, a: 1 } };
    const before = structuredClone(input);
    expect(stripFields(input, ['jsonrpc:id', 'params._meta'])).toEqual({ jsonrpc: '2.0', params: { a: 1 } });
    expect(input).toEqual(before);
    expect(stripFields({ id: 3 }, ['jsonrpc:id'])).toEqual({ id: 3 });
  });

  it('queryKey sorts and encodes; withoutSecrets leaves a text without secrets as it is', () => {
    expect(
      queryKey([
        ['z', 'a b'],
        ['key', 'k'],
        ['a', 'é'],
      ]),
    ).toBe('a=%C3%A9&z=a%20b');
    expect(withoutSecrets('nothing to see')).toBe('nothing to see');
    expect(withoutSecrets(`Bearer ${KEY}`)).not.toContain(KEY);
  });
});
