/**
 * A decision is a value: where a call's answer comes from, how it was found, and notes, decided before anything is
 * sent or written. Every transport decides with these (HTTP in `transports/http/decide.ts`, MCP message by message in
 * `transports/mcp/engine.ts`, a WebSocket session in `transports/websocket/player.ts`; record decides `live` for every
 * call), and one function acts on a decision (`settle.ts`): a fault may take the answer's place, the transport sends
 * it in its framing, and the tee (`tee.ts`) records it. A transport adds what it needs to send (a recorded exchange, a
 * JSON-RPC message, a mock's body) to its own decision type, which extends this one.
 */
import type { Exchange, MatchInfo } from '../tape/schema.js';

/**
 * Where an answer comes from: the upstream (`live`), the tape, a mock (or a responder's own answer), a fault rule, a
 * miss, a side effect blocked, or nothing to answer (`accepted`: a notification, a client's own answer).
 */
export type AnswerFrom = 'live' | 'tape' | 'mock' | 'fault' | 'miss' | 'blocked' | 'accepted';

export interface Decision {
  from: AnswerFrom;
  /** How the answer was found, as a replay tape records it (a recording has none, but for an injected answer). */
  match?: MatchInfo | undefined;
  notes?: Record<string, unknown> | undefined;
  /** The recorded exchange the answer comes from (`tape`). */
  source?: Exchange | undefined;
}

/**
 * What a fault rule does to a call (`engine/faults/fault-rules.ts`'s `then`), as the settle hands it to a transport:
 * an answer in the call's place, which the transport frames in its own way (an HTTP status in the provider's error
 * shape, a reset, an MCP tool error or JSON-RPC error, a WebSocket close), or a disturbance of the answer the call
 * gets (a slow first byte or slow events, a cut, a close after N messages). Picked once, by the settle.
 */
export interface Injected {
  /** The rule, in a few words (`#1 openai call 2 -> 429`): for the tape and the logs. */
  rule: string;
  status?: number | undefined;
  retryAfter?: number | undefined;
  message?: string | undefined;
  reset?: true | undefined;
  toolError?: string | undefined;
  rpcError?: { code: number; message: string } | undefined;
  cut?: { afterEvents?: number | undefined; afterBytes?: number | undefined } | undefined;
  delay?: { firstByteMs?: number | undefined; betweenEventsMs?: number | undefined } | undefined;
  close?: { code: number; reason?: string | undefined; afterMessages?: number | undefined } | undefined;
}

/** Whether a fault answers in the call's place (the answer is tapedeck's, never the upstream's) rather than disturbing it. */
export function replacesAnswer(fault: Injected): boolean {
  return fault.status !== undefined || fault.reset === true || fault.toolError !== undefined || fault.rpcError !== undefined;
}

/** How an injected answer is marked on the tape: `match.kind: "fault"`, never served as the upstream's. */
export function injectedMatch(fault: Injected): MatchInfo {
  return { kind: 'fault', reason: `injected by fault rule ${fault.rule}` };
}
