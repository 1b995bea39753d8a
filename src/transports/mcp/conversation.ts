/**
 * A recorded answer that asks the client something on the way (`elicitation/create`, `sampling/createMessage`,
 * `roots/list`): replay plays the server's side of that conversation. The answer goes out up to the server's request;
 * then replay waits for the client's reply and holds it to the reply the client gave while recording
 * (`replay/mcp-replies.ts`). The same reply: the rest of the recorded answer follows. Another reply: the recorded
 * result is not served as if nothing had changed; the call is a miss (strict: a JSON-RPC error naming what the client
 * answered differently; lenient: an `isError` tool result), on the replay tape as one. No reply (the client left, or
 * took longer than the wait): a miss that says so.
 *
 * Only a request sent alone converses (a JSON-RPC batch is answered in one piece, as before), and only where the tape
 * holds the client's recorded reply.
 */
import { TapedeckError } from '../../errors.js';
import { rpcErrorMessage } from '../../providers/errors.js';
import type { Message, RequestId, TimedMessage } from '../../providers/mcp.js';
import { isServerRequest, replyDifferences, type ClientReplies, type RecordedReply } from '../../replay/mcp-replies.js';
import type { Matcher } from '../../replay/matcher.js';
import type { OnMiss } from '../../replay/modes.js';
import { toolVerdict } from '../../replay/mcp-answer.js';
import type { SideEffectPolicy } from '../../replay/side-effects.js';
import type { Decision } from './engine.js';

/** One server request of an answer, where it is among the answer's messages, and the client's recorded reply. */
export interface Turn {
  /** Index of the server request in the decision's messages. */
  at: number;
  recorded: RecordedReply;
}

/**
 * The conversation of a decided answer: its server requests the tape holds a reply to (none: it is sent as it is),
 * and the decision with the messages it goes out with. A server request the recording has on the session's
 * standalone stream while the call was open joins the call's answer, at its offset, before the answer itself.
 */
export function conversationOf(d: Decision, replies: ClientReplies | undefined): { decision: Decision; turns: Turn[] } {
  if (replies === undefined || d.kind !== 'answered' || d.source === undefined) return { decision: d, turns: [] };
  const source = d.source;
  const elsewhere = replies.askedDuring(source).filter((m) => replies.replyTo(source, m.message) !== undefined);
  const decision = elsewhere.length === 0 ? d : { ...d, messages: withAsked(d.messages, elsewhere) };
  const turns: Turn[] = [];
  decision.messages.forEach((m, at) => {
    if (!isServerRequest(m.message)) return;
    const recorded = replies.replyTo(source, m.message);
    if (recorded !== undefined) turns.push({ at, recorded });
  });
  return { decision, turns };
}

/** The answer's messages with the server requests sent elsewhere put in at their offsets (never after the answer). */
function withAsked(messages: readonly TimedMessage[], asked: readonly TimedMessage[]): TimedMessage[] {
  const out = messages.slice(0, -1);
  for (const a of asked) {
    const at = out.findIndex((m) => m.offsetMs > a.offsetMs);
    out.splice(at === -1 ? out.length : at, 0, a);
  }
  const last = messages.at(-1);
  return last === undefined ? out : [...out, last];
}

/** What a client's reply (or its silence) made of a turn: the answer goes on, or the call is a miss. */
export type TurnOutcome = { same: true } | { same: false; reason: string };

/** Hold the client's reply to one turn against the recorded reply. */
export function judgeReply(turn: Turn, reply: Message | undefined, matcher: Matcher, waitedMs: number): TurnOutcome {
  const method = String(turn.recorded.request.method);
  if (reply === undefined)
    return {
      same: false,
      reason: `the client did not answer the server's ${method} (waited ${Math.round(waitedMs / 1000)} s, or it left)`,
    };
  const differences = replyDifferences(turn.recorded, reply, matcher);
  if (differences.length === 0) return { same: true };
  return {
    same: false,
    reason: `the client answered the server's ${method} differently from the recording (recorded vs now: ${differences.slice(0, 3).join('; ')})`,
  };
}

/**
 * The decision a call becomes when the client answered a turn differently: what was sent so far, then a miss in the
 * shape the miss policy asks for (strict: a JSON-RPC error; lenient: a tool call's `isError` result).
 */
export function missedTurn(d: Decision, sent: readonly TimedMessage[], reason: string, opts: { onMiss: OnMiss; tape: string }): Decision {
  const id = d.message.id as RequestId;
  const asked =
    d.message.method === 'tools/call' ? `tools/call "${String((d.message.params as { name?: unknown }).name)}"` : String(d.message.method);
  const miss = new TapedeckError(
    'TAPE_MISS',
    `tapedeck: the recording of ${asked} on tape "${opts.tape}" does not apply: ${reason} (on-miss ${opts.onMiss}).`,
    { details: { tape: opts.tape, onMiss: opts.onMiss, reason, source: d.source?.id } },
  );
  const toolResult = opts.onMiss === 'lenient' && d.message.method === 'tools/call';
  const last = sent.at(-1)?.offsetMs ?? 0;
  return {
    kind: 'answered',
    from: 'miss',
    message: d.message,
    messages: [...sent, { offsetMs: last, message: rpcErrorMessage(miss, id, { toolResult }) }],
    // No `source`: the recording was not served (so --expect and diff count its call as not made); its id is in the reason.
    match: { kind: 'miss', stage: 'mcp-server-request', reason: d.source ? `${reason}; recording #${d.source.id} not served` : reason },
    ...(d.source ? { source: d.source } : {}),
    at: performance.now(),
  };
}

/**
 * Whether a call whose conversation differed may go to the real server (`--on-miss live`): as for any miss, a tool
 * call only when a reviewed side-effects file marks its tool safe. Undefined when it may; else why not.
 */
export function whyNotLive(message: Message, policy: SideEffectPolicy): string | undefined {
  const tool = toolVerdict(message, policy);
  if (tool === undefined) return undefined;
  const run = policy.liveTool(tool.tool);
  return run.sideEffect ? run.reason : undefined;
}

/** A server request replay sent, waiting for the client's reply. */
interface Waiter {
  transport: object;
  id: RequestId;
  resolve(reply: Message | undefined): void;
}

/**
 * The server requests replay is waiting on, across the transports of one replay server: a client's reply (a JSON-RPC
 * response) goes to the request it answers, on its own transport first (a session), else the oldest waiting with its
 * id (a server without sessions takes each POST on a transport of its own).
 */
export class ClientAnswers {
  private readonly waiting: Waiter[] = [];

  /** Wait for the reply to `id` sent on `transport`; undefined after `ms` or once abandoned. Register before sending. */
  wait(transport: object, id: RequestId, ms: number): Promise<Message | undefined> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        transport,
        id,
        resolve: (reply) => {
          clearTimeout(timer);
          const at = this.waiting.indexOf(waiter);
          if (at !== -1) this.waiting.splice(at, 1);
          resolve(reply);
        },
      };
      const timer = setTimeout(() => waiter.resolve(undefined), ms);
      timer.unref();
      this.waiting.push(waiter);
    });
  }

  /** A client's response: true when a waiting request took it. */
  take(transport: object, message: Message): boolean {
    if (typeof message.method === 'string' || message.id === undefined) return false;
    const same = this.waiting.find((w) => w.transport === transport && w.id === message.id);
    const any = same ?? this.waiting.find((w) => w.id === message.id);
    any?.resolve(message);
    return any !== undefined;
  }

  /** Stop waiting (tapedeck stops): each waiting turn ends as unanswered. */
  abandon(): void {
    for (const w of [...this.waiting]) w.resolve(undefined);
  }
}
