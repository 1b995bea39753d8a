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
import { rpcError, type Message, type RequestId } from '../../providers/mcp.js';
import type { AnswerOptions } from '../../replay/mcp-answer.js';
import type { ExchangeLog } from '../../engine/exchange-log.js';
import { decide, type Decision, type McpContext } from './engine.js';
import type { FaultPlan } from '../../engine/faults/fault-plan.js';
import { isRequestMessage } from '../../providers/mcp-batch.js';
import type { ReplayTransport } from './transport.js';

export interface McpServerOptions {
  /** The tape, matcher, side-effect policy and miss policy messages are decided with. */
  answer: AnswerOptions;
  /** The replay tape. */
  out: ExchangeLog;
  log: Logger;
  /** Faults injected into the run (`--faults`): a request a rule picks gets a tool error or a JSON-RPC error instead. */
  faults?: FaultPlan | undefined;
}

export class McpReplayServer {
  constructor(private readonly opts: McpServerOptions) {}

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
    // On the tape first, in order (a client may answer before this call returns), then sent.
    for (const d of decisions) this.record(transport, d, extra, decisions);
    for (const d of decisions) {
      const relatedRequestId = d.kind === 'accepted' ? undefined : (d.message.id as RequestId);
      for (const m of d.messages) await transport.send(m.message, { relatedRequestId, offsetMs: m.offsetMs, decision: d });
    }
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
