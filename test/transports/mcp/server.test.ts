/** The MCP replay server over a scripted transport: what it sends, with which request, and what it writes to the replay tape. */
import { describe, expect, it } from 'vitest';
import { callOf, type Call } from '../../../src/engine/call.js';
import type { Answer } from '../../../src/engine/record.js';
import type { ExchangeLog } from '../../../src/engine/exchange-log.js';
import type { Decision, Forwarded } from '../../../src/transports/mcp/engine.js';
import { McpReplayServer } from '../../../src/transports/mcp/server.js';
import type { McpSendOptions, ReplayTransport } from '../../../src/transports/mcp/transport.js';
import { stdioIncoming, stdioRequest } from '../../../src/transports/stdio/exchange.js';
import type { Message } from '../../../src/providers/mcp.js';
import { createReplayMatcher } from '../../../src/replay/pipeline.js';
import { policyForTape } from '../../../src/replay/side-effects.js';
import type { NewExchange } from '../../../src/tape/stores/tape-writer.js';
import { log, NOTE, recordedTape, ROUTE } from '../stdio/stdio-tape.js';

const call = (id: number, name: string, args: Record<string, unknown> = {}): Message => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, _meta: { progressToken: `p${id}` } },
});

/** A transport that keeps what the server sent, and how many records were on the tape when each went. */
class ScriptedTransport implements ReplayTransport<{ n: number }> {
  onmessage?: ReplayTransport<{ n: number }>['onmessage'];
  sent: { message: Message | Message[]; options: McpSendOptions | undefined; recordsBefore: number }[] = [];
  live: ((message: Message) => Promise<Forwarded>) | undefined;
  constructor(private readonly written: NewExchange[]) {}
  start = (): Promise<void> => Promise.resolve();
  close = (): Promise<void> => Promise.resolve();
  send(message: Message | Message[], options?: McpSendOptions): Promise<void> {
    this.sent.push({ message, options, recordsBefore: this.written.length });
    return Promise.resolve();
  }
  incoming = (message: Message) => stdioIncoming(ROUTE, message);
  callOf(message: Message, extra: { n: number }): Call {
    return callOf('stdio', ROUTE, undefined, { startedAt: new Date(), offsetMs: extra.n, t0: performance.now() }, stdioRequest(message));
  }
  answerOf(d: Decision): Answer {
    return {
      response: { status: d.kind === 'accepted' ? 202 : 200, headers: { 'x-messages': String(d.messages.length) } },
      timing: { durationMs: 0 },
    };
  }
}

async function setUp(
  onMiss: 'strict' | 'live',
  committed: () => Promise<boolean> = () => Promise.resolve(true),
): Promise<{ server: McpReplayServer; transport: ScriptedTransport; written: NewExchange[] }> {
  const { tape } = await recordedTape();
  const written: NewExchange[] = [];
  // The replay server commits each record through its tee (`log.commit`) before it sends.
  const out = {
    writer: {},
    commit: (ex: NewExchange) => (written.push(ex), committed()),
    track: () => undefined,
  } as unknown as ExchangeLog;
  const server = new McpReplayServer({
    answer: {
      matcher: createReplayMatcher(tape.exchanges),
      policy: policyForTape(tape.exchanges, { tools: { read_note: true, wipe_notes: false }, http: [], done: true }),
      onMiss,
      tapeName: tape.name,
      exchanges: tape.exchanges,
    },
    out,
    log,
  });
  const transport = new ScriptedTransport(written);
  await server.connect(transport);
  return { server, transport, written };
}

describe('McpReplayServer', () => {
  it('writes every decision of a batch to the tape first, then sends each message with the request it belongs to', async () => {
    const { transport, written } = await setUp('strict');
    const batch = [
      call(1, 'read_note', { id: 'a' }),
      { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
      call(2, 'wipe_notes'),
    ];
    await transport.onmessage?.(batch, { n: 7 });
    expect(written.map((ex) => [ex.offsetMs, ex.response?.status, ex.match?.kind, ex.notes])).toEqual([
      [7, 200, 'exact', undefined],
      [7, 202, 'exact', undefined],
      [7, 200, 'blocked', { blocked: expect.stringMatching(/side effect/) }],
    ]);
    expect(written[0]?.response?.headers).toEqual({ 'x-messages': '2' });
    expect(
      transport.sent.map((s) => [
        (s.message as Message).method ?? 'answer',
        s.options?.relatedRequestId,
        s.options?.decision?.message.id,
        s.recordsBefore,
      ]),
    ).toEqual([
      ['notifications/progress', 1, 1, 3],
      ['answer', 1, 1, 3],
      ['answer', 2, 2, 3],
    ]);
    expect((transport.sent[0]?.message as Message).params).toMatchObject({ progressToken: 'p1' });
    expect(transport.sent[1]?.message).toEqual({ jsonrpc: '2.0', id: 1, result: NOTE });
    expect(transport.sent[0]?.options?.offsetMs).toBe(1);
  });

  it('a live forward its transport recorded is not written twice; what it brought back is sent', async () => {
    const { transport, written } = await setUp('live');
    const answer = { offsetMs: 3, message: { jsonrpc: '2.0', id: 6, result: NOTE } };
    transport.live = () => Promise.resolve({ messages: [answer], recorded: true });
    await transport.onmessage?.(call(6, 'read_note', { id: 'zzz' }), { n: 0 });
    expect(written).toEqual([]);
    expect(transport.sent.map((s) => [s.message, s.options?.relatedRequestId, s.options?.offsetMs])).toEqual([[answer.message, 6, 3]]);
  });

  it('what a client has, the tape has first: nothing goes out before the records are committed; an unrecorded answer is not served', async () => {
    let commit!: (ok: boolean) => void;
    const { transport, written } = await setUp('strict', () => new Promise<boolean>((r) => (commit = r)));
    const handled = transport.onmessage?.(call(1, 'read_note', { id: 'a' }), { n: 0 });
    await new Promise((r) => setTimeout(r, 20));
    expect(written).toHaveLength(1);
    expect(transport.sent).toEqual([]);
    commit(false);
    await handled;
    // The tape could not take it: the client gets a JSON-RPC error saying so, not the recorded answer.
    expect(transport.sent.map((s) => s.message)).toEqual([
      { jsonrpc: '2.0', id: 1, error: expect.objectContaining({ message: expect.stringMatching(/replay tape cannot be written/) }) },
    ]);
  });
});
