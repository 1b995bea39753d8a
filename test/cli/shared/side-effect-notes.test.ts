import { describe, expect, it } from 'vitest';
import { sideEffectNotes } from '../../../src/cli/shared/side-effect-notes.js';
import { describeExchange } from '../../../src/providers/describe.js';
import type { Exchange } from '../../../src/tape/schema.js';

let seq = 0;
function rpc(method: string, params: unknown, result: unknown): Exchange {
  const id = ++seq;
  return {
    ...describeExchange({
      startedAt: new Date().toISOString(),
      offsetMs: id,
      transport: 'stdio',
      route: 'stdio:demo',
      request: { method: 'POST', path: '/', query: [], headers: {}, body: { kind: 'json', json: { jsonrpc: '2.0', id, method, params } } },
      response: { status: 200, headers: {}, body: { kind: 'json', json: { jsonrpc: '2.0', id, result } } },
      timing: { durationMs: 1 },
    }),
    type: 'exchange',
    id: String(id).padStart(6, '0'),
    seq: id,
  };
}

const list = rpc(
  'tools/list',
  {},
  {
    tools: [
      { name: 'get_forecast', annotations: { readOnlyHint: true } },
      { name: 'book_table', annotations: { readOnlyHint: false, destructiveHint: false } },
      { name: 'send_email' },
    ],
  },
);
const call = (name: string): Exchange => rpc('tools/call', { name, arguments: {} }, { content: [] });

describe('the replay preflight on side effects', () => {
  it('names the tools that count as side effects and says what to run to decide', () => {
    expect(sideEffectNotes([list, call('get_forecast')], { tape: 'trip', onMiss: 'strict' })).toEqual([
      'side effects: 2 of 3 tool(s) count as side effects: book_table, send_email (safe: get_forecast); ' +
        'a recorded call of one is answered from the tape, an unrecorded one is blocked, never run',
      'side effects: to decide per tool, run tapedeck side-effects init trip, review side_effects.yaml, set done: true, ' +
        'then replay with --side-effects side_effects.yaml',
    ]);
  });

  it('says when the tape has no tools/list, so that no tool is known to be read-only', () => {
    const lines = sideEffectNotes([call('get_forecast')], { tape: 'trip', onMiss: 'live' });
    expect(lines[0]).toBe(
      'side effects: 1 of 1 tool(s) count as side effects: get_forecast; a recorded call of one is answered from the tape, an unrecorded one is blocked, never run',
    );
    expect(lines[1]).toBe(
      'side effects: the tape has no tools/list answer (the client never listed tools while recording), so no tool is known to be read-only',
    );
    expect(lines[2]).toMatch(/--side-effects side_effects\.yaml \(a tool marked true may then run for real on a miss\)$/);
  });

  it("with a reviewed file: the file's decisions, and nothing to run", () => {
    const data = { tools: { send_email: false, book_table: true }, http: [], done: true };
    expect(sideEffectNotes([list], { tape: 'trip', onMiss: 'strict', file: { path: 'se.yaml', data } })).toEqual([
      'side effects (se.yaml): 1 of 3 tool(s) count as side effects: send_email (safe: book_table, get_forecast); ' +
        'a recorded call of one is answered from the tape, an unrecorded one is blocked, never run',
    ]);
  });

  it('says nothing for a tape without MCP tools', () => {
    expect(sideEffectNotes([], { tape: 'x', onMiss: 'strict' })).toEqual([]);
  });
});
