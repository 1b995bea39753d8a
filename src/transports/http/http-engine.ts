/**
 * The HTTP path of the exchange engine, in record and replay alike: every request is decided as a value
 * (`decide.ts`: live in record; in replay a responder's decision, else the tape's), then settled
 * (`engine/settle.ts`): a fault rule may answer in its place or disturb its answer, the answer goes out in HTTP's
 * framing (`deliver.ts`) and its record is committed by the tee before the client has the answer's end. Record is
 * replay with every answer live.
 */
import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Logger } from '../../log.js';
import { TapedeckError } from '../../errors.js';
import { httpError } from '../../providers/errors.js';
import type { Message } from '../../providers/mcp.js';
import { encodeBody } from '../../tape/body.js';
import type { Cancel } from '../../engine/cancel.js';
import type { ExchangeLog } from '../../engine/exchange-log.js';
import {
  settle,
  type Decided,
  type FaultFacts,
  type FaultLevel,
  type FaultPlan,
  type SettleContext,
  type SettlePort,
} from '../../engine/settle.js';
import type { TapeFailurePolicy } from '../../engine/tape-failure.js';
import { rewriteUploadUrls } from '../../http/upload-url.js';
import { OAuthFront, type OAuthRouted } from '../../upstream/oauth-front.js';
import type { BodySpill } from '../../http/body-spill.js';
import { httpCall } from '../../http/http-call.js';
import { requestMeaning } from '../../http/request-meaning.js';
import { nodeSink, sendError, type ResponseSink } from '../../http/sink.js';
import { withoutTapedeckHeaders } from '../../http/headers.js';
import type { ProxyRequest, ReplayContext, ResponderDecision, Timing } from '../../http/types.js';
import { decideReplay, LIVE, type HttpDecision, type ReplaySide } from './decide.js';
import { deliverHttp, type DeliverOptions } from './deliver.js';

export interface HttpEngineOptions {
  /** The tape being written: the recording, or the replay tape. */
  out: ExchangeLog;
  log: Logger;
  dispatcher: Dispatcher;
  /** Once the tape cannot be written: `refuse` (a 503 saying so) or `serve` (answers that will not be on it). */
  onTapeFailure: TapeFailurePolicy;
  /** Aborted when tapedeck stops: live requests still waiting for their upstream end, written with the error. */
  stopping?: Cancel | undefined;
  /** Where a body too large to hold goes as it streams (the tape being written). */
  spill?: BodySpill | undefined;
  /** Replay: how requests are answered (responders, then the tape). Absent: record, every answer live. */
  replay?: ReplayEngineSide | undefined;
  /** Faults injected into the run (`--faults`): picked per call by the settle, before anything else answers it. */
  faults?: FaultPlan | undefined;
}

/** Replay's part: the responders asked first, then the tape, and how answers are served. */
export interface ReplayEngineSide extends Omit<ReplaySide, 'context'> {
  /** The context responders get, less what the engine adds (`settle`). */
  context: Omit<ReplayContext, 'settle'>;
  timing: Timing;
  /** Send tapedeck's `x-tapedeck-*` headers (how an answer matched). Default true. */
  matchHeaders?: boolean | undefined;
}

export interface HttpEngine {
  handle(req: ProxyRequest, res: ServerResponse): Promise<void>;
  /** Resolves once everything started so far is on the tape (long-lived streams included). */
  drain(): Promise<void>;
}

const DONE: Promise<void> = Promise.resolve();

export function createHttpEngine(opts: HttpEngineOptions): HttpEngine {
  const { out } = opts;
  // What the OAuth flows through this engine's routes taught it (where each route's metadata and server are).
  const oauth = new OAuthFront();
  const replay = opts.replay;
  const ctx: SettleContext = { log: out, faults: opts.faults, onTapeFailure: opts.onTapeFailure };
  const deliver: DeliverOptions = {
    dispatcher: opts.dispatcher,
    stopping: opts.stopping,
    spill: opts.spill,
    timing: replay?.timing ?? { mode: 'instant' },
    blobs: replay?.blobs,
    answers: replay?.answers,
  };
  // Record: a JSON-RPC request's MCP rules act on the HTTP call (there is no MCP server to decide its messages);
  // replay: the MCP replay server picks them per message.
  const levels: readonly FaultLevel[] = replay === undefined ? ['http', 'mcp'] : ['http'];

  const port = (
    req: ProxyRequest,
    sink: ResponseSink,
    res: ServerResponse,
    decide: () => HttpDecision | Promise<HttpDecision>,
  ): SettlePort<HttpDecision> & { deliver(decided: Decided<HttpDecision>): Promise<void> } => {
    // A live answer's request as the upstream gets it (a responder's path; OAuth's flow translated, `oauth-front.ts`).
    let routed: OAuthRouted | undefined;
    return {
      faultFacts: () => ({ facts: httpFaultFacts(req, opts.faults, levels), levels }),
      injected: (fault) => ({ from: 'fault', how: 'injected', fault }),
      decide,
      recorded: (d) => {
        if (d.how === 'forward') routed = oauth.route(d.path === undefined ? req : { ...req, path: d.path });
        const sent = routed?.req ?? req;
        const replaced = d.how === 'forward' && d.body !== undefined ? d.body : undefined;
        return {
          // The tape keeps what was sent: a replaced body (modified replay) is the request's body on the tape.
          call: replaced !== undefined ? httpCall(sent, encodeBody(replaced, sent.headers['content-type'])) : httpCall(sent),
          // The request side as computed once for this request: describing reads only the answer (unless it changed).
          known: replaced !== undefined || sent !== req ? undefined : { llm: requestMeaning(req).llm },
          // Same request, same answer: the recorded meaning holds, no need to describe it again.
          meaningOf: d.how === 'recorded' && d.match.kind === 'exact' ? d.source : undefined,
        };
      },
      deliver: (decided) => deliverHttp(req, res, sink, decided, { ...deliver, routed }),
    };
  };

  // A responder's live answer inside a protocol (an MCP message forwarded on a miss): its own settle, no fault again.
  const context: ReplayContext | undefined = replay && {
    ...replay.context,
    onTapeFailure: opts.onTapeFailure,
    settle: (req, sink, d) =>
      settle(
        port(req, sink, undefined as unknown as ServerResponse, () => fromResponder(d)),
        { ...ctx, faults: undefined },
      ),
  };
  const side: ReplaySide | undefined = replay && context && { ...replay, context };

  // The 503 of a replay whose replay tape failed speaks of the replay tape (made once per failure).
  let refusal: { failed: TapedeckError; answer: TapedeckError } | undefined;
  const refused = (failed: TapedeckError): TapedeckError => {
    if (replay === undefined) return failed;
    if (refusal?.failed !== failed) {
      const said = `replay answers no more requests: the replay tape cannot be written, and would not keep them (${failed.message})`;
      const details = failed.details !== undefined ? { details: failed.details } : {};
      refusal = { failed, answer: new TapedeckError('TAPE_WRITE_FAILED', said, { status: 503, cause: failed, ...details }) };
    }
    return refusal.answer;
  };

  /** A request: refused once the tape has failed, else decided and settled. */
  const start = (req: ProxyRequest, res: ServerResponse): Promise<void> => {
    const failed = out.writer.failure;
    if (failed !== undefined && opts.onTapeFailure !== 'serve') {
      sendError(res, httpError(refused(failed), requestMeaning(req).api));
      return DONE;
    }
    if (replay?.matchHeaders === false) withoutTapedeckHeaders(res);
    const decide = side === undefined ? () => LIVE : () => decideReplay(req, side);
    // Resumable uploads' absolute URLs come back through the route (recorded or replayed alike).
    const settled = settle(port(req, rewriteUploadUrls(req, nodeSink(res)), res, decide), ctx);
    // From its start: shutdown waits for an answer still streaming, whose record is committed only when it ends.
    out.track(settled);
    return settled;
  };

  return {
    // Not async: the answer's own promise is returned as it is (an async function resolving to it adds turns); what
    // throws before the answer starts rejects, as it would from an async function.
    handle(req, res) {
      try {
        return start(req, res);
      } catch (err) {
        return Promise.reject(err as Error);
      }
    },
    async drain() {
      await Promise.all((replay?.responders ?? []).map((r) => r.drain?.()));
      await out.drain();
    },
  };
}

/** A responder's decision inside a protocol, as an HTTP decision (only `live` and an answer of its own are asked for). */
function fromResponder(d: ResponderDecision): HttpDecision {
  if ('live' in d)
    return {
      from: 'live',
      how: 'forward',
      body: d.live.body,
      path: d.live.path,
      headers: { 'x-tapedeck-match': 'live', ...d.live.headers },
      match: { kind: 'live', reason: d.live.reason ?? 'forwarded to the upstream' },
      notes: d.live.notes,
    };
  if ('answer' in d)
    return { from: 'mock', how: 'made', answer: d.answer, match: { kind: 'mock', reason: d.reason ?? 'answered' }, notes: d.notes };
  return { from: 'tape', how: 'protocol', protocol: d.protocol };
}

/**
 * What a rule can match an HTTP call on: its route and LLM API; with MCP rules, the method and tool of a JSON-RPC
 * request the body carries (one message: a batch's messages are decided one by one by the MCP replay server).
 */
export function httpFaultFacts(req: ProxyRequest, faults: FaultPlan | undefined, levels: readonly FaultLevel[]): FaultFacts {
  const { api, llm, record } = requestMeaning(req);
  const facts: FaultFacts = { route: req.route.prefix, provider: api?.provider, api: api?.api, model: llm?.model };
  // A Streamable HTTP POST (its client takes an event stream or JSON back): its answer is the message's, so an MCP rule
  // can answer in its place; a legacy HTTP+SSE POST's answer goes down the GET stream, which no rule reaches here.
  const streamable = req.method === 'POST' && (req.headers.accept ?? '').includes('text/event-stream');
  if (streamable && levels.includes('mcp') && faults?.has('mcp') === true && record.body.kind === 'json') {
    const m = record.body.json as Message | null;
    if (m !== null && typeof m === 'object' && !Array.isArray(m) && typeof m.method === 'string' && m.id !== undefined) {
      facts.method = m.method;
      const tool = m.method === 'tools/call' ? (m.params as { name?: unknown } | undefined)?.name : undefined;
      if (typeof tool === 'string') facts.tool = tool;
    }
  }
  return facts;
}
