import { describe, expect, it } from 'vitest';
import { decodeBody } from '../../src/tape/body.js';
import type { Exchange } from '../../src/tape/schema.js';
import { serializeExchange } from '../../src/tape/serialize.js';

const exchange = (): Exchange => ({
  type: 'exchange',
  id: '000001',
  seq: 1,
  startedAt: '2026-11-23T10:00:00.000Z',
  offsetMs: 1.5,
  transport: 'http',
  route: '/openai',
  request: { method: 'POST', path: '/v1/chat/completions', query: [], headers: {}, body: { kind: 'json', json: { model: 'm', n: 1 } } },
  response: {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: { kind: 'json', json: { id: 'x', big: 12345678901234, s: 'é\n"' } },
  },
  timing: { durationMs: 2 },
});

describe('serializeExchange', () => {
  it('writes the same line whether or not replay has just sent the body (its JSON text is reused)', () => {
    const ex = exchange();
    const before = serializeExchange(ex);
    decodeBody(ex.response?.body);
    decodeBody(ex.request.body);
    expect(serializeExchange(ex)).toBe(before);
    expect(JSON.parse(before)).toEqual(ex);
  });

  it('writes keys in schema order however the record was built', () => {
    const ex = exchange();
    const shuffled = {
      timing: { durationMs: 2, ttfbMs: 1 },
      response: { body: ex.response?.body, headers: {}, status: 200 },
      request: { body: ex.request.body, headers: {}, query: [], path: '/p', method: 'GET' },
      seq: 1,
      id: '000001',
      type: 'exchange',
      startedAt: ex.startedAt,
      offsetMs: 0,
      transport: 'http',
      route: '/r',
      llm: { toolCalls: [], streamed: false, params: {}, model: 'm', api: 'chat.completions', provider: 'openai', extra: 1 },
    } as unknown as Exchange;
    const line = serializeExchange(shuffled);
    expect(line.startsWith('{"type":"exchange","id":"000001","seq":1,"startedAt"')).toBe(true);
    expect(line).toContain('"request":{"method":"GET","path":"/p","query":[],"headers":{},"body":{"kind":"json"');
    expect(line).toContain('"timing":{"ttfbMs":1,"durationMs":2}');
    expect(line).toContain(
      '"llm":{"provider":"openai","api":"chat.completions","model":"m","params":{},"streamed":false,"toolCalls":[],"extra":1}',
    );
  });
});
