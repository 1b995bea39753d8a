/**
 * The MCP replay server: tapedeck's side of an MCP connection in replay, whatever transport carries it (Streamable
 * HTTP, the legacy HTTP+SSE transport, stdio). For each message or JSON-RPC batch a transport hands it, it decides
 * every message (`engine.ts`: from the tape, a mock, blocked, a miss, or live), sends what each got (notifications
 * first, the answer last, each with the request it belongs to), and writes each decision to the replay tape through
 * `exchangeRecord`, from the call and the answer its transport describes. A blocked side effect carries
 * `notes.blocked`; a blocked call or a miss is logged. What a transport does itself: framing, its own errors
 * (HTTP statuses, sessions, a line it cannot read), and how a miss goes live there.
 */
import { exchangeRecord } from '../../engine/record.js';
import type { Logger } from '../../log.js';
import { rpcError, type Message, type RequestId, type TimedMessage } from '../../providers/mcp.js';
import type { AnswerOptions } from '../../replay/mcp-answer.js';
import type { ExchangeLog } from '../../engine/exchange-log.js';
import { decide, type Decision, type McpContext } from './engine.js';
import type { FaultPlan } from '../../engine/faults/fault-plan.js';
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
  faults?: FaultPlan | undefined;
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

  /** One message or a batch: each message decided as if sent alone, written to the tape, then what it got sent. */
  private async receive<Extra>(transport: ReplayTransport<Extra>, value: Message | Message[], extra: Extra): Promise<void> {
    const live = transport.live;
    const ctx: McpContext = {
      answer: this.opts.answer,
      incoming: (message) => transport.incoming(message, extra),
      live: live && ((message) => live(message, extra)),
      noLive: transport.noLive,
    };
    const decisions: Decision[] = [];
    for (const message of Array.isArray(value) ? value : [value])
      decisions.push(this.injected(transport, message, extra) ?? (await decide(message, ctx)));
    const only = Array.isArray(value) ? undefined : decisions[0];
    const talk = only === undefined ? undefined : conversationOf(only, this.opts.replies);
    if (talk !== undefined && talk.turns.length > 0) return this.converse(transport, talk.decision, extra, talk.turns);
    // On the tape first, in order (a client may answer before this call returns), then sent.
    for (const d of decisions) this.record(transport, d, extra, decisions);
    // A client's reply to a server request (on the tape now, as accepted) goes to the conversation waiting for it.
    for (const d of decisions) if (d.kind === 'accepted') this.answers.take(transport, d.message);
    for (const d of decisions) {
      const relatedRequestId = d.kind === 'accepted' ? undefined : (d.message.id as RequestId);
      for (const m of d.messages) await transport.send(m.message, { relatedRequestId, offsetMs: m.offsetMs, decision: d });
    }
  }

  /**
   * An answer that asks the client something: sent up to each server request, then the client's reply is held to the
   * recorded one (`conversation.ts`). Resolves once the first server request is sent (so a transport that takes one
   * message at a time, as stdio does, can take the client's reply); the conversation goes on from there, and its
   * call goes on the tape when it ends, before its last message is sent.
   */
  private converse<Extra>(transport: ReplayTransport<Extra>, d: Decision, extra: Extra, turns: Turn[]): Promise<void> {
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

  private async talk<Extra>(transport: ReplayTransport<Extra>, d: Decision, extra: Extra, turns: Turn[], asked: () => void): Promise<void> {
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
      if (!outcome.same) return this.differed(transport, d, extra, sent, outcome.reason);
    }
    const done: Decision = { ...d, at: performance.now() };
    this.record(transport, done, extra, [done]);
    for (; next < d.messages.length; next++) await send(d.messages[next] as TimedMessage, next < d.messages.length - 1);
  }

  /**
   * The client answered a turn differently: the recorded result is not served. Misses going live forward the call to
   * the real server, its answer continuing the one under way (where the transport can, and the call is safe to run);
   * else the call is a miss, in the shape the miss policy asks for.
   */
  private async differed<Extra>(
    transport: ReplayTransport<Extra>,
    d: Decision,
    extra: Extra,
    sent: TimedMessage[],
    reason: string,
  ): Promise<void> {
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
    const missed = missedTurn(d, sent, why, { onMiss, tape: tapeName });
    this.record(transport, missed, extra, [missed]);
    await transport.send(missed.messages.at(-1)?.message as Message, { relatedRequestId: d.message.id as RequestId, decision: missed });
  }

  /**
   * A request a fault rule picks: answered with the rule's tool error (a `tools/call` result with `isError`) or
   * JSON-RPC error, never from the tape (so a client that retries it gets the recorded answer).
   */
  private injected<Extra>(transport: ReplayTransport<Extra>, message: Message, extra: Extra): Decision | undefined {
    if (this.opts.faults === undefined || !isRequestMessage(message)) return undefined;
    const tool = message.method === 'tools/call' ? (message.params as { name?: unknown } | undefined)?.name : undefined;
    const facts = {
      route: transport.callOf(message, extra).route,
      method: String(message.method),
      tool: typeof tool === 'string' ? tool : undefined,
    };
    const fault = this.opts.faults.pick(facts, 'mcp');
    if (fault === undefined) return undefined;
    const id = message.id as RequestId;
    const { then } = fault;
    const answer: Message =
      then.toolError !== undefined && tool !== undefined
        ? { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: then.toolError }], isError: true } }
        : rpcError(id, then.rpcError?.code ?? -32603, then.rpcError?.message ?? then.toolError ?? 'injected fault');
    const match = { kind: 'fault' as const, reason: `injected by fault rule ${fault.description}` };
    return { kind: 'answered', message, messages: [{ offsetMs: 0, message: answer }], match, at: performance.now() };
  }

  /** Put what a message got on the replay tape, unless its live forward already did; log a blocked call or a miss. */
  private record<Extra>(transport: ReplayTransport<Extra>, d: Decision, extra: Extra, all: readonly Decision[]): void {
    if (d.forwarded?.recorded !== true) {
      const call = transport.callOf(d.message, extra);
      const notes =
        d.match.kind === 'blocked' ? { blocked: d.match.reason } : d.match.kind === 'fault' ? { fault: d.match.reason } : undefined;
      this.opts.out.write(exchangeRecord(call, transport.answerOf(d, call, extra, all), { match: d.match, notes }));
    }
    if (d.match.kind === 'blocked' || d.match.kind === 'miss')
      this.opts.log.info({ method: d.message.method, match: d.match.kind, reason: d.match.reason }, 'mcp replay');
  }
}
