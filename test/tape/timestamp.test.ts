import { describe, expect, it } from 'vitest';
import { isoTimestamp } from '../../src/tape/timestamp.js';

describe('isoTimestamp', () => {
  it('writes what Date#toISOString writes, across minutes, hours, days and years', () => {
    const starts = [0, 59_999, 60_000, Date.UTC(2026, 10, 24, 23, 59, 59, 999), Date.UTC(1999, 11, 31, 23, 59, 58), 253402300799999];
    for (const start of starts)
      for (let i = 0; i < 3000; i += 7) {
        const d = new Date(start + i);
        expect(isoTimestamp(d)).toBe(d.toISOString());
      }
  });

  it('hands dates outside 0000-9999 (and invalid ones) to the built-in', () => {
    for (const t of [-1, -62198755200000, 253402300800000]) expect(isoTimestamp(new Date(t))).toBe(new Date(t).toISOString());
    expect(() => isoTimestamp(new Date(Number.NaN))).toThrow(RangeError);
  });
});
