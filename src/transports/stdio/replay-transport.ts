/**
 * MCP stdio as a replay transport (`mcp/transport.ts`): the framing over any message transport of the client's end
 * (a `LineTransport` over stdin and stdout, or the SDK's `InMemoryTransport` in tests), and how stdio goes on a tape
 * (`exchange.ts`: each message `POST /`, what it got as the answer and events). Framing here:
 * - messages go out one per line, a macrotask apart at least and at their recorded gaps (`mcp/pace.ts`), each once
 *   the one before it is written (the line transport waits for `drain`);
 * - a JSON-RPC batch is answered with one line holding the array of its answers, after the notifications its
 *   requests caused (one per line, as they come);
 * - a line that cannot be read is answered here with a JSON-RPC error (id null), recorded first (through its tee) as a
 *   miss with the text it was; a line over the limit is also reported on stderr (one line).
 * A miss that goes live starts the real server once (`live.ts`), with the client's own initialize.
 */
import type { Writable } from 'node:stream';
import type { Arrival, Call } from '../../engine/call.js';
import type { Answer } from '../../engine/record.js';
import { createTee } from '../../engine/tee.js';
import type { TapeFailurePolicy } from '../../engine/tape-failure.js';
import type { TapedeckError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { rpcErrorMessage } from '../../providers/errors.js';
import type { Message } from '../../providers/mcp.js';
import { isRequestMessage } from '../../providers/mcp-batch.js';
import type { IncomingRequest } from '../../replay/matcher.js';
import { roundMs } from '../../tape/timing.js';
import type { ExchangeLog } from '../../engine/exchange-log.js';
import type { Decision, Forwarded } from '../mcp/engine.js';
import { Pacer } from '../mcp/pace.js';
import type { McpSendOptions, McpTransport, ReplayTransport } from '../mcp/transport.js';
import type { Timing } from '../../http/types.js';
import { acceptedAnswer, stdioAnswer, stdioCall, stdioIncoming, type StdioRoute } from './exchange.js';
import type { LiveStdioServer } from './live.js';

/** Where a client message came from: when it arrived, and for a batch the answers held for its one line. */
export interface StdioArrival {
  at: Arrival;
  batch?: { requests: Set<Message>; answers: Message[] };
}

export interface StdioReplayTransportOptions {
  route: StdioRoute;
  /** The replay tape (for the lines that cannot be read), and its timeline. */
  out: ExchangeLog;
  log: Logger;
  timing: Timing;
  /** Where a line over the limit is reported (one line each); default: the log. */
  stderr?: Writable | undefined;
  /** Builds the real server for misses that go live; given the client's initialize request when it is first needed. */
  live?: ((initialize: () => Message | undefined) => LiveStdioServer) | undefined;
  /** Once the replay tape cannot be written: refuse what could not be recorded (default) or serve it. */
  onTapeFailure?: TapeFailurePolicy | undefined;
}

export class StdioReplayTransport implements ReplayTransport<StdioArrival> {
  onmessage?: ReplayTransport<StdioArrival>['onmessage'];
  onerror?: ReplayTransport<StdioArrival>['onerror'];
  onclose?: ReplayTransport<StdioArrival>['onclose'];
  readonly noLive = 'live forwarding could not reach the server: no server command to run live';

  private readonly pacer: Pacer;
  private readonly batches = new Set<NonNullable<StdioArrival['batch']>>();
  private sending: Promise<void> = Promise.resolve();
  private initialize: Message | undefined;
  private liveServer: LiveStdioServer | undefined;

  constructor(
    private readonly client: McpTransport,
    private readonly opts: StdioReplayTransportOptions,
  ) {
    this.pacer = new Pacer(opts.timing);
    this.live = opts.live && ((message) => this.forward(message));
  }

  start(): Promise<void> {
    this.client.onmessage = (value) => this.receive(value);
    this.client.onerror = (err, unread) => this.unreadable(err, unread);
    this.client.onclose = () => this.onclose?.();
    return this.client.start();
  }

  /** Resolves once the line is written (after `drain` when stdout asked to wait); a batch's answers wait for their line. */
  send(message: Message | Message[], options?: McpSendOptions): Promise<void> {
    const batch = this.batchOf(options);
    if (batch !== undefined && !Array.isArray(message) && message.method === undefined && message.id === options?.relatedRequestId) {
      batch.answers.push(message);
      return Promise.resolve();
    }
    this.sending = this.sending.then(() => this.pacer.before(message as Message, options)).then(() => this.client.send(message));
    return this.sending;
  }

  async close(): Promise<void> {
    this.liveServer?.close();
    await this.client.close();
  }

  incoming(message: Message): IncomingRequest {
    return stdioIncoming(this.opts.route.name, message);
  }

  callOf(message: Message, from: StdioArrival): Call {
    return stdioCall(this.opts.route, from.at, message);
  }

  answerOf(d: Decision, call: Call): Answer {
    if (d.kind === 'accepted') return acceptedAnswer();
    return stdioAnswer(d.messages.slice(0, -1), d.messages.at(-1), { durationMs: roundMs(d.at - call.t0) });
  }

  /** A miss that goes live: the real server, started on first need, answers it. */
  readonly live: ((message: Message) => Promise<Forwarded>) | undefined;

  private forward(message: Message): Promise<Forwarded> {
    const make = this.opts.live as NonNullable<StdioReplayTransportOptions['live']>;
    this.liveServer ??= make(() => this.initialize);
    return this.liveServer.request(message).then((messages) => ({ messages, recorded: false }));
  }

  private async receive(value: Message | Message[]): Promise<void> {
    const from: StdioArrival = { at: this.arrival() };
    const messages = Array.isArray(value) ? value : [value];
    const init = messages.find((m) => m.method === 'initialize' && isRequestMessage(m));
    if (init !== undefined) this.initialize = init;
    if (Array.isArray(value)) {
      from.batch = { requests: new Set(value.filter(isRequestMessage)), answers: [] };
      this.batches.add(from.batch);
    }
    try {
      await this.onmessage?.(value, from);
    } finally {
      if (from.batch !== undefined) this.batches.delete(from.batch);
    }
    if (from.batch !== undefined && from.batch.answers.length > 0) await this.send(from.batch.answers);
  }

  private batchOf(options: McpSendOptions | undefined): StdioArrival['batch'] {
    const asked = options?.decision?.message;
    if (asked === undefined || this.batches.size === 0) return undefined;
    for (const b of this.batches) if (b.requests.has(asked)) return b;
    return undefined;
  }

  /** A line that cannot be read as JSON-RPC (or was too long to read): a parse error, recorded with what it was. */
  private async unreadable(err: TapedeckError, unread: { text?: string } | undefined): Promise<void> {
    if (err.code === 'LINE_TOO_LONG') {
      if (this.opts.stderr) this.opts.stderr.write(`${err.message}\n`);
      else this.opts.log.warn({ code: err.code }, err.message);
    } else if (unread === undefined) return void this.opts.log.error({ err: err.message }, 'mcp replay failed on a message');
    const text = unread?.text;
    const call = stdioCall(this.opts.route, this.arrival(), undefined, {
      body: text === undefined ? { kind: 'empty' } : { kind: 'text', text },
    });
    const answer = rpcErrorMessage(err, null);
    const served = stdioAnswer([], { offsetMs: 0, message: answer }, { durationMs: 0 });
    const tee = createTee(this.opts.out, call, { match: { kind: 'miss', reason: err.message }, onTapeFailure: this.opts.onTapeFailure });
    const committed = tee.commit(served);
    this.opts.out.track(committed);
    // On the tape first; a line the tape could not take is not answered.
    if (await committed) await this.send(answer);
  }

  private arrival(): Arrival {
    return { startedAt: new Date(), offsetMs: this.opts.out.writer.now(), t0: performance.now() };
  }
}
