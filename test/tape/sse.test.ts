import { describe, expect, it } from 'vitest';
import { SseSplitter, sseEventText, toSseEvent } from '../../src/tape/sse.js';

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

  it('waits for the next chunk when a chunk ends in the middle of a CRLF', () => {
    const s = new SseSplitter();
    expect(s.push('data: x\r\n\r')).toEqual([]);
    expect(s.push('\n').map((b) => b.raw)).toEqual(['data: x\r\n\r\n']);
  });
});
