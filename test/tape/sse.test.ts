import { describe, expect, it } from 'vitest';
import { SseSplitter, serializeSseFields, sseEventText, toSseEvent } from '../../src/tape/framing/sse.js';

describe('SseSplitter', () => {
  it('splits events across arbitrary chunk boundaries and keeps their exact bytes', () => {
    const wire =
      'event: message_start\ndata: {"a":1}\n\n: keep-alive comment\n\nid: 7\nretry: 3000\ndata: line one\ndata: line two\n\r\ndata: crlf\r\n\r\ndata:nospace\n\ndata: tail-without-end';
    for (const size of [1, 2, 3, 7, 64]) {
      const splitter = new SseSplitter();
      const blocks = [];
      for (let i = 0; i < wire.length; i += size) blocks.push(...splitter.push(wire.slice(i, i + size)));
      expect(blocks.map((b) => b.raw).join('') + splitter.rest()).toBe(wire);
      expect(blocks.map((b) => [b.event, b.id, b.retry, b.data])).toEqual([
        ['message_start', undefined, undefined, '{"a":1}'],
        [undefined, undefined, undefined, ''],
        [undefined, '7', 3000, 'line one\nline two'],
        [undefined, undefined, undefined, 'crlf'],
        [undefined, undefined, undefined, 'nospace'],
      ]);
      expect(splitter.rest()).toBe('data: tail-without-end');
    }
  });

  it('stores raw only when the canonical form would differ, and writes events back byte for byte', () => {
    const canonical = new SseSplitter().push('event: ping\ndata: {}\n\n')[0]!;
    const odd = new SseSplitter().push('data:{}\r\n\r\n')[0]!;
    const a = toSseEvent(canonical, 1.23456);
    const b = toSseEvent(odd, 2);
    expect(a).toEqual({ offsetMs: 1.235, event: 'ping', data: '{}' });
    expect(b.raw).toBe('data:{}\r\n\r\n');
    expect(sseEventText(a)).toBe('event: ping\ndata: {}\n\n');
    expect(sseEventText(b)).toBe('data:{}\r\n\r\n');
  });

  it('decodes bytes split inside a character, and drops a leading byte order mark', () => {
    const wire = Buffer.from('\uFEFFdata: {"t":"héllo 😀"}\n\ndata: ünd\n\n');
    for (const size of [1, 2, 3, 5]) {
      const s = new SseSplitter();
      const blocks = [];
      for (let i = 0; i < wire.length; i += size) blocks.push(...s.write(wire.subarray(i, i + size)));
      blocks.push(...s.end());
      expect(blocks.map((b) => b.data)).toEqual(['{"t":"héllo 😀"}', 'ünd']);
      expect(blocks[0]!.canonical).toBe(true);
      expect(s.bom).toBe(true);
    }
    // A character cut short at the end of the stream is kept as U+FFFD, in what is left over.
    const cut = new SseSplitter();
    expect(cut.write(Buffer.from('data: é').subarray(0, 7))).toEqual([]);
    expect(cut.end()).toEqual([]);
    expect(cut.rest()).toBe('data: \uFFFD');
  });

  it('waits for the next chunk when a chunk ends in the middle of a CRLF', () => {
    const s = new SseSplitter();
    expect(s.push('data: x\r\n\r')).toEqual([]);
    expect(s.push('\n').map((b) => b.raw)).toEqual(['data: x\r\n\r\n']);
  });

  it('splits one 20 MB event fed in 64 KiB chunks, and the next event after it', () => {
    const big = 'x'.repeat(20 * 1024 * 1024);
    const wire = `data: ${big}\n\ndata: after\n\n`;
    const s = new SseSplitter();
    const blocks = [];
    for (let i = 0; i < wire.length; i += 64 * 1024) blocks.push(...s.push(wire.slice(i, i + 64 * 1024)));
    expect(blocks).toHaveLength(2);
    expect(blocks[0]!.data.length).toBe(big.length);
    expect(blocks[0]!.raw.length).toBe(big.length + 8);
    expect(blocks[1]!.data).toBe('after');
    expect(s.rest()).toBe('');
  });

  it('finds the same blocks as a whole-text split for every way of cutting mixed line endings', () => {
    const pieces = ['data: a', '\n', '\r', '\r\n', 'event: e', ':c', 'id: 1', 'data:b', 'retry: 5', 'retry: 05', 'x: y'];
    let seed = 7;
    const rand = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let round = 0; round < 300; round++) {
      let wire = '';
      for (let i = 0; i < 30; i++) wire += pieces[rand(pieces.length)];
      const whole = new SseSplitter();
      const wholeBlocks = whole.push(wire);
      const expected = wholeBlocks.map((b) => b.raw);
      // The parser's own verdict on canonical form agrees with writing the event out and comparing.
      for (const b of wholeBlocks) expect(b.canonical).toBe(serializeSseFields(b) === b.raw);
      const cut = new SseSplitter();
      const got: string[] = [];
      for (let i = 0; i < wire.length;) {
        const n = 1 + rand(5);
        got.push(...cut.push(wire.slice(i, i + n)).map((b) => b.raw));
        i += n;
      }
      expect(got).toEqual(expected);
      expect(got.join('') + cut.rest()).toBe(wire);
      expect(cut.rest()).toBe(whole.rest());
    }
  });
});
