/**
 * The client's side of a conversation the server started in the middle of a call. A server may ask the client
 * something before it answers (`elicitation/create`, `sampling/createMessage`, `roots/list`, a `ping`): the recorded
 * answer carries that request, and the client's reply is an exchange of its own on the tape (method
 * `tapedeck/response`). Replay holds the client to the reply it gave while recording: the recorded answer's result
 * is served only when the client answers the same way (`transports/mcp/conversation.ts`).
 *
 * A reply is paired with its request here, once per tape: the same route, the same session when the call had one, the
 * JSON-RPC id of the server's request, and the first such reply at or after the call began. Replies are compared as
 * requests are matched: the canonical exact key (`exact-key.ts`) with the matcher's ignore rules (the JSON-RPC id and
 * `_meta` never count), and what differs is said field by field, as a miss report says it (`explain.ts`).
 */
import { RESPONSE_METHOD, STREAM_METHOD, type Message, type RequestId, type TimedMessage } from '../providers/mcp.js';
import { bodyJson } from '../tape/body.js';
import type { Exchange } from '../tape/schema.js';
import type { KeyedRequest } from './exact-key.js';
import { explainCandidates } from './explain.js';
import type { Matcher } from './matcher.js';

/** A recorded server request and the client's reply to it, on the tape. */
export interface RecordedReply {
  /** The server's request, as recorded (its id is the one the client answered). */
  request: Message;
  /** The client's reply, as recorded. */
  reply: Message;
  /** The exchange the reply is on. */
  exchange: Exchange;
}

export interface ClientReplies {
  /** The client's recorded reply to `request`, a server request carried by the answer of `source`; undefined when none is on the tape. */
  replyTo(source: Exchange, request: Message): RecordedReply | undefined;
  /**
   * Server requests recorded on the session's standalone stream (a GET) while `source` was open, with their offsets
   * from its start: a server that asks outside the call's own answer (the SDK's `server.elicitInput` does) still asked
   * because of the call. Replay has no standalone stream, so they go out with the call's answer.
   */
  askedDuring(source: Exchange): TimedMessage[];
}

/** A server request: a message with a method and an id (a notification has no id, a response no method). */
export function isServerRequest(message: Message): boolean {
  return typeof message.method === 'string' && message.id !== undefined && message.id !== null;
}

/** Index the client's replies on a tape (the exchanges whose request is a JSON-RPC response). */
export function indexClientReplies(exchanges: readonly Exchange[]): ClientReplies {
  const byKey = new Map<string, { ex: Exchange; reply: Message }[]>();
  // Server requests on standalone streams, by session, with their time on the tape's timeline.
  const asked = new Map<string, { at: number; message: Message }[]>();
  for (const ex of exchanges) {
    if (ex.mcp?.method === STREAM_METHOD && ex.mcp.transport === 'streamable-http' && ex.mcp.sessionId !== undefined) {
      const list = asked.get(ex.mcp.sessionId) ?? [];
      for (const n of ex.mcp.notifications) {
        const message = n.message as Message;
        if (isServerRequest(message)) list.push({ at: ex.offsetMs + n.offsetMs, message });
      }
      asked.set(ex.mcp.sessionId, list);
      continue;
    }
    if (ex.mcp?.method !== RESPONSE_METHOD) continue;
    const reply = bodyJson(ex.request.body) as Message | undefined;
    if (reply === undefined || reply.id === undefined) continue;
    const key = replyKey(ex.route, reply.id as RequestId);
    const list = byKey.get(key) ?? [];
    list.push({ ex, reply });
    byKey.set(key, list);
  }
  return {
    replyTo(source, request) {
      const list = byKey.get(replyKey(source.route, request.id as RequestId));
      const session = source.mcp?.sessionId;
      const found = list?.find(
        (r) =>
          r.ex.offsetMs >= source.offsetMs &&
          (session === undefined || r.ex.mcp?.sessionId === undefined || r.ex.mcp.sessionId === session),
      );
      return found && { request, reply: found.reply, exchange: found.ex };
    },
    askedDuring(source) {
      const session = source.mcp?.sessionId;
      if (session === undefined || source.mcp?.method === STREAM_METHOD) return [];
      const end = source.offsetMs + source.timing.durationMs;
      return (asked.get(session) ?? [])
        .filter((a) => a.at >= source.offsetMs && a.at <= end)
        .map((a) => ({ offsetMs: Math.round((a.at - source.offsetMs) * 1000) / 1000, message: a.message }));
    },
  };
}

function replyKey(route: string, id: RequestId): string {
  return `${route}\n${typeof id}:${String(id)}`;
}

/**
 * How the client's reply now differs from the recorded one, field by field (`result.action: "accept" vs "decline"`:
 * recorded, then now); empty when they are the same by the matcher's rules.
 */
export function replyDifferences(recorded: RecordedReply, now: Message, matcher: Matcher): string[] {
  const as = (m: Message): KeyedRequest => ({
    route: recorded.exchange.route,
    request: { method: 'POST', path: '/', query: [], body: { kind: 'json', json: m } },
  });
  if (matcher.key(as(recorded.reply)) === matcher.key(as(now))) return [];
  const then = { ...recorded.exchange, request: { ...recorded.exchange.request, ...as(recorded.reply).request } };
  const differences = explainCandidates(as(now), [then], 1)[0]?.differences ?? [];
  // `body.result.action` reads as the reply's own field.
  const shown = differences.map((d) => d.replace(/^body\./, ''));
  return shown.length > 0 ? shown : ['the reply differs'];
}
