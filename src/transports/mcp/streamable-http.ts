/**
 * MCP Streamable HTTP as a replay transport (`transport.ts`): the framing of one replay session's POSTs (one
 * transport per `Mcp-Session-Id`, as the SDK's `StreamableHTTPServerTransport`; one per POST for a server without
 * sessions). A POST's messages go to the server; what the server sends for each request is collected by the request
 * it belongs to, and once the POST is decided the answer goes out as the recording framed it:
 * - one message: its answer as a JSON body with the recorded status, or an SSE stream (notifications first) when the
 *   client takes SSE and the answer was recorded as one or comes with notifications; `x-tapedeck-match` says how it
 *   was found;
 * - a batch: one JSON array of the answers, or one SSE stream with every message in order (`batch-reply.ts`);
 * - notifications only: 202.
 * - an answer that waits on the client between its parts (`more`, `conversation.ts`): an SSE stream opened with the
 *   first part, each message written as it is sent, ended with the answer.
 * A safe miss that goes live streams the real server's answer straight through (one message) or is read whole to go
 * into the batch's answer (`http-live.ts`). Sessions and the transport's own errors are `http-endpoint.ts`'s.
 */
import type { Call } from '../../engine/call.js';
import type { Answer } from '../../engine/record.js';
import { requestSideMcp, type Message, type RequestId, type TimedMessage } from '../../providers/mcp.js';
import { isRequestMessage } from '../../providers/mcp-batch.js';
import type { IncomingRequest } from '../../replay/matcher.js';
import type { Exchange, HeaderMap } from '../../tape/schema.js';
import { matchHeaders } from '../../http/headers.js';
import { httpCall, withBody } from '../../http/http-call.js';
import { requestMeaning } from '../../http/request-meaning.js';
import { BufferSink, type ResponseSink } from '../../http/sink.js';
import { openSse, sendBody, sseEvent, type PacedStream } from '../../http/sink-send.js';
import type { ProxyRequest, ReplayContext } from '../../http/types.js';
import { batchSse, liveMessages, sendBatch, type BatchPart } from './batch-reply.js';
import type { Decision, Forwarded } from './engine.js';
import { forwardLive, SESSION_HEADER, type LiveSession } from './http-live.js';
import { sendReply, servedAnswer, type Reply } from './http-reply.js';
import type { McpSendOptions, ReplayTransport } from './transport.js';
import { tokenRefusal } from './token-refusal.js';
import { LiveRelaySink } from './live-relay.js';
import { bodyJson } from '../../tape/body.js';
import { roundMs } from '../../tape/timing.js';
import type { SseEvent } from '../../tape/schema.js';
import { ResumableStreams, sendEvents, type RecordedResumptions } from './resumable.js';

/** A request of a POST, and what the server sent for it. */
interface Part {
  decision?: Decision;
  sent: TimedMessage[];
  /** Its answer goes out in parts (the server waits on the client between them): the stream, once opened. */
  stream?: PacedStream;
  /** Resolves once a streamed answer has ended. */
  ended?: Promise<void>;
  end?: () => void;
}

/** One POST: where it came from and goes back to, and what it got. */
export interface HttpPost {
  req: ProxyRequest;
  sink: ResponseSink;
  batch: boolean;
  /** Its requests (not its notifications), in order. */
  parts: Map<Message, Part>;
  /** The answer goes out as SSE (once known). */
  sse?: boolean;
  /** The live answer already went to the client as it came. */
  sentLive?: boolean;
}

export class StreamableHttpTransport implements ReplayTransport<HttpPost> {
  onmessage?: ReplayTransport<HttpPost>['onmessage'];
  onerror?: ReplayTransport<HttpPost>['onerror'];
  onclose?: ReplayTransport<HttpPost>['onclose'];
  readonly live: ReplayTransport<HttpPost>['live'];
  readonly continueLive: ReplayTransport<HttpPost>['continueLive'];
  private readonly posts = new Set<HttpPost>();
  /** Requests the real server asked the client on a live answer (`live-relay.ts`): the client's replies go to it. */
  private readonly liveAsked = new Set<RequestId>();
  /** Answers sent over resumable streams in this session (`resumable.ts`): what a GET with `Last-Event-ID` gets. */
  private readonly resumable = new ResumableStreams();
  /** What goes on a POST's own stream, for an answer recorded over a resumable one: from its record to its sending. */
  private readonly opened = new Map<Decision, SseEvent[]>();

  /**
   * `session`: the replay session this transport is (none for a server without sessions); `resumptions`: the tape's
   * resumable answers.
   */
  constructor(
    private readonly ctx: ReplayContext,
    readonly session?: LiveSession,
    private readonly resumptions?: RecordedResumptions,
  ) {
    this.live = (message, post) => this.forward(message, post);
    this.continueLive = (message, post, reason) => this.relayLive(message, post, reason);
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.onclose?.();
    return Promise.resolve();
  }

  /** The headers every answer in this session carries. */
  private get sessionHeaders(): HeaderMap {
    return this.session ? { [SESSION_HEADER]: this.session.id } : {};
  }

  /** A POST's messages (read once, by `http-endpoint.ts`): decided by the server, then answered. Resolves once answered. */
  async handlePost(req: ProxyRequest, sink: ResponseSink, messages: Message[], batch: boolean): Promise<void> {
    const only = batch ? undefined : messages[0];
    if (only !== undefined && only.method === undefined && this.liveAsked.delete(only.id as RequestId))
      // The client's reply to the real server's request, on a live answer: it goes to the real server.
      return forwardLive(req, this.ctx, this.session, only, sink, "the client's reply to the real server's request");
    const post: HttpPost = { req, sink, batch, parts: new Map() };
    for (const m of messages) if (isRequestMessage(m)) post.parts.set(m, { sent: [] });
    this.posts.add(post);
    try {
      await this.onmessage?.(batch ? messages : (messages[0] as Message), post);
      // An answer in parts goes on after the POST is decided: the POST stays open until it has ended.
      await Promise.all([...post.parts.values()].map((p) => p.ended));
    } finally {
      this.posts.delete(post);
    }
    if (post.sentLive !== true && ![...post.parts.values()].some((p) => p.stream !== undefined)) await this.flush(post);
  }

  /** Collected by the request it belongs to; the POST's answer goes out once the POST is decided. */
  send(message: Message | Message[], options?: McpSendOptions): Promise<void> {
    const asked = options?.decision?.message;
    for (const post of this.posts) {
      const part = asked === undefined ? undefined : post.parts.get(asked);
      if (part === undefined) continue;
      part.decision = options?.decision;
      if (options?.more === true || part.stream !== undefined) return this.stream(post, part, message as Message, options);
      for (const m of Array.isArray(message) ? message : [message]) part.sent.push({ offsetMs: options?.offsetMs ?? 0, message: m });
      break;
    }
    return Promise.resolve();
  }

  /** One message of an answer sent in parts: the stream opened with the first, ended with the answer. */
  private async stream(post: HttpPost, part: Part, message: Message, options: McpSendOptions | undefined): Promise<void> {
    if (part.stream === undefined) {
      const d = options?.decision;
      part.ended = new Promise<void>((resolve) => (part.end = resolve));
      part.stream = openSse(post.sink, 200, { ...this.sessionHeaders, ...(d ? matchHeaders(d.match) : {}) }, part.end);
      post.sse = true;
    }
    part.sent.push({ offsetMs: options?.offsetMs ?? 0, message });
    await part.stream.write(sseEvent('message', JSON.stringify(message)));
    if (message.method === undefined && message.id === options?.relatedRequestId) {
      part.stream.end();
      part.end?.();
    }
  }

  incoming(message: Message, post: HttpPost): IncomingRequest {
    const { record, llm } = requestMeaning(post.req);
    const request = post.batch ? { ...record, body: { kind: 'json' as const, json: message } } : record;
    const incoming: IncomingRequest = {
      route: post.req.route.prefix,
      request,
      transport: 'http',
      mcp: requestSideMcp(message, 'streamable-http'),
    };
    if (llm !== undefined && !post.batch) incoming.llm = llm;
    return incoming;
  }

  /** A message of a batch is recorded as if sent alone: the batch's request, with that message for body. */
  callOf(message: Message, post: HttpPost): Call {
    return post.batch ? httpCall(post.req, { kind: 'json', json: message }) : httpCall(post.req);
  }

  answerOf(d: Decision, call: Call, post: HttpPost, all: readonly Decision[]): Answer {
    const took = d.at - call.t0;
    if (d.kind === 'accepted') return servedAnswer({ status: 202, headers: this.sessionHeaders }, took);
    post.sse ??= this.framing(post, all);
    if (post.batch) return servedAnswer({ status: 200, headers: this.sessionHeaders, messages: d.messages, sse: post.sse }, took);
    const refusal = tokenRefusal(d, post.req);
    if (refusal !== undefined) return servedAnswer({ ...refusal, body: bodyJson({ kind: 'text', text: refusal.text }) }, took);
    const reply = this.reply(d, d.messages, post.sse);
    const events = this.resumed(d, post);
    if (events === undefined) return servedAnswer(reply, took);
    const headers = { 'content-type': 'text/event-stream', ...reply.headers };
    return { response: { status: reply.status, headers, events }, timing: { durationMs: roundMs(took) } };
  }

  /**
   * An answer recorded over a resumable stream that ended before it (`resumable.ts`), sent alone as SSE and in one piece: what
   * goes on the POST's own stream, the rest kept for the client's GET with `Last-Event-ID`. Undefined otherwise.
   */
  private resumed(d: Decision, post: HttpPost): SseEvent[] | undefined {
    if (post.batch || post.sse !== true || d.kind !== 'answered' || d.source === undefined) return undefined;
    if (post.parts.get(d.message)?.stream !== undefined) return undefined;
    const recorded = this.resumptions?.of(d.source);
    if (recorded === undefined) return undefined;
    let events = this.opened.get(d);
    if (events === undefined) this.opened.set(d, (events = this.resumable.open(d.messages, recorded)));
    return events;
  }

  /** The events after `lastEventId` of an answer this session sent over a resumable stream; undefined when it sent no such id. */
  resumeAfter(lastEventId: string): SseEvent[] | undefined {
    return this.resumable.after(lastEventId);
  }

  /** The headers a resuming GET's answer carries. */
  get streamHeaders(): HeaderMap {
    return this.sessionHeaders;
  }

  /** Whether the POST's answer goes out as SSE: as recorded, or because notifications come with an answer. */
  private framing(post: HttpPost, decisions: readonly (Decision | undefined)[]): boolean {
    const acceptsSse = (post.req.headers.accept ?? '').includes('text/event-stream');
    const parts: BatchPart[] = [];
    for (const d of decisions)
      if (d !== undefined && d.kind !== 'accepted') parts.push({ messages: d.messages, sse: d.forwarded?.sse ?? recordedAsSse(d.source) });
    return batchSse(parts, acceptsSse);
  }

  /** One message's answer: the recorded status too (a JSON-RPC error may have come with a 4xx); tapedeck's own are 200. */
  private reply(d: Decision, messages: TimedMessage[], sse: boolean): Reply {
    const recordedStatus = d.source?.response?.status;
    const status = recordedStatus !== undefined && recordedStatus !== 202 && messages.length > 0 ? recordedStatus : 200;
    return { status, headers: { ...this.sessionHeaders, ...matchHeaders(d.match) }, messages, sse };
  }

  /** Send the POST's answer; resolves once it is sent (or the client has gone). */
  private flush(post: HttpPost): Promise<void> {
    const answered = [...post.parts.values()].filter((p): p is Required<Part> => p.decision !== undefined);
    post.sse ??= this.framing(
      post,
      answered.map((p) => p.decision),
    );
    if (answered.length === 0) return Promise.resolve(sendBody(post.sink, 202, this.sessionHeaders));
    if (!post.batch) {
      const only = answered[0] as Required<Part>;
      const refusal = tokenRefusal(only.decision, post.req);
      if (refusal !== undefined) return Promise.resolve(sendBody(post.sink, refusal.status, refusal.headers, refusal.text));
      const reply = this.reply(only.decision, only.sent, post.sse);
      const events = this.resumed(only.decision, post);
      this.opened.delete(only.decision);
      if (events !== undefined) return sendEvents(post.sink, reply.status, reply.headers, events, this.ctx.timing);
      return sendReply(post.sink, reply, this.ctx.timing);
    }
    const parts = answered.map((p) => ({ messages: p.sent, sse: p.decision.forwarded?.sse ?? recordedAsSse(p.decision.source) }));
    return sendBatch(post.sink, parts, post.sse, this.sessionHeaders, this.ctx.timing);
  }

  /** A live answer continuing the one under way: into the POST's open stream, the real server's requests relayed. */
  private async relayLive(message: Message, post: HttpPost, reason: string): Promise<void> {
    const part = post.parts.get(message);
    const stream = part?.stream;
    if (part === undefined || stream === undefined) return;
    const asked = (request: Message): void => void this.liveAsked.add(request.id as RequestId);
    // A server may ask on its standalone stream rather than the call's answer: that stream is open, and relayed into
    // the client's answer, while the call runs (open first: what the server sends before it is open may be lost).
    const standalone = new LiveRelaySink(stream, asked, true);
    const { 'content-type': _type, 'content-length': _length, ...headers } = post.req.headers;
    const get: ProxyRequest = {
      ...withBody(post.req, Buffer.alloc(0)),
      method: 'GET',
      headers: { ...headers, accept: 'text/event-stream' },
    };
    const side = forwardLive(get, this.ctx, this.session, message, standalone, "the real server's own stream while the call runs live");
    await standalone.headed;
    await forwardLive(post.req, this.ctx, this.session, message, new LiveRelaySink(stream, asked), reason);
    standalone.close();
    await side;
    stream.end();
    part.end?.();
  }

  /** The live answer is recorded as the server sent it; one message gets it streamed through unread. */
  private async forward(message: Message, post: HttpPost): Promise<Forwarded> {
    if (!post.batch) {
      await forwardLive(post.req, this.ctx, this.session, message, post.sink);
      post.sentLive = true;
      return { messages: [], recorded: true, sent: true };
    }
    // A message of a batch: its live answer is read whole, to go into the batch's one answer.
    const res = new BufferSink();
    await forwardLive(withBody(post.req, Buffer.from(JSON.stringify(message))), this.ctx, this.session, message, res);
    const sse = (res.headers['content-type'] ?? '').startsWith('text/event-stream');
    return { messages: liveMessages(res, message.id as RequestId), recorded: true, sse };
  }
}

/** Whether a recorded answer came as an SSE stream. */
function recordedAsSse(source: Exchange | undefined): boolean {
  return source?.response?.headers['content-type']?.startsWith('text/event-stream') ?? false;
}
