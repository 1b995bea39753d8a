/**
 * The boundary between the MCP replay server (`server.ts`) and what carries messages to and from a client, in the MCP
 * SDK's `Transport` shape (start / send / close, with onmessage / onerror / onclose), so that the SDK's own transports
 * plug in (tests drive the stdio replay through `InMemoryTransport`). Three transports implement it, each doing framing
 * only: Streamable HTTP (`streamable-http.ts`), the legacy HTTP+SSE transport (`legacy-sse.ts`) and stdio
 * (`stdio/replay-transport.ts`).
 *
 * Where it differs from the SDK's interface:
 * - JSON-RPC batches (MCP 2025-03-26), which the SDK no longer carries: a batch arrives as one array of messages.
 *   The server always sends message by message; a transport that answers a batch in one piece (stdio's one line,
 *   Streamable HTTP's one array or stream) puts the answers together itself.
 * - `send(message, { relatedRequestId, offsetMs, decision })`: as the SDK's `StreamableHTTPServerTransport` takes
 *   it, `relatedRequestId` says which request a message belongs to (its answer, or a notification sent while it was
 *   open); `decision` is the server's decision for that request, whose `message` is the request itself, the key by
 *   which an answer finds the POST (or batch) it belongs to even when two open requests share a JSON-RPC id; it also
 *   says how the answer was found and recorded (HTTP shows it in headers, answers with the recorded status and
 *   framing). `offsetMs` is the message's recorded offset, for transports that pace (`pace.ts`). `more`: the
 *   request's messages come in parts, the next once the client has answered the server's request (`conversation.ts`).
 * - A message that cannot be read (not JSON, not JSON-RPC, a line over the limit) goes to `onerror` as a
 *   `TapedeckError` with the text it was, so it can be answered and recorded.
 *
 * `ReplayTransport` adds the tape's view of what a transport carries: the `Call` of a message (the request as the
 * tape records it) and the `Answer` of what was sent for it, from which the server makes the replay tape's record.
 */
import type { TapedeckError } from '../../errors.js';
import type { Call } from '../../engine/call.js';
import type { Answer } from '../../engine/record.js';
import type { Message, RequestId } from '../../providers/mcp.js';
import type { IncomingRequest } from '../../replay/matcher.js';
import type { Decision, Forwarded } from './engine.js';

export interface McpSendOptions {
  /** The request the message belongs to: its answer, or a notification or server request sent while it was open. */
  relatedRequestId?: RequestId | undefined;
  /** Its offset from the request's start, as recorded (or as the live server sent it): the pace it goes out at. */
  offsetMs?: number | undefined;
  /** What the server decided for that request. */
  decision?: Decision | undefined;
  /**
   * More messages for that request follow once the client has answered a server request (`conversation.ts`): a
   * transport that would send a request's messages together (Streamable HTTP) sends this one now, and the rest as they
   * come, until the request's answer.
   */
  more?: boolean | undefined;
}

export interface McpTransport<Extra = unknown> {
  start(): Promise<void>;
  /** Resolves once the transport has taken the message (see each transport for when it is on the wire); sends keep their order. */
  send(message: Message | Message[], options?: McpSendOptions): Promise<void>;
  close(): Promise<void>;
  // Callbacks in method syntax, so the SDK's transports (whose callbacks take one `JSONRPCMessage`, a plain
  // `Error`) are assignable to this interface.
  /**
   * One message, or a JSON-RPC batch, with what the transport knows of where it came from (`extra`, passed back to
   * `callOf` and `answerOf`). A returned promise holds the next message back until it settles.
   */
  onmessage?(message: Message | Message[], extra?: Extra): void | Promise<void>;
  /** A message that could not be read, with the text it was when there is one (none for a line over the limit). */
  onerror?(error: TapedeckError, unread?: { text?: string }): void | Promise<void>;
  onclose?(): void;
}

/** A transport the replay server drives: framing, plus how what it carries goes on the replay tape. */
export interface ReplayTransport<Extra> extends McpTransport<Extra> {
  /** The matcher's view of one message that came with `extra`. */
  incoming(message: Message, extra: Extra): IncomingRequest;
  /** The call a message that came with `extra` is on the tape. */
  callOf(message: Message, extra: Extra): Call;
  /**
   * What goes out for a decided message, as the tape records it; `all`: every decision of the message or batch it
   * came in (Streamable HTTP frames a batch's answers as one). Asked before any of it is sent.
   */
  answerOf(decision: Decision, call: Call, extra: Extra, all: readonly Decision[]): Answer;
  /** Forward a safe request the tape cannot answer to the real server; absent where misses cannot go live. */
  readonly live?: ((message: Message, extra: Extra) => Promise<Forwarded>) | undefined;
  /** Why a miss cannot go live here (when `live` is absent). */
  readonly noLive?: string;
  /**
   * Forward a request whose answer is already under way (a conversation the client answered differently) to the real
   * server, its answer continuing the one sent so far, the server's own requests relayed to the client and the
   * client's replies back; resolves once the answer has ended. `reason` goes on the replay tape. Absent where a live
   * answer cannot continue one under way.
   */
  readonly continueLive?: ((message: Message, extra: Extra, reason: string) => Promise<void>) | undefined;
}
