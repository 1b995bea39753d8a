import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_LINE_BYTES, LineReader } from '../../../src/transports/stdio/line-reader.js';

const b = (s: string): Buffer => Buffer.from(s, 'utf8');

describe('LineReader', () => {
  it('splits on newlines across chunks, drops a trailing \\r, keeps multi-byte characters whole', () => {
    const r = new LineReader();
    const euro = b('€');
    expect(r.push(b('{"a":1}\r\n{"b":'))).toEqual([{ line: '{"a":1}' }]);
    expect(r.push(Buffer.concat([b('"'), euro.subarray(0, 1)]))).toEqual([]);
    expect(r.push(Buffer.concat([euro.subarray(1), b('"}\n\n')]))).toEqual([{ line: '{"b":"€"}' }, { line: '' }]);
    expect(r.push(b('tail'))).toEqual([]);
    expect(r.end()).toBe('tail');
    expect(r.end()).toBeUndefined();
  });

  it("defaults to the MCP SDK's 10 MB", () => {
    expect(new LineReader().maxLineBytes).toBe(10 * 1024 * 1024);
    expect(DEFAULT_MAX_LINE_BYTES).toBe(10 * 1024 * 1024);
  });

  it('refuses a line over the cap once, as soon as it passes it, drops its bytes until its newline, and reads on', () => {
    const r = new LineReader(8);
    expect(r.push(b('12345'))).toEqual([]);
    expect(r.push(b('6789'))).toEqual([{ tooLong: true, maxLineBytes: 8 }]);
    expect(r.push(b('more and more'))).toEqual([]);
    expect(r.push(b('end\nok\n123456789012\nfine'))).toEqual([{ line: 'ok' }, { tooLong: true, maxLineBytes: 8 }]);
    expect(r.end()).toBe('fine');
  });

  it('a line of exactly the cap is read; an unterminated over-long tail is not handed out', () => {
    const r = new LineReader(4);
    expect(r.push(b('abcd\nabcde'))).toEqual([{ line: 'abcd' }, { tooLong: true, maxLineBytes: 4 }]);
    expect(r.end()).toBeUndefined();
  });
});
