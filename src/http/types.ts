/**
 * The seams of the proxy. The generic HTTP record/replay path lives in `recorder.ts` / `replayer.ts`;
 * protocol-specific replay (MCP, `--llm live`, overrides) plugs in as `ReplayResponder`s. What an exchange means
 * (LLM call, MCP message) is added when it is written, by the exchange log (`exchange-log.ts`) from the provider adapters.
 */
import type { Matcher } from '../replay/matcher.js';
import type { OnMiss, Timing } from '../replay/modes.js';
import type { LoadedTape } from '../tape/tape-reader.js';
import type { Body, HeaderMap, LlmMeaning, RequestRecord, Route } from '../tape/schema.js';
import type { WireText } from '../tape/store.js';
import type { ApiId } from '../providers/types.js';
import type { Logger } from '../log.js';
export type { OnMiss, Timing } from '../replay/modes.js';
import type { ExchangeLog } from '../engine/exchange-log.js';
import type { LargeBody } from './body-spill.js';
import type { ResponseSink } from './sink.js';

/** What a request means, computed once (`request-meaning.ts`) and carried on it. */
export interface RequestMeaning {
  /** The request as a tape records it (body encoded once). */
  record: Omit<RequestRecord, 'headers'> & { headers: ProxyRequest['headers'] };
  /** The LLM API the request is for, if any. */
  api?: ApiId;
  /** The request side of an LLM call. */
  llm?: LlmMeaning;
  /** The text the JSON body came as, when it can stand for the body on a tape line. */
  bodyText?: WireText<Body>;
}

/** An incoming HTTP request, resolved to its route. */
export interface ProxyRequest {
  route: Route;
  method: string;
  /** Path below the route prefix, e.g. `/v1/chat/completions`. */
  path: string;
  query: [string, string][];
  /** The query string exactly as received (without `?`), when there was one: what is forwarded upstream. */
  rawQuery?: string;
  /** Lower-case header names, as received (secrets included: redaction happens when the tape is written). */
  headers: HeaderMap;
  body: Buffer;
  /** A body too large to hold (see `body-spill.ts`): already in the store, `body` is then empty. */
  large?: LargeBody;
  startedAt: Date;
  /** Offset of the request start on the tape's timeline (ms). */
  offsetMs: number;
  /** `performance.now()` at arrival. */
  t0: number;
  /** What the request means, once computed (`request-meaning.ts`): read it through `requestMeaning(req)`. */
  meaning?: RequestMeaning;
}

export interface ReplayContext {
  /** The tape being replayed. */
  tape: LoadedTape;
  matcher: Matcher;
  /** The replay tape this session writes (what was served and how it matched). */
  out: ExchangeLog;
  onMiss: OnMiss;
  timing: Timing;
  log: Logger;
  /**
   * Forward the request to the real upstream, its answer streaming to `sink` as it comes, and record the exchange into
   * the replay tape with `match: {kind: 'live', reason}` (used by `--on-miss live` and `--llm live`). `body` replaces
   * the request body sent upstream; `headers` are set on the client's answer (not on the tape); `notes` go onto the
   * replay tape's exchange. Resolves once the answer has ended (or failed, or its client left); never rejects.
   */
  forwardLive(
    req: ProxyRequest,
    sink: ResponseSink,
    opts?: { body?: Buffer; headers?: HeaderMap; notes?: Record<string, unknown>; reason?: string },
  ): Promise<void>;
}

/**
 * Answers a replayed request itself, or passes it on (finally to the generic HTTP replayer). Asked in order; the
 * first to answer wins.
 */
export interface ReplayResponder {
  readonly name: string;
  /**
   * Answer `req` by writing to `sink` (`sink-send.ts` has helpers) and resolve true once it is answered (a long-lived
   * stream may stay open after); or resolve false, having written nothing, to pass it on.
   */
  handle(req: ProxyRequest, ctx: ReplayContext, sink: ResponseSink): Promise<boolean>;
  /** On shutdown, after connections are closed: resolves once everything the responder started is on the tape (long-lived streams). */
  drain?(): Promise<void>;
}
