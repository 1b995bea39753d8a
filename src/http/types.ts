/**
 * What an HTTP exchange is at the proxy: the request (`ProxyRequest`, its meaning computed once), and the seams of
 * replay: protocol-specific answers (MCP, `--llm live`, mocks, a library user's) plug in as `ReplayResponder`s, which
 * decide (`ResponderDecision`) and never send; the HTTP engine (`transports/http/http-engine.ts`) acts on what they
 * decide. What an exchange means (LLM call, MCP message) is added when it is written, by the exchange log.
 */
import type { Matcher } from '../replay/matcher.js';
import type { OnMiss, Timing } from '../replay/modes.js';
import type { LoadedTape } from '../tape/tape-reader.js';
import type { Body, HeaderMap, LlmMeaning, MatchInfo, RequestRecord, Route } from '../tape/schema.js';
import type { WireText } from '../tape/store.js';
import type { ApiId } from '../providers/types.js';
import type { Logger } from '../log.js';
export type { OnMiss, Timing } from '../replay/modes.js';
import type { ExchangeLog } from '../engine/exchange-log.js';
import type { TapeFailurePolicy } from '../engine/tape-failure.js';
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
  /** Once the replay tape cannot be written: refuse what could not be recorded (the default) or serve it unrecorded. */
  onTapeFailure?: TapeFailurePolicy | undefined;
  /**
   * Answer `req` with `decision` through the engine (its tee records it, a fault may disturb it), writing to `sink`:
   * how a protocol that frames its own answers (MCP) sends one message's live answer. Resolves once it is answered.
   */
  settle(req: ProxyRequest, sink: ResponseSink, decision: ResponderDecision): Promise<void>;
}

/**
 * An answer a responder makes itself (a mock, a health check, a stream of its own), as a value: the engine sends it
 * (at the client's pace), puts it on the replay tape, and a fault rule may disturb it. `body` (text or bytes) or `json`
 * (sent as JSON), or `stream`: chunks written one by one at the client's pace (an event stream's events, say, which the
 * tape then keeps event by event); none: no body.
 */
export interface ResponderAnswer {
  status: number;
  headers?: HeaderMap | undefined;
  body?: string | Uint8Array | undefined;
  json?: unknown;
  stream?: Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array> | undefined;
}

/** What a responder decided for a request: an answer of its own, or live (as it came, or with another body). */
export type ResponderDecision =
  | {
      answer: ResponderAnswer;
      /** Why, as the replay tape says it (`match.reason`; the kind is `mock`). */
      reason?: string | undefined;
      /** How it matched, when it is not a mock's answer (the OAuth responder serves what the tape recorded). */
      match?: MatchInfo | undefined;
      notes?: Record<string, unknown> | undefined;
    }
  | {
      live: {
        /** Replaces the request body sent upstream (and recorded); `path` its path (a model in the path). */
        body?: Buffer | undefined;
        path?: string | undefined;
        /** Set on the client's answer, not on the tape. */
        headers?: HeaderMap | undefined;
        reason?: string | undefined;
        notes?: Record<string, unknown> | undefined;
      };
    }
  | {
      /** A protocol that answers the request itself, message by message, each through `ctx.settle` (MCP). */
      protocol: (sink: ResponseSink) => Promise<void>;
    };

/**
 * Decides a replayed request itself, or passes it on (finally to the tape). Asked in order; the first to decide wins.
 * A responder never sends or writes: it says what the answer is, and the engine answers and records it.
 */
export interface ReplayResponder {
  readonly name: string;
  /** What `req` gets, or undefined to pass it on. */
  decide(req: ProxyRequest, ctx: ReplayContext): Promise<ResponderDecision | undefined>;
  /** On shutdown, after connections are closed: resolves once everything the responder started is on the tape (long-lived streams). */
  drain?(): Promise<void>;
}
