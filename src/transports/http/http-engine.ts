/**
 * The HTTP path of the exchange engine, in record and replay alike. Every request is decided, answered and written
 * through here: in record every answer is live; in replay the protocol responders (MCP, `--llm live`, mocks) and the
 * tape answer first, and a request goes live only when a responder or `--on-miss live` says so. A live answer is one
 * function for every case (`live`): forwarded with undici, streamed to the client as it comes, and put on the tape
 * before the client has its last byte, through the one record builder (`engine/record.ts`). Record is replay with
 * every answer live.
 */
import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Logger } from '../../log.js';
import { TapedeckError } from '../../errors.js';
import { httpError } from '../../providers/errors.js';
import type { MatchInfo } from '../../tape/schema.js';
import type { NewExchange } from '../../tape/store.js';
import type { Cancel } from '../../engine/cancel.js';
import type { ExchangeLog } from '../../engine/exchange-log.js';
import { forwardAndCapture } from '../../upstream/forward.js';
import { rewriteLegacyEndpoint } from '../../upstream/legacy-endpoint.js';
import { rewriteUploadUrls } from '../../http/upload-url.js';
import { OAuthFront } from '../../upstream/oauth-front.js';
import type { BodySpill } from '../../http/body-spill.js';
import { requestMeaning } from '../../http/request-meaning.js';
import { answerFromTape, type TapeAnswers } from './tape-answers.js';
import { nodeSink, sendError, type ResponseSink } from '../../http/sink.js';
import { withoutTapedeckHeaders } from '../../http/headers.js';
import type { ProxyRequest, ReplayContext, ReplayResponder } from '../../http/types.js';
import type { FaultPlan } from '../../engine/faults/fault-plan.js';
import { faultSink } from '../../http/fault-sink.js';
import { faultedLog, httpFaultFacts, injectAnswer } from './http-faults.js';

/** What recording does once its tape can no longer be written (disk full): refuse traffic, or serve it unrecorded. */
export type TapeFailurePolicy = 'refuse' | 'serve';

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
  /** Replay: how requests are answered from the tape. Absent: record, every answer live. */
  replay?: ReplaySide | undefined;
  /** Faults injected into the run (`--faults`): picked per call, before anything else answers it. */
  faults?: FaultPlan | undefined;
}

/** Replay's part: the responders asked first, then the tape. */
export interface ReplaySide extends TapeAnswers {
  /** Protocol-specific responders (MCP, live LLM, mocks), asked in order before the tape. */
  responders: readonly ReplayResponder[];
  /** The context responders get (the tape, its matcher, the replay tape, the live forward). */
  context: Omit<ReplayContext, 'forwardLive'>;
  /** Send tapedeck's `x-tapedeck-*` headers (how an answer matched). Default true. */
  matchHeaders?: boolean | undefined;
}

/** How a live answer is put on a replay tape, and what the client gets with it. */
export interface LiveOptions {
  /** Replaces the request body sent upstream (modified replay); the tape keeps what was sent. */
  body?: Buffer | undefined;
  /** Set on the client's answer, not on the tape. */
  headers?: Record<string, string> | undefined;
  match?: MatchInfo | undefined;
  notes?: Record<string, unknown> | undefined;
  /** The tape to write it to, when not the engine's own (a faulted answer's, which notes the fault). */
  out?: ExchangeLog | undefined;
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
  const serveUnrecorded = opts.onTapeFailure === 'serve';

  /**
   * Forward `req` live: its answer streams to `sink` as it comes and is on the tape before the client has its end.
   * Resolves once the answer has ended (or failed, or its client left); never rejects.
   */
  const live = (req: ProxyRequest, sink: ResponseSink, o: LiveOptions = {}): Promise<NewExchange> => {
    const tape = o.out ?? out;
    // OAuth through a route: the flow's requests go to the real servers, the client sees tapedeck's URLs (`oauth-front.ts`).
    // (MCP legacy HTTP+SSE: the client must POST back through the route prefix; a no-op for anything but a GET event stream.)
    const routed = oauth.front(req, rewriteLegacyEndpoint(req, sink));
    req = routed.req;
    // The request side as computed once for this request: describing reads only the answer (unless the body changed).
    const known = o.body === undefined ? { llm: requestMeaning(req).llm } : undefined;
    const commit = (ex: NewExchange): Promise<boolean> => {
      const written = tape.commit(ex, { known });
      // Serving unrecorded: the client gets its answer whether or not it reached the tape.
      return serveUnrecorded ? written.then(() => true) : written;
    };
    const captured = forwardAndCapture(req, routed.sink, {
      dispatcher: opts.dispatcher,
      commit,
      stopping: opts.stopping,
      spill: opts.spill,
      body: o.body,
      headers: o.headers,
      record: { match: o.match, notes: o.notes },
    });
    // From its start: shutdown waits for an exchange still streaming, whose commit comes only when it ends.
    tape.track(captured);
    return captured;
  };

  /** The live forward responders get, writing to `tape`. */
  const forwardLiveTo =
    (tape: ExchangeLog): ReplayContext['forwardLive'] =>
    async (req, sink, o = {}) => {
      await live(req, sink, {
        body: o.body,
        headers: { 'x-tapedeck-match': 'live', ...o.headers },
        match: { kind: 'live', reason: o.reason ?? 'forwarded to the upstream' },
        notes: o.notes,
        out: tape,
      });
    };

  const replay = opts.replay;
  const context: ReplayContext | undefined = replay && { ...replay.context, forwardLive: forwardLiveTo(out) };

  /** Answer a request: live in record; in replay from a responder, the tape, or live when allowed. */
  const answer = async (req: ProxyRequest, res: ServerResponse, sink: ResponseSink, tape: ExchangeLog): Promise<void> => {
    if (replay === undefined || context === undefined) {
      await live(req, sink, { out: tape });
      return;
    }
    const ctx = tape === out ? context : { ...context, out: tape, forwardLive: forwardLiveTo(tape) };
    for (const responder of replay.responders) if (await responder.handle(req, ctx, sink)) return;
    await answerFromTape(req, res, sink, tape === out ? replay : { ...replay, out: tape }, ctx.forwardLive);
  };

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

  /** A request: refused once the tape has failed, answered with a fault a rule picks, or answered. */
  const start = (req: ProxyRequest, res: ServerResponse): Promise<void> => {
    const failed = out.writer.failure;
    if (failed !== undefined && !serveUnrecorded) {
      sendError(res, httpError(refused(failed), requestMeaning(req).api));
      return DONE;
    }
    if (replay?.matchHeaders === false) withoutTapedeckHeaders(res);
    const fault = opts.faults?.pick(httpFaultFacts(req));
    // Resumable uploads' absolute URLs come back through the route (recorded or replayed alike).
    const client = rewriteUploadUrls(req, nodeSink(res));
    if (fault === undefined) return answer(req, res, client, out);
    if (injectAnswer(req, res, fault, out)) return DONE;
    const sink = faultSink(client, fault.then);
    return answer(req, res, sink, faultedLog(out, fault, sink));
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
