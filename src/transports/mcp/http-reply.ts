/**
 * Turn MCP messages into an HTTP answer (one JSON object, or an SSE stream with notifications before the answer)
 * and into the `Answer` the replay tape keeps of what was served; an answer the transport gives itself goes on the
 * tape through its tee before the client gets it (`servedFirst`).
 */
import { scaledDelay } from '../../replay/modes.js';
import type { Timing } from '../../http/types.js';
import { roundMs } from '../../tape/timing.js';
import { elapsedSince, type Call } from '../../engine/call.js';
import type { Answer } from '../../engine/record.js';
import type { ExchangeLog } from '../../engine/exchange-log.js';
import { createTee, type TeeOptions } from '../../engine/tee.js';
import type { ResponseSink } from '../../http/sink.js';
import { openSse, sendBody, sendJson, SSE_HEADERS, sseEvent } from '../../http/sink-send.js';
import type { HeaderMap, SseEvent } from '../../tape/schema.js';
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

/** What a transport answers itself (its own errors, a session's end, a resumed stream): the reply, or its `Answer`. */
export type OwnAnswer = Reply | { status: number; headers: HeaderMap; body?: unknown } | Answer;

/**
 * An answer the transport gives itself, lasting until now: committed to the replay tape through its tee, then sent
 * (`send`); cut when the tape could not take it (and the run does not serve unrecorded answers). Resolves once sent.
 */
export async function servedFirst(
  out: ExchangeLog,
  call: Call,
  answer: OwnAnswer,
  how: Pick<TeeOptions, 'match' | 'notes' | 'meaningOf' | 'onTapeFailure'>,
  sink: Pick<ResponseSink, 'cut'>,
  send: () => void | Promise<void>,
): Promise<void> {
  const committed = createTee(out, call, how).commit('timing' in answer ? answer : servedAnswer(answer, elapsedSince(call)));
  out.track(committed);
  if (await committed) await send();
  else sink.cut();
}
