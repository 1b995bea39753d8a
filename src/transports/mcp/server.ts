/**
 * The MCP replay server: tapedeck's side of an MCP connection in replay, whatever transport carries it (Streamable
 * HTTP, the legacy HTTP+SSE transport, stdio). For each message or JSON-RPC batch a transport hands it, it settles
 * every message through the engine (`engine/settle.ts`'s `decideCall`: a fault rule picked there answers in the
 * message's place, else `engine.ts` decides it from the tape, a mock, blocked, a miss, or live), commits each record
 * through its tee (from the call and the answer its transport describes) and, once every record is on the tape, sends
 * what each got (notifications first, the answer last, each with the request it belongs to): what a client has, the
 * tape has first. A blocked side effect carries `notes.blocked`; a blocked call or a miss is logged. What a transport
 * does itself: framing, its own errors (HTTP statuses, sessions, a line it cannot read), and how a miss goes live there.
 */
import type { Logger } from '../../log.js';
import { TapedeckError } from '../../errors.js';
import { rpcErrorMessage } from '../../providers/errors.js';
import type { Message, RequestId, TimedMessage } from '../../providers/mcp.js';
import type { AnswerOptions } from '../../replay/mcp-answer.js';
import type { ExchangeLog } from '../../engine/exchange-log.js';
import { injectedMatch } from '../../engine/decision.js';
import { decideCall, faultRpcAnswer, type Decided, type FaultFacts, type SettleContext, type SettlePort } from '../../engine/settle.js';
import { createTee } from '../../engine/tee.js';
import { decide, type Decision, type McpContext } from './engine.js';
import { isRequestMessage } from '../../providers/mcp-batch.js';
import type { ReplayTransport } from './transport.js';
import type { ClientReplies } from '../../replay/mcp-replies.js';
import { ClientAnswers, conversationOf, judgeReply, missedTurn, whyNotLive, type Turn } from './conversation.js';

/** How long replay waits for the client to answer a server request by default (a person may be asked). */
export const REPLY_WAIT_MS = 300_000;

export interface McpServerOptions {
  /** The tape, matcher, side-effect policy and miss policy messages are decided with. */
  answer: AnswerOptions;
  /** The replay tape. */
  out: ExchangeLog;
  log: Logger;
  /** Faults injected into the run (`--faults`): a request a rule picks gets a tool error or a JSON-RPC error instead. */
  faults?: SettleContext['faults'];
  /** Once the replay tape cannot be written: refuse what could not be recorded (default) or serve it. */
  onTapeFailure?: SettleContext['onTapeFailure'];
  /**
   * The client's recorded replies to the server's requests (`replay/mcp-replies.ts`): an answer that asks the client
   * something waits for the client's reply and serves the recording only when it is the same (`conversation.ts`).
   * Absent: server requests are sent and whatever the client answers is accepted.
   */
  replies?: ClientReplies | undefined;
  /** How long to wait for a client's reply to a server request (default {@link REPLY_WAIT_MS}). */
  replyWaitMs?: number | undefined;
}

export class McpReplayServer {
  /** Server requests sent, waiting for the client's reply. */
  private readonly answers = new ClientAnswers();
  /** Conversations still going (a call waiting on the client): shutdown waits for their records. */
  private readonly talks = new Set<Promise<void>>();

  constructor(private readonly opts: McpServerOptions) {}

  /** Stop waiting on clients (tapedeck stops): each conversation still going ends as a miss, on the tape. */
  async drain(): Promise<void> {
    this.answers.abandon();
    await Promise.all([...this.talks]);
  }

  /** Serve `transport`: its messages are decided and answered from now on. Resolves once it has started. */
  connect<Extra>(transport: ReplayTransport<Extra>): Promise<void> {
    transport.onmessage = (value, extra) => this.receive(transport, value, extra as Extra);
    return transport.start();
  }

  /** One message or a batch: each message settled as if sent alone, its record committed, then what it got sent. */
  private async receive<Extra>(transport: ReplayTransport<Extra>, value: Message | Message[], extra: Extra): Promise<void> {
    const live = transport.live;
    const ctx: McpContext = {
      answer: this.opts.answer,
      incoming: (message) => transport.incoming(message, extra),
      live: live && ((message) => live(message, extra)),
      noLive: transport.noLive,
    };
    const settled: Decided<Decision>[] = [];
    for (const message of Array.isArray(value) ? value : [value])
      settled.push(await decideCall(this.port(transport, message, extra, ctx), this.settleContext));
    const only = Array.isArray(value) ? undefined : settled[0];
    const talk = only === undefined ? undefined : conversationOf(only.decision, this.opts.replies);
    if (only !== undefined && talk !== undefined && talk.turns.length > 0)
      return this.converse(transport, { ...only, decision: talk.decision }, extra, talk.turns);
    // On the tape first, in order (a client may answer before this call returns), then sent.
    const decisions = settled.map((s) => s.decision);
    const committed = settled.map((s) => this.commit(transport, s, extra, decisions));
    // A client's reply to a server request (on its way to the tape, as accepted) goes to the conversation waiting for it.
    for (const d of decisions) if (d.kind === 'accepted') this.answers.take(transport, d.message);
    const kept = await Promise.all(committed);
    for (const [i, d] of decisions.entries()) await this.send(transport, kept[i] === true ? d : this.unrecorded(d));
  }

  /** Send what a message got: each message with the request it belongs to. */
  private async send<Extra>(transport: ReplayTransport<Extra>, d: Decision): Promise<void> {
    const relatedRequestId = d.kind === 'accepted' ? undefined : (d.message.id as RequestId);
    for (const m of d.messages) await transport.send(m.message, { relatedRequestId, offsetMs: m.offsetMs, decision: d });
  }

  /**
   * A message's part in the settle: what a fault rule matches it on (a request: its method and tool), the rule's
   * answer in MCP's terms (a tool error, or a JSON-RPC error: never from the tape, so a client that retries gets the
   * recorded answer), the decision, and its call as the replay tape records it.
   */
  private port<Extra>(transport: ReplayTransport<Extra>, message: Message, extra: Extra, ctx: McpContext): SettlePort<Decision> {
    let call: ReturnType<typeof transport.callOf> | undefined;
    const callOf = (): ReturnType<typeof transport.callOf> => (call ??= transport.callOf(message, extra));
    return {
      faultFacts: () =>
        this.opts.faults === undefined || !isRequestMessage(message)
          ? undefined
          : { facts: mcpFaultFacts(callOf().route, message), levels: ['mcp'] },
      injected: (fault) => ({
        kind: 'answered',
        from: 'fault',
        message,
        messages: [{ offsetMs: 0, message: faultRpcAnswer(fault, message) }],
        match: injectedMatch(fault),
        at: performance.now(),
      }),
      decide: () => decide(message, ctx),
      recorded: () => ({ call: callOf() }),
    };
  }

  private get settleContext(): SettleContext {
    return { log: this.opts.out, faults: this.opts.faults, onTapeFailure: this.opts.onTapeFailure };
  }

  /**
   * An answer that asks the client something: sent up to each server request, then the client's reply is held to the
   * recorded one (`conversation.ts`). Resolves once the first server request is sent (so a transport that takes one
   * message at a time, as stdio does, can take the client's reply); the conversation goes on from there, and its
   * call goes on the tape when it ends, before its last message is sent.
   */
  private converse<Extra>(transport: ReplayTransport<Extra>, d: Decided<Decision>, extra: Extra, turns: Turn[]): Promise<void> {
    let asked!: () => void;
    const first = new Promise<void>((resolve) => (asked = resolve));
    const talk = this.talk(transport, d, extra, turns, asked)
      .catch((err: unknown) => this.opts.log.error({ err: (err as Error).message }, 'mcp replay conversation failed'))
      .finally(() => {
        asked();
        this.talks.delete(talk);
      });
    this.talks.add(talk);
    return first;
  }

  private async talk<Extra>(
    transport: ReplayTransport<Extra>,
    settled: Decided<Decision>,
    extra: Extra,
    turns: Turn[],
    asked: () => void,
  ): Promise<void> {
    const d = settled.decision;
    const relatedRequestId = d.message.id as RequestId;
    const wait = this.opts.replyWaitMs ?? REPLY_WAIT_MS;
    const sent: TimedMessage[] = [];
    const send = (m: TimedMessage, more: boolean): Promise<void> => {
      sent.push(m);
      return transport.send(m.message, { relatedRequestId, offsetMs: m.offsetMs, decision: d, more });
    };
    let next = 0;
    for (const turn of turns) {
      for (; next < turn.at; next++) await send(d.messages[next] as TimedMessage, true);
      const request = d.messages[next++] as TimedMessage;
      const reply = this.answers.wait(transport, request.message.id as RequestId, wait);
      await send(request, true);
      asked();
      const outcome = judgeReply(turn, await reply, this.opts.answer.matcher, wait);
      if (!outcome.same) return this.differed(transport, settled, extra, sent, outcome.reason);
    }
    const done: Decision = { ...d, at: performance.now() };
    if (!(await this.commit(transport, { ...settled, decision: done }, extra, [done])))
      return send(this.unrecorded(done).messages[0] as TimedMessage, false);
    for (; next < d.messages.length; next++) await send(d.messages[next] as TimedMessage, next < d.messages.length - 1);
  }

  /**
   * The client answered a turn differently: the recorded result is not served. Misses going live forward the call to
   * the real server, its answer continuing the one under way (where the transport can, and the call is safe to run);
   * else the call is a miss, in the shape the miss policy asks for.
   */
  private async differed<Extra>(
    transport: ReplayTransport<Extra>,
    settled: Decided<Decision>,
    extra: Extra,
    sent: TimedMessage[],
    reason: string,
  ): Promise<void> {
    const d = settled.decision;
    const { onMiss, policy, tapeName } = this.opts.answer;
    let why = reason;
    if (onMiss === 'live') {
      const unsafe = whyNotLive(d.message, policy);
      const cannot =
        unsafe ??
        (transport.continueLive === undefined ? 'live forwarding is not available mid-conversation on this transport' : undefined);
      if (cannot === undefined && transport.continueLive !== undefined) {
        this.opts.log.info({ method: d.message.method, match: 'live', reason }, 'mcp replay');
        return transport.continueLive(d.message, extra, `${reason}; forwarded to the real server (on-miss live)`);
      }
      why = `${reason}; not forwarded live: ${cannot ?? ''}`;
    }
    const found = missedTurn(d, sent, why, { onMiss, tape: tapeName });
    // A miss now, not what was decided: its own tee, as the miss it is.
    const tee = createTee(this.opts.out, settled.call, { match: found.match, onTapeFailure: this.opts.onTapeFailure });
    const missed = (await this.commit(transport, { ...settled, tee, decision: found }, extra, [found])) ? found : this.unrecorded(found);
    await transport.send(missed.messages.at(-1)?.message as Message, { relatedRequestId: d.message.id as RequestId, decision: missed });
  }

  /**
   * Commit what a message got to the replay tape, unless its live forward already did (through a settle of its own);
   * log a blocked call or a miss. Resolves true once the client may have it (false: the tape could not take it).
   */
  private commit<Extra>(transport: ReplayTransport<Extra>, s: Decided<Decision>, extra: Extra, all: readonly Decision[]): Promise<boolean> {
    const d = s.decision;
    if (d.match.kind === 'blocked' || d.match.kind === 'miss')
      this.opts.log.info({ method: d.message.method, match: d.match.kind, reason: d.match.reason }, 'mcp replay');
    if (d.forwarded?.recorded === true) return Promise.resolve(true);
    const committed = s.tee.commit(transport.answerOf(d, s.call, extra, all));
    // Shutdown waits for it (the tee's commit is the caller's to track).
    this.opts.out.track(committed);
    return committed;
  }

  /**
   * What a message gets when its record could not go on the replay tape (and the run does not serve unrecorded
   * answers): not the answer, which the tape does not have, but a JSON-RPC error saying why; nothing for a
   * notification.
   */
  private unrecorded(d: Decision): Decision {
    if (d.kind === 'accepted') return { ...d, messages: [] };
    const failed = this.opts.out.writer.failure;
    const err = new TapedeckError(
      'TAPE_WRITE_FAILED',
      `tapedeck: the replay tape cannot be written, so this answer is not served${failed ? ` (${failed.message})` : ''}`,
    );
    return { ...d, messages: [{ offsetMs: 0, message: rpcErrorMessage(err, d.message.id as RequestId) }] };
  }
}

/** What a fault rule can match an MCP request on: its route, its method, and the tool a `tools/call` names. */
export function mcpFaultFacts(route: string, message: Message): FaultFacts {
  const tool = message.method === 'tools/call' ? (message.params as { name?: unknown } | undefined)?.name : undefined;
  return { route, method: String(message.method), tool: typeof tool === 'string' ? tool : undefined };
}
