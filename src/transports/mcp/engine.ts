/**
 * The MCP replay engine: the one place a client's messages are decided, whatever carried them (a stdio line, a Streamable HTTP POST, a legacy HTTP+SSE POST). Each message, alone or in a
 * JSON-RPC batch, gets the decision a single message gets (`answerMessage`): accepted (a notification, or the
 * client's answer to a server request), answered (from the tape, a mock, blocked, a miss), or forwarded live (a safe
 * request the tape cannot answer, when misses go live). A live forward that cannot happen becomes a JSON-RPC error
 * and a miss.
 *
 * A decision is a value (`engine/decision.ts`): nothing is sent or written here. The replay server (`server.ts`) settles
 * each message through the engine (`engine/settle.ts`: a fault rule may answer in its place; the tee records it).
 */
import { TapedeckError } from '../../errors.js';
import { rpcErrorMessage } from '../../providers/errors.js';
import { requestId, type Message, type TimedMessage } from '../../providers/mcp.js';
import { answerMessage, type AnswerOptions } from '../../replay/mcp-answer.js';
import type { IncomingRequest } from '../../replay/matcher.js';
import type { Exchange, MatchInfo } from '../../tape/schema.js';
import type { AnswerFrom, Decision as EngineDecision } from '../../engine/decision.js';

/** What a live forward brought back. */
export interface Forwarded {
  /** The messages the real server sent for the request: notifications first, its answer last. */
  messages: TimedMessage[];
  /** The transport already wrote the replay tape's exchange (an HTTP live forward records what the server sent). */
  recorded: boolean;
  /** The answer came as an SSE stream (HTTP). */
  sse?: boolean;
  /** The live answer already went to the client as it came, unread (one HTTP message): nothing is left to send. */
  sent?: boolean;
}

/** How one client message is decided: with what, and how a miss goes live. */
export interface McpContext {
  /** The tape, matcher, side-effect policy and miss policy a message is decided with. */
  answer: AnswerOptions;
  /** The matcher's view of one client message. */
  incoming(message: Message): IncomingRequest;
  /** Forward a safe miss to the real server. Absent: misses cannot go live here, see `noLive`. */
  live?: ((message: Message) => Promise<Forwarded>) | undefined;
  /** Why a miss cannot go live on this transport (when `live` is absent). */
  noLive?: string | undefined;
}

/** What one client message got. */
export interface Decision extends EngineDecision {
  kind: 'accepted' | 'answered' | 'forwarded';
  message: Message;
  /** What to send back: notifications first, the answer last (none when accepted; none when `forwarded.sent`). */
  messages: TimedMessage[];
  match: MatchInfo;
  /** The recorded exchange the answer came from. */
  source?: Exchange;
  forwarded?: Forwarded;
  /** `performance.now()` when the decision was made (the exchange's duration ends there). */
  at: number;
}

/** Where an answer of this kind, found so, comes from (the engine's terms). */
export function answerFrom(kind: Decision['kind'], match: MatchInfo): AnswerFrom {
  if (kind === 'accepted') return 'accepted';
  if (kind === 'forwarded') return 'live';
  if (match.kind === 'mock' || match.kind === 'blocked' || match.kind === 'miss' || match.kind === 'fault') return match.kind;
  return 'tape';
}

/** A decided message: how it was found, with `notes.blocked` for a side effect blocked. */
function decided(
  kind: Decision['kind'],
  message: Message,
  messages: TimedMessage[],
  match: MatchInfo,
  more: Partial<Decision> = {},
): Decision {
  const notes = match.kind === 'blocked' ? { blocked: match.reason } : undefined;
  return { kind, from: answerFrom(kind, match), message, messages, match, ...(notes ? { notes } : {}), ...more, at: performance.now() };
}

/** Decide one client message: answered from the tape (or a mock), blocked, a miss, accepted, or forwarded live. */
export async function decide(message: Message, ctx: McpContext): Promise<Decision> {
  const outcome = await answerMessage(message, () => ctx.incoming(message), ctx.answer);
  if (outcome.kind === 'accepted') return decided('accepted', message, [], outcome.match);
  if (outcome.kind === 'answer') {
    const { messages, match, source } = outcome;
    return decided('answered', message, messages, match, source ? { source } : {});
  }
  let reason = ctx.noLive ?? 'live forwarding is not available here';
  if (ctx.live !== undefined) {
    try {
      const forwarded = await ctx.live(message);
      return decided('forwarded', message, forwarded.messages, outcome.match, { forwarded });
    } catch (err) {
      reason = `live forwarding could not reach the server: ${(err as Error).message}`;
    }
  }
  const unavailable = new TapedeckError('LIVE_UNAVAILABLE', `tapedeck: ${reason}`);
  const messages = [{ offsetMs: 0, message: rpcErrorMessage(unavailable, requestId(message) ?? null) }];
  return decided('answered', message, messages, { kind: 'miss', reason });
}

/** Decide every message of what a client sent (one message, or a JSON-RPC batch), in order, each as if sent alone. */
export async function decideAll(messages: readonly Message[], ctx: McpContext): Promise<Decision[]> {
  const out: Decision[] = [];
  for (const message of messages) out.push(await decide(message, ctx));
  return out;
}
