import { describe, expect, it } from 'vitest';
import { decodeBody, encodeBody } from '../../src/tape/body.js';

describe('encodeBody / decodeBody', () => {
  it('stores JSON as JSON, text as text, binary as base64', () => {
    expect(encodeBody(Buffer.from('{"b":1,"a":[true]}'), 'application/json')).toEqual({ kind: 'json', json: { b: 1, a: [true] } });
    expect(encodeBody(Buffer.from('[1,2]'), 'text/plain')).toEqual({ kind: 'json', json: [1, 2] });
    expect(encodeBody(Buffer.from('hello'), 'text/plain')).toEqual({ kind: 'text', text: 'hello' });
    expect(encodeBody(Buffer.from('{not json'), 'application/json')).toEqual({ kind: 'text', text: '{not json' });
    expect(encodeBody(Buffer.from([0xff, 0x00, 0x81]), 'application/octet-stream')).toEqual({ kind: 'base64', base64: '/wCB' });
    expect(encodeBody(Buffer.alloc(0))).toEqual({ kind: 'empty' });
  });

  it('keeps numbers JSON cannot hold exactly as text, so nothing is lost', () => {
    const big = '{"id":12345678901234567890}';
    expect(encodeBody(Buffer.from(big), 'application/json')).toEqual({ kind: 'text', text: big });
  });

  it('tells text that holds U+FFFD from bytes that are not UTF-8', () => {
    // Valid UTF-8 spelling U+FFFD itself is text; an invalid byte in otherwise valid text is not.
    expect(encodeBody(Buffer.from('a \uFFFD b'), 'text/plain')).toEqual({ kind: 'text', text: 'a \uFFFD b' });
    const invalid = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3]), Buffer.from('"}')]);
    expect(encodeBody(invalid, 'application/json')).toEqual({ kind: 'base64', base64: invalid.toString('base64') });
    expect(encodeBody(new Uint8Array(invalid), 'application/json')).toEqual({ kind: 'base64', base64: invalid.toString('base64') });
  });

  it('round-trips every kind', () => {
    // A byte-order mark is content too: text that starts with one comes back with it.
    for (const bytes of [Buffer.from('{"x":"é"}'), Buffer.from('plain é'), Buffer.from([1, 2, 255]), Buffer.from('\uFEFFwith a BOM')]) {
      expect(decodeBody(encodeBody(bytes, 'application/octet-stream')).equals(bytes)).toBe(true);
    }
  });
});
