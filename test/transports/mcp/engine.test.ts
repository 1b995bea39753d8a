/** The MCP engine's decisions and what it writes, in-process against a tape in the in-memory store. */
import { describe, expect, it } from 'vitest';
import { decide, decideAll, type McpContext } from '../../../src/transports/mcp/engine.js';
import { stdioIncoming } from '../../../src/transports/stdio/exchange.js';
import { createReplayMatcher } from '../../../src/replay/pipeline.js';
import { policyForTape } from '../../../src/replay/side-effects.js';
import type { OnMiss } from '../../../src/replay/modes.js';
import { NOTE, recordedTape, ROUTE } from '../stdio/stdio-tape.js';

const call = (id: number, name: string, args: Record<string, unknown> = {}): Record<string, unknown> => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

async function context(onMiss: OnMiss, extra: Partial<McpContext> = {}): Promise<{ ctx: McpContext }> {
  const { tape } = await recordedTape();
  const ctx: McpContext = {
    answer: {
      matcher: createReplayMatcher(tape.exchanges),
      policy: policyForTape(tape.exchanges, { tools: { read_note: true, wipe_notes: false }, http: [], done: true }),
      onMiss,
      tapeName: tape.name,
      exchanges: tape.exchanges,
    },
    incoming: (m) => stdioIncoming(ROUTE, m),
    ...extra,
  };
  return { ctx };
}

describe('decide', () => {
  it('answers a recorded call with the incoming id and progress token, its notifications first', async () => {
    const { ctx } = await context('strict');
    const asked = call(41, 'read_note', { id: 'a' });
    (asked.params as Record<string, unknown>)._meta = { progressToken: 'p41' };
    const d = await decide(asked, ctx);
    expect(d.kind).toBe('answered');
    expect(d.match.kind).toBe('exact');
    expect(d.messages.map((m) => m.message.method ?? 'answer')).toEqual(['notifications/progress', 'answer']);
    expect(d.messages[0]?.message.params).toMatchObject({ progressToken: 'p41' });
    expect(d.messages.at(-1)?.message).toEqual({ jsonrpc: '2.0', id: 41, result: NOTE });
  });

  it('accepts a notification without an answer', async () => {
    const { ctx } = await context('strict');
    const d = await decide({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }, ctx);
    expect(d).toMatchObject({ kind: 'accepted', messages: [] });
  });

  it('blocks an unrecorded side effect even when misses go live, and never calls live', async () => {
    let lived = 0;
    const { ctx } = await context('live', { live: () => Promise.resolve({ messages: [], recorded: false, sse: lived++ > 0 }) });
    const d = await decide(call(5, 'wipe_notes'), ctx);
    expect(d.match.kind).toBe('blocked');
    expect(lived).toBe(0);
    expect(d.messages[0]?.message).toMatchObject({ id: 5, result: { isError: true } });
  });

  it('forwards a safe miss live; a live forward that fails is a miss with a JSON-RPC error saying why', async () => {
    const answer = { offsetMs: 3, message: { jsonrpc: '2.0', id: 6, result: NOTE } };
    const { ctx } = await context('live', { live: () => Promise.resolve({ messages: [answer], recorded: false }) });
    const ok = await decide(call(6, 'read_note', { id: 'zzz' }), ctx);
    expect(ok).toMatchObject({ kind: 'forwarded', match: { kind: 'live' }, messages: [answer] });

    const failing = await context('live', { live: () => Promise.reject(new Error('spawn ENOENT')) });
    const failed = await decide(call(7, 'read_note', { id: 'zzz' }), failing.ctx);
    expect(failed).toMatchObject({
      kind: 'answered',
      match: { kind: 'miss', reason: 'live forwarding could not reach the server: spawn ENOENT' },
    });
    expect(failed.messages[0]?.message).toMatchObject({ id: 7, error: { message: expect.stringMatching(/spawn ENOENT/) } });

    const none = await context('live', { noLive: 'live forwarding is not supported here' });
    const refused = await decide(call(8, 'read_note', { id: 'zzz' }), none.ctx);
    expect(refused.match).toEqual({ kind: 'miss', reason: 'live forwarding is not supported here' });
  });

  it('a strict miss explains itself', async () => {
    const { ctx } = await context('strict');
    const d = await decide(call(9, 'read_note', { id: 'zzz' }), ctx);
    expect(d.match.kind).toBe('miss');
    expect(d.messages[0]?.message).toMatchObject({ id: 9, error: { message: expect.stringMatching(/no recording on tape "notes"/) } });
  });
});

describe('decideAll', () => {
  it('decides a batch in order, each message as if alone', async () => {
    const { ctx } = await context('strict');
    const decisions = await decideAll(
      [call(1, 'read_note', { id: 'a' }), { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }, call(2, 'wipe_notes')],
      ctx,
    );
    expect(decisions.map((d) => [d.kind, d.match.kind, d.messages.at(-1)?.message.id])).toEqual([
      ['answered', 'exact', 1],
      ['accepted', 'exact', undefined],
      ['answered', 'blocked', 2],
    ]);
  });
});
