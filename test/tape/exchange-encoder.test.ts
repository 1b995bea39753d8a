/**
 * What every store's writer does to an exchange before it stores it (src/tape/exchange-encoder.ts), by its public
 * behaviour: the record and its line, redaction, large bodies stored apart, stored bodies read back and checked.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  blobMismatch,
  createExchangeEncoder,
  exchangeId,
  inlineBody,
  storedBody,
  type EncodedExchange,
  type PutBlob,
} from '../../src/tape/exchange-encoder.js';
import { linesOf, parseTapeRecords } from '../../src/tape/tape-reader.js';
import { newTapeHeader } from '../../src/tape/exchange-encoder.js';
import type { Body, WsFrame } from '../../src/tape/schema.js';
import type { NewExchange, StoredBody } from '../../src/tape/store.js';

const KEY = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';
const OTHER_KEY = 'sk-proj-zyxwvutsrqponmlkjihgfedcba9876543210';

function input(requestBody: Body, responseBody: Body = { kind: 'json', json: { ok: true } }): NewExchange {
  return {
    startedAt: '2026-11-24T10:00:00.000Z',
    offsetMs: 0,
    transport: 'http',
    route: '/openai',
    request: {
      method: 'POST',
      path: '/v1/chat/completions',
      query: [['api_key', 'q-secret']],
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: requestBody,
    },
    response: { status: 200, headers: { 'set-cookie': 'session=abc', 'content-type': 'application/json' }, body: responseBody },
    timing: { durationMs: 3 },
  };
}

/** A blob store in memory: what putBlob was given, by sha256. */
function blobs(): { put: PutBlob; stored: Map<string, Buffer> } {
  const stored = new Map<string, Buffer>();
  return {
    stored,
    put: (bytes, encoding) => {
      const body = storedBody('run/tape', bytes, encoding);
      stored.set(body.sha256, bytes);
      return Promise.resolve(body);
    },
  };
}

const noBlobs: PutBlob = () => Promise.reject(new Error('no body here is large'));

describe('createExchangeEncoder', () => {
  it('numbers the exchange and writes it as one JSON line that reads back as the record', async () => {
    const enc = createExchangeEncoder({ putBlob: noBlobs });
    const { ex, line } = await enc.encode(input({ kind: 'json', json: { model: 'gpt-4o', messages: [] } }), 7);
    expect(ex).toMatchObject({ type: 'exchange', id: exchangeId(7), seq: 7 });
    expect(exchangeId(7)).toBe('000007');
    expect(line).not.toContain('\n');
    expect(JSON.parse(line)).toEqual(JSON.parse(JSON.stringify(ex)));
    const header = JSON.stringify(newTapeHeader('t', { mode: 'record', routes: [] }));
    const read = parseTapeRecords('t', linesOf(`${header}\n${line}\n`));
    expect(read.problems).toEqual([]);
    expect(read.exchanges).toEqual([ex]);
  });

  it('never puts a secret on the line: headers, query, body; one marker per secret, numbered from firstMarker', async () => {
    const enc = createExchangeEncoder({ putBlob: noBlobs, firstMarker: 5 });
    const body: Body = { kind: 'json', json: { messages: [{ role: 'user', content: `use ${KEY} then ${OTHER_KEY} then ${KEY}` }] } };
    const { ex, line } = await enc.encode(input(body), 1);
    for (const secret of [KEY, OTHER_KEY, 'q-secret', 'session=abc']) expect(line).not.toContain(secret);
    expect(ex.request.headers.authorization).toBe('[REDACTED]');
    expect(ex.request.query).toEqual([['api_key', '[REDACTED]']]);
    expect(ex.response?.headers['set-cookie']).toBe('[REDACTED]');
    expect(ex.request.body).toEqual({
      kind: 'json',
      json: { messages: [{ role: 'user', content: 'use [REDACTED:5] then [REDACTED:6] then [REDACTED:5]' }] },
    });
    // The same secret in a later exchange of the session keeps its number.
    const later = await enc.encode(input({ kind: 'text', text: `again ${OTHER_KEY}` }), 2);
    expect(later.ex.request.body).toEqual({ kind: 'text', text: 'again [REDACTED:6]' });
  });

  it('leaves an exchange without secrets in bodies as it came (no marker, no copy of the body)', async () => {
    const enc = createExchangeEncoder({ putBlob: noBlobs });
    const json = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }] };
    const { ex } = (await enc.encode(input({ kind: 'json', json }), 1)) as EncodedExchange;
    expect(ex.request.body).toEqual({ kind: 'json', json });
    expect(JSON.stringify(ex)).not.toContain('[REDACTED:');
  });

  it('stores a body over the limit apart, already redacted, and refers to it from the line', async () => {
    const { put, stored } = blobs();
    const enc = createExchangeEncoder({ putBlob: put, largeBodyBytes: 1024 });
    const big = `${'x'.repeat(2000)} ${KEY}`;
    const result = enc.encode(input({ kind: 'text', text: 'small' }, { kind: 'text', text: big }), 3);
    expect(result).toBeInstanceOf(Promise);
    const { ex, line } = await result;
    expect(ex.request.body).toEqual({ kind: 'text', text: 'small' });
    const ref = ex.response?.body as StoredBody;
    expect(ref).toMatchObject({ kind: 'file', encoding: 'text', file: `tape.files/${ref.sha256}.txt` });
    expect(line.length).toBeLessThan(1024);
    const bytes = stored.get(ref.sha256) as Buffer;
    expect(bytes.toString()).toBe(`${'x'.repeat(2000)} [REDACTED:1]`);
    expect(blobMismatch(ref, bytes)).toBeUndefined();
    expect(inlineBody(ref, bytes)).toEqual({ kind: 'text', text: `${'x'.repeat(2000)} [REDACTED:1]` });
  });

  it('answers at once (no promise) when nothing is stored apart: writers keep their records in call order', () => {
    const enc = createExchangeEncoder({ putBlob: noBlobs, largeBodyBytes: 1024 });
    expect(enc.encode(input({ kind: 'text', text: 'small' }), 1)).not.toBeInstanceOf(Promise);
  });

  it("redacts a session's messages with the exchanges' markers, and stores a large one apart", async () => {
    const { put, stored } = blobs();
    const enc = createExchangeEncoder({ putBlob: put, largeBodyBytes: 64 });
    await enc.encode(input({ kind: 'text', text: `first ${KEY}` }), 1);
    const frames: WsFrame[] = [
      { from: 'client', offsetMs: 1, kind: 'text', data: { kind: 'text', text: `again ${KEY}` } },
      { from: 'server', offsetMs: 2, kind: 'binary', data: { kind: 'base64', base64: Buffer.alloc(100, 1).toString('base64') } },
    ];
    const out = await enc.encodeFrames(frames);
    expect(out[0]?.data).toEqual({ kind: 'text', text: 'again [REDACTED:1]' });
    const ref = out[1]?.data as StoredBody;
    expect(ref).toMatchObject({ kind: 'file', encoding: 'base64', bytes: 100 });
    expect(stored.get(ref.sha256)).toEqual(Buffer.alloc(100, 1));
  });

  it('redacts credentials in upstream URLs', () => {
    const enc = createExchangeEncoder({ putBlob: noBlobs });
    expect(enc.redactUrl('https://user:pass@api.example.com/v1?key=abc')).not.toMatch(/pass|abc/);
  });
});

describe('stored bodies', () => {
  it('name their bytes by sha256 beside the tape, and read back as the body they stand for', () => {
    const json = Buffer.from('{"a":[1,2]}');
    const ref = storedBody('nested/name', json, 'json');
    const sha = createHash('sha256').update(json).digest('hex');
    expect(ref).toEqual({ kind: 'file', file: `name.files/${sha}.json`, encoding: 'json', bytes: json.byteLength, sha256: sha });
    expect(inlineBody(ref, json)).toEqual({ kind: 'json', json: { a: [1, 2] } });
    expect(inlineBody(storedBody('t', Buffer.from([0, 255]), 'base64'), Buffer.from([0, 255]))).toEqual({ kind: 'base64', base64: 'AP8=' });
  });

  it('report bytes that are not the recorded ones, by size or by sha256', () => {
    const ref = storedBody('t', Buffer.from('hello'), 'text');
    expect(blobMismatch(ref, Buffer.from('hello!'))).toMatch(/^size 6 bytes, recorded 5/);
    expect(blobMismatch(ref, Buffer.from('jello'))).toMatch(/^sha256 .*recorded/);
  });
});
