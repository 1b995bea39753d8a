/**
 * Turn MCP messages into an HTTP answer (one JSON object, or an SSE stream with notifications before the answer)
 * and into the replay tape's record of what was served.
 */
import { scaledDelay } from '../../replay/modes.js';
import type { Timing } from '../../http/types.js';
import { roundMs } from '../../tape/timing.js';
import { elapsedSince, type Call } from '../../engine/call.js';
import { exchangeRecord, type Answer } from '../../engine/record.js';
import type { ResponseSink } from '../../http/sink.js';
import { openSse, sendBody, sendJson, SSE_HEADERS, sseEvent } from '../../http/sink-send.js';
import type { HeaderMap, MatchInfo, SseEvent } from '../../tape/schema.js';
import type { NewExchange } from '../../tape/stores/tape-writer.js';
import type { Message } from '../../providers/mcp.js';

export interface Reply {
  status: number;
  headers: HeaderMap;
  /** Sent as SSE events (`event: message`) when `sse`, else the last message as a JSON body. */
  messages: { offsetMs: number; message: Message }[];
  sse: boolean;
}

/**
 * Send a reply: the last message as a JSON body, or every message as an SSE event with the recorded gaps under the
 * timing mode (all in one write when instant), at the client's pace. Resolves once it is sent, or the client has gone.
 */
export async function sendReply(sink: ResponseSink, reply: Reply, timing: Timing): Promise<void> {
  if (!reply.sse) return sendJson(sink, reply.status, reply.messages.at(-1)?.message, reply.headers);
  const event = (m: { message: Message }): string => sseEvent('message', JSON.stringify(m.message));
  // Instant: the whole stream in one write (already in memory; nothing follows it to hold back).
  if (timing.mode === 'instant')
    return sendBody(sink, reply.status, { ...SSE_HEADERS, ...reply.headers }, reply.messages.map(event).join(''));
  const stream = openSse(sink, reply.status, reply.headers);
  let last = 0;
  for (const m of reply.messages) {
    const wait = scaledDelay(m.offsetMs - last, timing);
    last = m.offsetMs;
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (!(await stream.write(event(m)))) return;
  }
  stream.end();
}

/** The replay tape's record of an answer tapedeck gave itself (a JSON-RPC reply, or a bare status with a JSON body). */
export function servedAnswer(reply: Reply | { status: number; headers: HeaderMap; body?: unknown }, durationMs: number): Answer {
  const response: NonNullable<Answer['response']> = { status: reply.status, headers: reply.headers };
  if ('messages' in reply) {
    if (reply.sse)
      response.events = reply.messages.map((m): SseEvent => ({
        offsetMs: roundMs(m.offsetMs),
        event: 'message',
        data: JSON.stringify(m.message),
      }));
    else response.body = reply.messages.length > 0 ? { kind: 'json', json: reply.messages.at(-1)?.message } : { kind: 'empty' };
    if (reply.sse) response.headers = { 'content-type': 'text/event-stream', ...reply.headers };
    else if (reply.messages.length > 0) response.headers = { 'content-type': 'application/json', ...reply.headers };
  } else {
    response.body = reply.body === undefined ? { kind: 'empty' } : { kind: 'json', json: reply.body };
  }
  return { response, timing: { durationMs: roundMs(durationMs) } };
}

/** The replay tape's record of an answer tapedeck gave itself, lasting until now. */
export function servedExchange(
  call: Call,
  reply: Reply | { status: number; headers: HeaderMap; body?: unknown },
  match: MatchInfo,
  extra: { notes?: Record<string, unknown> } = {},
): NewExchange {
  return exchangeRecord(call, servedAnswer(reply, elapsedSince(call)), { match, notes: extra.notes });
}
