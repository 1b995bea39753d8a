import { describe, expect, it } from 'vitest';
import { encodeWireBody } from '../../src/tape/body.js';
import { createExchangeEncoder } from '../../src/tape/exchange-encoder.js';
import { ExchangeSchema, type Exchange } from '../../src/tape/schema.js';
import { serializeExchange } from '../../src/tape/serialize.js';
import { RecordedAnswers } from '../../src/transports/http/recorded-answers.js';
import type { NewExchange } from '../../src/tape/store.js';

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
  it('writes a part from the text it came as only while the part is the object that text is of', () => {
    const ex = exchange();
    const body = ex.request.body;
    const wire = { requestBody: { of: body, text: '{"model": "m", "n": 1.0}' } };
    expect(serializeExchange(ex, wire)).toContain('"body":{"kind":"json","json":{"model": "m", "n": 1.0}}');
    // A body replaced (redacted, stored apart, rewritten) is another object: its text is never the old one.
    const changed = { ...ex, request: { ...ex.request, body: { kind: 'json' as const, json: { model: 'other' } } } };
    expect(serializeExchange(changed, wire)).toContain('"body":{"kind":"json","json":{"model":"other"}}');
    expect(JSON.parse(serializeExchange(ex))).toEqual(ex);
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

describe('a JSON body parsed from the wire goes on the line as the text it came as', () => {
  const encode = (body: string): string => {
    const encoder = createExchangeEncoder({ putBlob: () => Promise.reject(new Error('no large bodies here')) });
    const wire = encodeWireBody(Buffer.from(body), 'application/json');
    const ex: NewExchange = { ...exchange(), request: { ...exchange().request, body: wire.body } };
    if (wire.text !== undefined) ex.wire = { requestBody: { of: wire.body, text: wire.text } };
    const out = encoder.encode(ex, 1);
    if (out instanceof Promise) throw new Error('unexpected large body');
    return out.line;
  };

  it('keeps its spelling (the value read back is the same)', () => {
    const text = '{"model": "m", "n": 1.0, "s": "a \\"quoted\\" word\\n"}';
    const line = encode(text);
    expect(line).toContain(`"json":${text}`);
    expect(JSON.parse(line).request.body.json).toEqual(JSON.parse(text));
  });

  it('is stringified again when its text would not fit one line or hides characters behind \\u or \\/ escapes', () => {
    const multiline = '{\n  "model": "m"\n}';
    expect(encode(multiline)).toContain('"json":{"model":"m"}');
    expect(encode('{"url":"https:\\/\\/example.com\\/x"}')).toContain('"json":{"url":"https://example.com/x"}');
    expect(encode('{"s":"\\u00e9"}')).toContain('"json":{"s":"é"}');
  });

  it('never lets a secret through: escaped or plain, it is redacted from the line', () => {
    const secret = 'sk-proj-' + 'a'.repeat(40);
    const escaped = `{"messages":[{"content":"my key is \\u0073${secret.slice(1)}"}]}`;
    const plain = `{"messages":[{"content":"my key is ${secret}"}]}`;
    for (const text of [escaped, plain]) {
      const line = encode(text);
      expect(line).not.toContain(secret);
      expect(line).not.toContain(secret.slice(1));
      expect(line).toContain('[REDACTED:');
    }
  });
});

describe('serializeExchange writes what JSON.stringify writes for a record in schema order', () => {
  it('for numbers of every kind, strings that need escapes, and optional fields', () => {
    const base = exchange();
    const records: Exchange[] = [
      base,
      { ...base, seq: 0, offsetMs: -0, timing: { ttfbMs: 0.1, durationMs: 1e21 } },
      { ...base, route: '/r"\\\n\u2028', upstream: 'http://h', error: { code: 'X', message: 'm\u0000', phase: 'connect' } },
      { ...base, response: { status: 500, headers: { a: 'b' }, events: [{ offsetMs: 1, data: '{"x":1}' }], tail: 'z' } },
    ];
    for (const ex of records) {
      const ordered = Object.fromEntries(
        Object.keys(ExchangeSchema.shape)
          .filter((k) => ex[k as keyof Exchange] !== undefined)
          .map((k) => [k, ex[k as keyof Exchange]]),
      );
      const reference = JSON.stringify(ordered);
      expect(JSON.parse(serializeExchange(ex))).toEqual(JSON.parse(reference));
      expect(serializeExchange(ex)).toBe(reference);
    }
  });
});

describe('a recorded answer replay serves again and again', () => {
  const streamed = (): Exchange => ({
    ...exchange(),
    response: {
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      events: [
        { offsetMs: 1, data: '{"choices":[{"delta":{"content":"Hel"}}]}' },
        { offsetMs: 2, data: '{"choices":[{"delta":{"content":"lo \\"there\\""}}]}' },
        { offsetMs: 3, data: '[DONE]' },
      ],
    },
  });

  it('is written as it would be without its text, from text made once', () => {
    const ex = streamed();
    const plain = serializeExchange(structuredClone(ex));
    const answers = new RecordedAnswers();
    const text = answers.textOf(ex.response!);
    expect(text?.text).toBe(JSON.stringify(ex.response));
    expect(serializeExchange(ex, { response: text })).toBe(plain);
    // The same kept text, not made again.
    expect(answers.textOf(ex.response!)).toBe(text);
    expect(serializeExchange({ ...ex, id: '000002', seq: 2 }, { response: text })).toBe(
      plain.replace('"id":"000001","seq":1', '"id":"000002","seq":2'),
    );
  });

  it('is not kept when it is too large: written whole each time', () => {
    const ex = streamed();
    ex.response?.events?.push({ offsetMs: 5, data: 'x'.repeat(300 * 1024) });
    expect(new RecordedAnswers().textOf(ex.response!)).toBeUndefined();
  });

  it('never lets a secret through, in the answer or in the rest of the line, however often it is written', () => {
    const secret = 'sk-proj-' + 'b'.repeat(40);
    const encoder = createExchangeEncoder({ putBlob: () => Promise.reject(new Error('no large bodies here')) });
    const answers = new RecordedAnswers();
    const encode = (ex: Exchange, seq: number): string => {
      const out = encoder.encode({ ...ex, wire: { response: answers.textOf(ex.response!) } }, seq);
      if (out instanceof Promise) throw new Error('unexpected large body');
      return out.line;
    };
    const leaky = streamed();
    leaky.response?.events?.push({ offsetMs: 4, data: `{"note":"key ${secret}"}` });
    const clean = streamed();
    const asking = { ...clean.request, body: { kind: 'json' as const, json: { content: `use ${secret}` } } };
    for (let seq = 1; seq <= 3; seq++) {
      for (const line of [encode(leaky, seq), encode({ ...clean, request: asking }, seq)]) {
        expect(line).not.toContain(secret);
        expect(line).toContain('[REDACTED:');
      }
      // A clean answer with a clean request stays as it was.
      expect(encode(clean, seq)).toContain('lo \\\\\\"there\\\\\\"');
    }
  });
});
