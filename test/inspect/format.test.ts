import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { formatMs, humanBytes, outputWidth, shorten, styleFor } from '../../src/inspect/format.js';

describe('format', () => {
  it('shortens long values within the budget and shows their full size', () => {
    const big = 'lorem ipsum '.repeat(1050); // 12,600 bytes
    const s = shorten(big, 40);
    expect(s.length).toBeLessThanOrEqual(40);
    expect(s).toMatch(/^lorem ipsum lorem.*\.\.\. \(12\.3 KB\)$/);
    expect(shorten('short', 40)).toBe('short');
    expect(shorten({ a: 1, b: [1, 2] }, 40)).toBe('{"a":1,"b":[1,2]}');
    expect(shorten('multi\n  line\ttext', 40)).toBe('multi line text');
  });

  it('formats sizes and durations', () => {
    expect(humanBytes(812)).toBe('812 B');
    expect(humanBytes(4.1 * 1024 * 1024)).toBe('4.1 MB');
    expect(formatMs(850)).toBe('850ms');
    expect(formatMs(1234)).toBe('1.2s');
    expect(formatMs(185_000)).toBe('3m05s');
  });

  it('uses 100 columns when not a TTY, the terminal width on one, never below 40', () => {
    const pipe = new PassThrough();
    expect(outputWidth(pipe)).toBe(100);
    expect(outputWidth(Object.assign(new PassThrough(), { columns: 60, isTTY: true }))).toBe(60);
    expect(outputWidth(Object.assign(new PassThrough(), { columns: 20, isTTY: true }))).toBe(40);
  });

  it('honours COLUMNS when piped; the terminal width comes first, an asked width over both', () => {
    expect(outputWidth(new PassThrough(), { COLUMNS: '160' })).toBe(160);
    expect(outputWidth(new PassThrough(), { COLUMNS: 'wide' })).toBe(100);
    expect(outputWidth(new PassThrough(), { COLUMNS: '10' })).toBe(40);
    expect(outputWidth(Object.assign(new PassThrough(), { columns: 60, isTTY: true }), { COLUMNS: '160' })).toBe(60);
    expect(outputWidth(new PassThrough(), { COLUMNS: '160' }, 80)).toBe(80);
    expect(outputWidth(new PassThrough(), {}, Infinity)).toBe(Infinity);
  });

  it('cuts a small value to its words with an ellipsis; a size note only for 1 KB or more', () => {
    expect(shorten('Find the cheapest flight', 16)).toBe('Find the cheape…');
    expect(shorten('x'.repeat(2000), 30)).toBe(`${'x'.repeat(18)}... (2.0 KB)`);
  });

  it('colours only on a TTY with NO_COLOR unset', () => {
    const tty = Object.assign(new PassThrough(), { isTTY: true });
    expect(styleFor(new PassThrough(), {}).red('x')).toBe('x');
    expect(styleFor(tty, { NO_COLOR: '1' }).red('x')).toBe('x');
    expect(styleFor(tty, {}).red('x')).toBe('\u001b[31mx\u001b[39m');
  });
});
