/**
 * The answer to a JSON-RPC batch over HTTP, put together from the per-message answers (each decided exactly as a
 * single message would be): one JSON array of the responses, or, when the client takes SSE and a message comes with
 * notifications, one SSE stream with every message in order. A batch of notifications only gets 202.
 */
import { TapedeckError } from '../../errors.js';
import { rpcErrorMessage } from '../../providers/errors.js';
import type { Message, RequestId, TimedMessage } from '../../providers/mcp.js';
import { SseSplitter } from '../../tape/framing/sse.js';
import type { HeaderMap } from '../../tape/schema.js';
import { sendReply, type Reply } from './http-reply.js';
import type { BufferSink, ResponseSink } from '../../http/sink.js';
import { sendBody, sendJson } from '../../http/sink-send.js';
import type { Timing } from '../../http/types.js';
import { parseJson } from '../../tape/json-depth.js';

/** What one request of a batch got: its messages (notifications first, its answer last). */
export interface BatchPart {
  messages: TimedMessage[];
  /** The answer came (or was recorded) as SSE. */
  sse: boolean;
}

/** Whether the batch's answer goes out as SSE (the same rule as for one message). */
export function batchSse(parts: readonly BatchPart[], acceptsSse: boolean): boolean {
  return acceptsSse && parts.some((p) => p.sse || p.messages.length > 1);
}

/** Send the batch's answer; resolves once it is sent (or the client has gone). */
export async function sendBatch(
  sink: ResponseSink,
  parts: readonly BatchPart[],
  sse: boolean,
  headers: HeaderMap,
  timing: Timing,
): Promise<void> {
  if (parts.length === 0) return sendBody(sink, 202, headers);
  if (!sse)
    return sendJson(
      sink,
      200,
      parts.map((p) => p.messages.at(-1)?.message),
      headers,
    );
  // One stream, each request's messages after the previous request's, with their recorded gaps.
  const messages: TimedMessage[] = [];
  let base = 0;
  for (const p of parts) {
    for (const m of p.messages) messages.push({ offsetMs: base + m.offsetMs, message: m.message });
    base += p.messages.at(-1)?.offsetMs ?? 0;
  }
  const reply: Reply = { status: 200, headers, messages, sse: true };
  return sendReply(sink, reply, timing);
}

/**
 * The messages a live answer carried (a JSON body or an SSE stream), read whole so the batch can be answered in one
 * piece. Without an answer to the request among them, a JSON-RPC error saying what came back instead.
 */
export function liveMessages(res: BufferSink, id: RequestId): TimedMessage[] {
  const text = res.text();
  const found: Message[] = [];
  const take = (value: unknown): void => {
    for (const m of Array.isArray(value) ? (value as unknown[]) : [value])
      if (m !== null && typeof m === 'object' && (m as Message).jsonrpc === '2.0') found.push(m as Message);
  };
  const parse = (s: string): unknown => {
    try {
      return parseJson(s);
    } catch {
      return undefined;
    }
  };
  if ((res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
    const splitter = new SseSplitter();
    for (const block of [...splitter.push(text), ...splitter.push('\n\n')]) if (block.data !== '') take(parse(block.data));
  } else take(parse(text));
  const messages: TimedMessage[] = found.map((message) => ({ offsetMs: 0, message }));
  if (!found.some((m) => m.method === undefined && m.id === id)) {
    const err = new TapedeckError('UPSTREAM_ERROR', `tapedeck: the live server gave no answer to this request (status ${res.status})`);
    messages.push({ offsetMs: 0, message: rpcErrorMessage(err, id) });
  }
  return messages;
}
