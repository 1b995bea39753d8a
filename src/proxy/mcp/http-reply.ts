/**
 * Turn MCP messages into an HTTP answer (one JSON object, or an SSE stream with notifications before the answer)
 * and into the replay tape's record of what was served.
 */
import { scaledDelay } from '../../replay/modes.js';
import { incomingRecord } from '../replay-record.js';
import type { ProxyRequest, Timing } from '../types.js';
import { round, serializeSseFields } from '../../tape/sse.js';
import type { HeaderMap, MatchInfo, SseEvent } from '../../tape/schema.js';
import type { NewExchange } from '../../tape/tape-writer.js';
import type { Message } from '../../providers/mcp.js';

export interface Reply {
  status: number;
  headers: HeaderMap;
  /** Sent as SSE events (`event: message`) when `sse`, else the last message as a JSON body. */
  messages: { offsetMs: number; message: Message }[];
  sse: boolean;
}

/** A JSON answer with no streaming: errors the transport itself gives (400, 404, 405) and plain results. */
export function jsonResponse(status: number, body: unknown, headers: HeaderMap = {}): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
  });
}

export function toResponse(reply: Reply, timing: Timing): Response {
  if (!reply.sse) {
    const last = reply.messages.at(-1)?.message;
    return jsonResponse(reply.status, last, reply.headers);
  }
  const enc = new TextEncoder();
  const messages = reply.messages;
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      if (timing.mode === 'instant') {
        controller.enqueue(
          enc.encode(messages.map((m) => serializeSseFields({ event: 'message', data: JSON.stringify(m.message) })).join('')),
        );
      } else {
        let last = 0;
        for (const m of messages) {
          const wait = scaledDelay(m.offsetMs - last, timing);
          last = m.offsetMs;
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          controller.enqueue(enc.encode(serializeSseFields({ event: 'message', data: JSON.stringify(m.message) })));
        }
      }
      controller.close();
    },
  });
  return new Response(stream, {
    status: reply.status,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', ...reply.headers },
  });
}

/** The replay tape's record of an answer tapedeck gave itself. */
export function servedExchange(
  req: ProxyRequest,
  reply: Reply | { status: number; headers: HeaderMap; body?: unknown },
  match: MatchInfo,
  extra: { notes?: Record<string, unknown> } = {},
): NewExchange {
  const response: NonNullable<NewExchange['response']> = { status: reply.status, headers: reply.headers };
  if ('messages' in reply) {
    if (reply.sse)
      response.events = reply.messages.map((m): SseEvent => ({
        offsetMs: round(m.offsetMs),
        event: 'message',
        data: JSON.stringify(m.message),
      }));
    else response.body = reply.messages.length > 0 ? { kind: 'json', json: reply.messages.at(-1)?.message } : { kind: 'empty' };
    if (reply.sse) response.headers = { 'content-type': 'text/event-stream', ...reply.headers };
    else if (reply.messages.length > 0) response.headers = { 'content-type': 'application/json', ...reply.headers };
  } else {
    response.body = reply.body === undefined ? { kind: 'empty' } : { kind: 'json', json: reply.body };
  }
  return {
    ...incomingRecord(req),
    response,
    timing: { durationMs: round(performance.now() - req.t0) },
    match,
    ...(extra.notes ? { notes: extra.notes } : {}),
  };
}
