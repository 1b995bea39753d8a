/** NDJSON streams: each line an event, split across any chunking, written back byte for byte. */
import { describe, expect, it } from 'vitest';
import { isNdjson, NdjsonSplitter, ndjsonText } from '../../src/tape/ndjson.js';

describe('NDJSON framing', () => {
  it('knows the content types', () => {
    expect(isNdjson('application/x-ndjson')).toBe(true);
    expect(isNdjson('application/x-ndjson; charset=utf-8')).toBe(true);
    expect(isNdjson('application/json')).toBe(false);
    expect(isNdjson(undefined)).toBe(false);
  });

  it('splits lines across any chunking (a character split between chunks included) and writes them back exactly', () => {
    const text = '{"message":{"content":"hé"},"done":false}\r\n\n{"done":true}\n{"partial":';
    const bytes = Buffer.from(text);
    for (const size of [1, 3, bytes.byteLength]) {
      const s = new NdjsonSplitter();
      const lines = [];
      for (let i = 0; i < bytes.byteLength; i += size) lines.push(...s.write(bytes.subarray(i, i + size)));
      lines.push(...s.end());
      expect(lines.map((l) => l.data)).toEqual(['{"message":{"content":"hé"},"done":false}', '{"done":true}']);
      expect(lines.map(ndjsonText).join('') + s.rest()).toBe(text);
    }
  });
});
