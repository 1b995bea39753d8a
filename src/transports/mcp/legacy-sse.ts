/**
 * Replay of the legacy HTTP+SSE transport (2024-11-05) as a replay transport (`transport.ts`), one per session: a GET
 * opens a stream whose first event is `endpoint` (the URL to POST to, with a fresh session id and the route prefix,
 * so the client's POSTs come back through tapedeck); each POST's messages go to the server and the POST is answered
 * 202 once they are decided; what the server sends travels on the stream, as the real server did, a macrotask apart
 * at least and at the recorded gaps (`pace.ts`), at the client's pace. Each POST's messages are on the replay tape
 * before their answers go on the stream (`server.ts`); the stream's own record goes on it through its tee when the
 * client leaves (or tapedeck stops), with every event it carried (its end is the client's, not tapedeck's, to give).
 */
import { randomUUID } from 'node:crypto';
import { elapsedSince, type Call } from '../../engine/call.js';
import type { Answer } from '../../engine/record.js';
import { createTee } from '../../engine/tee.js';
import { TapedeckError } from '../../errors.js';
import { rpcErrorMessage, rpcHttpError } from '../../providers/errors.js';
import { requestSideMcp, type Message } from '../../providers/mcp.js';
import type { IncomingRequest } from '../../replay/matcher.js';
import type { SseEvent } from '../../tape/schema.js';
import { roundMs } from '../../tape/timing.js';
import { httpCall } from '../../http/http-call.js';
import { requestMeaning } from '../../http/request-meaning.js';
import type { ResponseSink } from '../../http/sink.js';
import { openSse, sendBody, sendErrorAnswer, sseEvent, type PacedStream } from '../../http/sink-send.js';
import type { ProxyRequest, ReplayContext } from '../../http/types.js';
import type { Decision } from './engine.js';
import { servedAnswer, servedFirst } from './http-reply.js';
import type { McpPost } from './mcp-post.js';
import { Pacer } from './pace.js';
import type { LegacyRoute } from './route-index.js';
import type { McpReplayServer } from './server.js';
import type { McpSendOptions, ReplayTransport } from './transport.js';

/** One POST to the session: the request, whether it carried a batch, its requests and what was decided for them. */
export interface LegacyPost {
  req: ProxyRequest;
  batch: boolean;
  requests: Set<Message>;
  decided: Set<Decision>;
}

export class LegacySseTransport implements ReplayTransport<LegacyPost> {
  onmessage?: ReplayTransport<LegacyPost>['onmessage'];
  onerror?: ReplayTransport<LegacyPost>['onerror'];
  onclose?: ReplayTransport<LegacyPost>['onclose'];
  readonly noLive = 'live forwarding is not supported on the legacy HTTP+SSE transport; the tape has no answer for this request';
  readonly id = randomUUID();

  private readonly events: SseEvent[] = [];
  /** POSTs being decided. */
  private readonly posts = new Set<LegacyPost>();
  private readonly pacer: Pacer;
  private stream: PacedStream | undefined;
  private sending: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly get: ProxyRequest,
    private readonly sink: ResponseSink,
    private readonly ctx: ReplayContext,
    private readonly postPath: string,
  ) {
    this.pacer = new Pacer(ctx.timing);
  }

  /** Open the stream; it stays open until the client leaves (or tapedeck stops): then the session ends and the tape gets it. */
  start(): Promise<void> {
    let ended!: (answer: Answer) => void;
    const call = httpCall(this.get);
    const match = { kind: 'exact' as const, reason: 'legacy SSE stream served by tapedeck' };
    void createTee(this.ctx.out, call, { match }).keep(new Promise<Answer>((r) => (ended = r)));
    this.stream = openSse(this.sink, 200, { 'x-tapedeck-match': 'exact' }, () => {
      this.onclose?.();
      const response = { status: 200, headers: { 'content-type': 'text/event-stream' }, events: this.events };
      ended({ response, timing: { durationMs: elapsedSince(call) } });
    });
    void this.push('endpoint', `${this.get.route.prefix}${this.postPath}?sessionId=${this.id}`);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.stream?.end();
    return Promise.resolve();
  }

  /** One POST: 202 once its messages are decided (their answers follow on the stream); a body that is no JSON-RPC is refused. */
  async handlePost(req: ProxyRequest, post: McpPost, sink: ResponseSink): Promise<void> {
    const parsed = post.rpc();
    if (!parsed.ok) {
      // The legacy transport answers on the stream too.
      void this.push('message', JSON.stringify(rpcErrorMessage(parsed.error, null)));
      return await refuseLegacy(req, this.ctx, sink, parsed.error);
    }
    const messages = parsed.messages as Message[];
    const from: LegacyPost = { req, batch: parsed.batch, requests: new Set(messages), decided: new Set() };
    this.posts.add(from);
    try {
      await this.onmessage?.(parsed.batch ? messages : (messages[0] as Message), from);
    } finally {
      this.posts.delete(from);
    }
    const headers: Record<string, string> = { 'content-type': 'text/plain;charset=UTF-8' };
    // How the POST's one request was found (a batch of several says nothing).
    const [only, ...more] = from.decided;
    if (only !== undefined && more.length === 0) headers['x-tapedeck-match'] = only.match.kind;
    sendBody(sink, 202, headers, 'Accepted');
  }

  /** Queued on the stream (resolves then): one message per write, paced, at the client's pace. */
  send(message: Message | Message[], options?: McpSendOptions): Promise<void> {
    const d = options?.decision;
    if (d !== undefined) for (const p of this.posts) if (p.requests.has(d.message)) p.decided.add(d);
    this.sending = this.sending
      .then(() => this.pacer.before(message as Message, options))
      .then(() => this.push('message', JSON.stringify(message)));
    return Promise.resolve();
  }

  incoming(message: Message, from: LegacyPost): IncomingRequest {
    const { record } = requestMeaning(from.req);
    const request = from.batch ? { ...record, body: { kind: 'json' as const, json: message } } : record;
    return { route: from.req.route.prefix, request, transport: 'http', mcp: requestSideMcp(message, 'sse') };
  }

  callOf(message: Message, from: LegacyPost): Call {
    return from.batch ? httpCall(from.req, { kind: 'json', json: message }) : httpCall(from.req);
  }

  /** Every message of a POST is answered 202 on the tape: its answer is on the stream's record. */
  answerOf(d: Decision, call: Call): Answer {
    return servedAnswer({ status: 202, headers: {} }, d.at - call.t0);
  }

  /** Write an event to the stream; resolves once the client can take more, false once it has gone. */
  private push(event: string, data: string): Promise<boolean> {
    if (this.stream === undefined || this.stream.gone) return Promise.resolve(false);
    this.events.push({ offsetMs: roundMs(performance.now() - this.get.t0), event, data });
    return this.stream.write(sseEvent(event, data));
  }
}

/** A POST the legacy transport refuses (no such session, not JSON-RPC): a JSON-RPC error with its status, recorded as a miss. */
export function refuseLegacy(
  req: ProxyRequest,
  ctx: ReplayContext,
  sink: ResponseSink,
  err: TapedeckError,
  reason = err.message,
): Promise<void> {
  const answer = rpcHttpError(err);
  const how = { match: { kind: 'miss' as const, reason }, onTapeFailure: ctx.onTapeFailure };
  return servedFirst(ctx.out, httpCall(req), answer, how, sink, () => sendErrorAnswer(sink, answer));
}

/** The legacy endpoint of one route: its GET stream opens a session, its POSTs go to their session. */
export class LegacySseEndpoint {
  private readonly sessions = new Map<string, LegacySseTransport>();

  constructor(
    private readonly ctx: ReplayContext,
    private readonly legacy: LegacyRoute,
    private readonly server: McpReplayServer,
  ) {}

  /** Whether a request is on the legacy paths (its GET stream, its POSTs). */
  handles(req: ProxyRequest): boolean {
    return (req.method === 'GET' && req.path === this.legacy.ssePath) || (req.method === 'POST' && req.path === this.legacy.postPath);
  }

  /** Answer a request on the legacy paths. */
  async handle(req: ProxyRequest, post: () => McpPost, sink: ResponseSink): Promise<void> {
    if (req.method === 'GET') {
      const transport = new LegacySseTransport(req, sink, this.ctx, this.legacy.postPath);
      this.sessions.set(transport.id, transport);
      transport.onclose = () => void this.sessions.delete(transport.id);
      await this.server.connect(transport);
      return;
    }
    const sid = req.query.find(([k]) => k === 'sessionId')?.[1];
    const transport = sid === undefined ? undefined : this.sessions.get(sid);
    if (transport === undefined) {
      const reason = `unknown legacy SSE session ${sid ?? '(none)'}`;
      return refuseLegacy(req, this.ctx, sink, new TapedeckError('SESSION_NOT_FOUND', 'Session not found'), reason);
    }
    await transport.handlePost(req, post(), sink);
  }
}
