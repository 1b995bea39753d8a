/** Legacy HTTP+SSE: a stream's events paired with its POSTs once, when recording; replay reads the pairing (or makes it for an older tape). */
import { describe, expect, it } from 'vitest';
import { LegacyPairing, pairedMessages } from '../../src/providers/mcp-legacy-pairing.js';
import { describeExchange } from '../../src/providers/describe.js';
import type { Exchange } from '../../src/tape/schema.js';
import type { NewExchange } from '../../src/tape/stores/tape-writer.js';

const SID = 'abc';
const rpc = (m: Record<string, unknown>): string => JSON.stringify({ jsonrpc: '2.0', ...m });

function post(id: string, offsetMs: number, message: Record<string, unknown>): Exchange {
  const ex: NewExchange = {
    startedAt: new Date().toISOString(),
    offsetMs,
    transport: 'http',
    route: '/legacy',
    request: {
      method: 'POST',
      path: '/message',
      query: [['sessionId', SID]],
      headers: {},
      body: { kind: 'json', json: { jsonrpc: '2.0', ...message } },
    },
    response: { status: 202, headers: {}, body: { kind: 'text', text: 'Accepted' } },
    timing: { durationMs: 1 },
  };
  return { type: 'exchange', id, seq: Number(id), ...describeExchange(ex) };
}

/** A stream: the endpoint, a's progress (token ta), b's progress (token tb), a's answer, b's answer. */
function stream(): NewExchange {
  const ex: NewExchange = {
    startedAt: new Date().toISOString(),
    offsetMs: 0,
    transport: 'http',
    route: '/legacy',
    request: { method: 'GET', path: '/sse', query: [], headers: {}, body: { kind: 'empty' } },
    response: {
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      events: [
        { offsetMs: 1, event: 'endpoint', data: `/message?sessionId=${SID}` },
        { offsetMs: 12, event: 'message', data: rpc({ method: 'notifications/progress', params: { progressToken: 'ta', progress: 1 } }) },
        { offsetMs: 13, event: 'message', data: rpc({ method: 'notifications/progress', params: { progressToken: 'tb', progress: 1 } }) },
        { offsetMs: 14, event: 'message', data: rpc({ id: 1, result: { a: true } }) },
        { offsetMs: 15, event: 'message', data: rpc({ id: 2, result: { b: true } }) },
      ],
    },
    timing: { durationMs: 20 },
  };
  return describeExchange(ex);
}

const call = (id: number, token: string): Record<string, unknown> => ({
  id,
  method: 'tools/call',
  params: { name: 't', _meta: { progressToken: token } },
});

describe('legacy SSE pairing', () => {
  it("recording: the stream's record lists which events answered which POST", () => {
    const pairing = new LegacyPairing();
    pairing.observe(post('000001', 10, call(1, 'ta')));
    pairing.observe(post('000002', 11, call(2, 'tb')));
    pairing.observe(post('000003', 11.5, { method: 'notifications/initialized' }));
    const s = stream();
    pairing.annotate(s);
    expect(s.mcp?.answers).toEqual([
      { exchange: '000001', events: [1, 3] },
      { exchange: '000002', events: [2, 4] },
    ]);
    // Its session's POSTs are let go: a second stream of that session gets none.
    const again = stream();
    pairing.annotate(again);
    expect(again.mcp?.answers).toEqual([]);
  });

  it('replay reads the pairing as recorded, and pairs a stream recorded before the list existed itself', () => {
    const posts = [post('000001', 10, call(1, 'ta')), post('000002', 11, call(2, 'tb'))];
    const withList = { type: 'exchange', id: '000009', seq: 9, ...stream() } as Exchange;
    // A pairing the heuristic would not make (b's answer for a): replay follows the tape.
    withList.mcp = { ...withList.mcp!, answers: [{ exchange: '000001', events: [4] }] };
    expect(pairedMessages([withList], posts)).toEqual(
      new Map([['000001', [{ offsetMs: 5, message: { jsonrpc: '2.0', id: 2, result: { b: true } } }]]]),
    );

    const older = { type: 'exchange', id: '000009', seq: 9, ...stream() } as Exchange;
    const paired = pairedMessages([older], posts);
    expect(paired.get('000001')?.map((m) => [m.offsetMs, m.message.method ?? m.message.id])).toEqual([
      [2, 'notifications/progress'],
      [4, 1],
    ]);
    expect(paired.get('000002')?.map((m) => [m.offsetMs, m.message.method ?? m.message.id])).toEqual([
      [2, 'notifications/progress'],
      [4, 2],
    ]);
  });
});
