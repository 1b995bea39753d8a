/**
 * The legacy HTTP+SSE transport (2024-11-05) answers a POST with 202 and sends the answer on the session's GET
 * stream, so a tape holds a POST's request and its answer in two records. Which events of a stream answered which
 * POST is settled once, when recording: the stream's record (written when the stream ends, after its POSTs) lists
 * them in `mcp.answers` (`{exchange, events}`: the POST's exchange id, and the indexes of its events in the stream's
 * `response.events`, notifications first, the answer last). Replay reads that list (`pairedMessages`).
 *
 * The pairing: a POST's answer is the first message on its session's stream, at or after the POST, with its JSON-RPC
 * id; the notifications between the POST and that answer are its own, unless they carry another request's progress
 * token. Tapes recorded before the list existed are paired the same way once, when their replay is set up.
 */
import { bodyJson } from '../tape/body.js';
import type { Exchange } from '../tape/schema.js';
import type { NewExchange } from '../tape/store.js';
import { looksLikeRpc, progressToken, RESPONSE_METHOD, STREAM_METHOD, type Message, type RequestId, type TimedMessage } from './mcp.js';
import { parseJson } from '../tape/json-depth.js';

/** Which events of a stream answered a POST. */
export interface LegacyAnswer {
  exchange: string;
  events: number[];
}

/** What pairing needs of a recorded POST. */
interface Post {
  id: string;
  offsetMs: number;
  jsonrpcId: RequestId;
  token: RequestId | undefined;
}

type Stream = Pick<Exchange, 'offsetMs' | 'response'>;

/** The session id a legacy stream's `endpoint` event gave its client. */
export function streamSession(stream: Stream): string | undefined {
  const endpoint = stream.response?.events?.find((e) => e.event === 'endpoint');
  if (endpoint === undefined) return undefined;
  try {
    return new URL(endpoint.data.trim(), 'http://x').searchParams.get('sessionId') ?? undefined;
  } catch {
    return undefined;
  }
}

/** The session a legacy POST went to, and what pairing needs of it (undefined: not a request that waits for an answer). */
function postOf(ex: Pick<Exchange, 'id' | 'offsetMs' | 'request' | 'mcp'>): { session: string; post: Post } | undefined {
  const session = ex.request.query.find(([k]) => k === 'sessionId')?.[1];
  const jsonrpcId = ex.mcp?.jsonrpcId;
  if (session === undefined || jsonrpcId === undefined || ex.mcp?.method === RESPONSE_METHOD) return undefined;
  return { session, post: { id: ex.id, offsetMs: ex.offsetMs, jsonrpcId, token: progressToken(bodyJson(ex.request.body)) } };
}

/** An event's data as one JSON-RPC message, or undefined. */
function messageOf(data: string): Message | undefined {
  let m: unknown;
  try {
    m = data === '' ? undefined : parseJson(data);
  } catch {
    return undefined;
  }
  return looksLikeRpc(m) && !Array.isArray(m) ? (m as Message) : undefined;
}

/** The stream's JSON-RPC messages with their event indexes and their time on the tape's timeline. */
function streamMessages(stream: Stream): { index: number; at: number; message: Message }[] {
  const out: { index: number; at: number; message: Message }[] = [];
  for (const [index, ev] of (stream.response?.events ?? []).entries()) {
    if (ev.event !== undefined && ev.event !== 'message') continue;
    const message = messageOf(ev.data);
    if (message !== undefined) out.push({ index, at: stream.offsetMs + ev.offsetMs, message });
  }
  return out;
}

/** Pair a stream's events with its session's POSTs (see the module comment). */
function pairStream(stream: Stream, posts: readonly Post[]): LegacyAnswer[] {
  const messages = streamMessages(stream);
  const out: LegacyAnswer[] = [];
  for (const post of [...posts].sort((a, b) => a.offsetMs - b.offsetMs)) {
    const from = post.offsetMs - 1;
    const answer = messages.find((m) => m.at >= from && !('method' in m.message) && m.message.id === post.jsonrpcId);
    const until = answer?.at ?? Infinity;
    const events = messages
      .filter((m) => {
        if (m.at < from || m.at > until || !('method' in m.message)) return false;
        const t = (m.message.params as { progressToken?: unknown } | undefined)?.progressToken;
        return t === undefined || t === post.token;
      })
      .map((m) => m.index);
    if (answer !== undefined) events.push(answer.index);
    if (events.length > 0) out.push({ exchange: post.id, events });
  }
  return out;
}

/**
 * Recording: legacy POSTs are kept (what pairing needs of them) by session until their stream's record is written,
 * which then gets `mcp.answers`. One per tape being recorded.
 */
export class LegacyPairing {
  private readonly posts = new Map<string, Post[]>();

  /** An exchange now on the tape (with its id): kept when it is a legacy POST. */
  observe(ex: Exchange): void {
    if (ex.transport !== 'http' || ex.request.method !== 'POST' || ex.mcp?.transport !== 'sse') return;
    const found = postOf(ex);
    if (found === undefined) return;
    const list = this.posts.get(found.session);
    if (list === undefined) this.posts.set(found.session, [found.post]);
    else list.push(found.post);
  }

  /** An exchange about to go on the tape (described): a legacy stream gets its pairing, and its POSTs are let go. */
  annotate(ex: NewExchange): void {
    if (ex.mcp?.method !== STREAM_METHOD || ex.mcp.transport !== 'sse' || ex.request.method !== 'GET') return;
    const session = streamSession(ex);
    if (session === undefined) return;
    ex.mcp.answers = pairStream(ex, this.posts.get(session) ?? []);
    this.posts.delete(session);
  }
}

/**
 * Replay: each recorded legacy POST's messages (by exchange id), read from its stream's `mcp.answers`, or paired
 * here for a stream recorded before that list existed (once, when the replay is set up).
 */
export function pairedMessages(streams: readonly Exchange[], posts: readonly Exchange[]): Map<string, TimedMessage[]> {
  const byId = new Map(posts.map((p) => [p.id, p]));
  const out = new Map<string, TimedMessage[]>();
  for (const stream of streams) {
    const session = streamSession(stream);
    const answers =
      stream.mcp?.answers ??
      pairStream(
        stream,
        posts.flatMap((p) => {
          const found = postOf(p);
          return found !== undefined && found.session === session ? [found.post] : [];
        }),
      );
    const events = stream.response?.events ?? [];
    for (const { exchange, events: indexes } of answers) {
      const post = byId.get(exchange);
      if (post === undefined) continue;
      const messages: TimedMessage[] = [];
      for (const i of indexes) {
        const ev = events[i];
        if (ev === undefined) continue;
        const message = messageOf(ev.data);
        if (message !== undefined) messages.push({ offsetMs: Math.max(0, stream.offsetMs + ev.offsetMs - post.offsetMs), message });
      }
      out.set(exchange, messages);
    }
  }
  return out;
}
