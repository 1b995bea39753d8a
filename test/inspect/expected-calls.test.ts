import { describe, expect, it } from 'vitest';
import { createDirStore } from '../../src/tape/stores/dir-store.js';
import type { Exchange } from '../../src/tape/schema.js';
import { expectedCount, missingCalls, parseExpect, renderMissing, unknownExpectNames } from '../../src/inspect/expected-calls.js';
import { TAPES } from '../fixtures/compat/compat.js';

/** A replay tape that served every recorded exchange but those named. */
const replayServing = (recorded: readonly Exchange[], skip: (ex: Exchange) => boolean): Exchange[] =>
  recorded.filter((ex) => !skip(ex)).map((ex) => ({ ...ex, match: { kind: 'exact', source: ex.id } }));

describe('--expect: recorded calls a run never made', () => {
  it('parses all, llm, tools and names, mixed', () => {
    expect(parseExpect('all')).toEqual({ llm: true, tools: true, names: new Set() });
    expect(parseExpect('llm, refund_order')).toEqual({ llm: true, tools: false, names: new Set(['refund_order']) });
    expect(() => parseExpect(' , ')).toThrow(/--expect needs/);
  });

  it('an MCP tool call the replay never made is missing under tools and under its name, not under llm', async () => {
    const recorded = (await createDirStore(TAPES).load('mcp-http')).exchanges;
    const replay = replayServing(recorded, (ex) => ex.mcp?.toolName === 'get-sum');
    const missing = missingCalls(recorded, replay, parseExpect('tools'));
    expect(missing.map((m) => [m.kind, m.target, m.args])).toEqual([['MCP', 'get-sum', '{"a":2,"b":3}']]);
    expect(missingCalls(recorded, replay, parseExpect('get-sum'))).toHaveLength(1);
    expect(missingCalls(recorded, replay, parseExpect('echo'))).toEqual([]);
    expect(missingCalls(recorded, replay, parseExpect('llm'))).toEqual([]);
    // Every call served: nothing missing, whatever is expected.
    expect(
      missingCalls(
        recorded,
        replayServing(recorded, () => false),
        parseExpect('all'),
      ),
    ).toEqual([]);
  });

  it('LLM calls by kind and by model; the report speaks of unused recordings, with the step', async () => {
    const recorded = (await createDirStore(TAPES).load('llm')).exchanges;
    const replay = replayServing(recorded, (ex) => ex.llm?.api === 'messages');
    const missing = missingCalls(recorded, replay, parseExpect('llm'));
    expect(missing.map((m) => m.target)).toEqual(['claude-sonnet-4-6', 'claude-sonnet-4-6']);
    const lines = renderMissing(missing, expectedCount(recorded, parseExpect('llm')));
    expect(lines[0]).toMatch(/^unused recordings {2}2 of \d+ expected recorded call\(s\) never made$/);
    expect(lines[1]).toMatch(/^ {2}step \d+ {2}LLM claude-sonnet-4-6 {2}greet me$/);
    expect(unknownExpectNames(recorded, parseExpect('claude-sonnet-4-6,gpt-9'))).toEqual(['gpt-9']);
  });

  it('a Realtime session counts as an LLM call; its responses are not counted again', async () => {
    const recorded = (await createDirStore(TAPES).load('realtime')).exchanges;
    const missing = missingCalls(recorded, [], parseExpect('llm'));
    expect(missing).toHaveLength(1);
    expect(missing[0]?.exchange.websocket).toBeDefined();
  });
});
