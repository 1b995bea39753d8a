import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { argsHash, editScript, normalizeArgs, toolSequence } from '../../../src/inspect/diff/tool-sequence.js';
import { textSimilarity } from '../../../src/inspect/diff/similarity.js';
import { exchange } from '../exchanges.js';

const call = (toolName: string, args: unknown = {}) => ({ toolName, argsHash: argsHash(args) });

describe('argsHash', () => {
  it('is the first 16 hex characters of SHA-256 over stable JSON', () => {
    const expected = createHash('sha256').update('{"a":1,"b":[2,3]}').digest('hex').slice(0, 16);
    expect(argsHash({ b: [2, 3], a: 1 })).toBe(expected);
    expect(argsHash({ a: 1, b: [2, 3] })).toBe(expected);
    expect(argsHash(expected)).toMatch(/^[0-9a-f]{16}$/);
  });

  it('parses OpenAI JSON-string arguments first, so both shapes of one call hash alike', () => {
    expect(argsHash('{"city": "Paris", "units":"c"}')).toBe(argsHash({ units: 'c', city: 'Paris' }));
    expect(argsHash(undefined)).toBe(argsHash({}));
    expect(argsHash('')).toBe(argsHash({}));
    expect(normalizeArgs('not json')).toBe('not json');
    expect(argsHash({ city: 'Paris' })).not.toBe(argsHash({ city: 'paris' }));
  });
});

describe('editScript', () => {
  it('one inserted call is one added edit, not a cascade', () => {
    const a = [call('search', { q: 1 }), call('fetch'), call('summarize')];
    const b = [call('search', { q: 1 }), call('lookup'), call('fetch'), call('summarize')];
    expect(editScript(a, b)).toEqual({ edits: [{ kind: 'added', toolName: 'lookup', argsHash: argsHash({}), atIndex: 1 }], common: 3 });
  });

  it('a reordered, an inserted and a removed call are exactly three edits', () => {
    const a = [call('a'), call('b'), call('c'), call('d')];
    const b = [call('b'), call('a'), call('c'), call('e')];
    const { edits, common } = editScript(a, b);
    expect(common).toBe(2);
    expect(edits).toHaveLength(3);
    expect(edits).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'reordered', from: expect.any(Number) as unknown, to: expect.any(Number) as unknown }),
        { kind: 'removed', toolName: 'd', argsHash: argsHash({}), atIndex: 3 },
        { kind: 'added', toolName: 'e', argsHash: argsHash({}), atIndex: 3 },
      ]),
    );
    const moved = edits.find((e) => e.kind === 'reordered');
    expect(moved).toMatchObject(moved?.toolName === 'a' ? { from: 0, to: 1 } : { toolName: 'b', from: 1, to: 0 });
  });

  it('the same tool with other arguments is a removed and an added call', () => {
    const { edits } = editScript([call('get', { id: 1 })], [call('get', { id: 2 })]);
    expect(edits.map((e) => e.kind)).toEqual(['removed', 'added']);
  });

  it('equal and empty sequences have no edits', () => {
    expect(editScript([call('a'), call('b')], [call('a'), call('b')])).toEqual({ edits: [], common: 2 });
    expect(editScript([], [])).toEqual({ edits: [], common: 0 });
    expect(editScript([], [call('a')]).edits).toEqual([{ kind: 'added', toolName: 'a', argsHash: argsHash({}), atIndex: 0 }]);
  });
});

describe('toolSequence', () => {
  it('links an MCP tools/call to the call the model asked for: one entry, not two', () => {
    const seq = toolSequence([
      exchange({ offsetMs: 0, llm: { toolCalls: [{ id: 'c1', name: 'echo', arguments: { message: 'hi' } }] } }),
      exchange({ offsetMs: 5, mcp: { method: 'tools/call', toolName: 'echo', arguments: { message: 'hi' }, result: { content: [] } } }),
      exchange({ offsetMs: 9, mcp: { method: 'tools/call', toolName: 'echo', arguments: { message: 'again' } } }),
      exchange({ offsetMs: 12, llm: { toolCalls: [{ name: 'local_tool', arguments: '{"x":1}' }] } }),
    ]);
    expect(seq.map((e) => [e.toolName, e.source])).toEqual([
      ['echo', 'model+mcp'],
      ['echo', 'mcp'],
      ['local_tool', 'model'],
    ]);
    expect(seq[2]?.argsHash).toBe(argsHash({ x: 1 }));
  });
});

describe('textSimilarity', () => {
  it('is word-level normalised edit similarity, ignoring case and punctuation', () => {
    expect(textSimilarity('Paris: 21°C.', 'paris 21 °c')).toBe(1);
    expect(textSimilarity('the weather is sunny', 'the weather is rainy')).toBe(0.75);
    expect(textSimilarity('', '')).toBe(1);
    expect(textSimilarity('something', '')).toBe(0);
  });
});
