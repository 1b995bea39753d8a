/**
 * The options of a proxy: where the tapes are, where it listens, and how a record or replay session behaves. Apart
 * from `server.ts` so that what builds sessions and what listens (`proxy-session.ts`, `listen.ts`) share them.
 */
import type { Logger } from '../log.js';
import type { LlmOverrides } from '../providers/types.js';
import type { ExactKeyOptions } from '../replay/exact-key.js';
import type { Matcher } from '../replay/matcher.js';
import type { RedactOptions } from '../tape/redaction/redact.js';
import type { Route } from '../tape/schema.js';
import type { LoadedTape, TapeStore } from '../tape/store.js';
import type { TapedeckError } from '../errors.js';
import type { FaultPlan } from '../engine/faults/fault-plan.js';
import type { CertificateAuthority } from './ca.js';
import type { TapeFailurePolicy } from '../engine/tape-failure.js';
import type { TapeAnswers } from '../transports/http/decide.js';
import type { OnMiss, ReplayResponder, Timing } from '../http/types.js';

export interface CommonOptions {
  tape: string;
  /** Where the tape is (and the replay tape goes): a store, or a tape folder (`dir`). One of the two. */
  store?: TapeStore;
  dir?: string;
  host?: string;
  /** 0 takes any free port. Default 8787. */
  port?: number;
  routes: readonly Route[];
  redact?: RedactOptions;
  /** How requests are keyed (config `match.ignoreFields`, the redact rules): what a store indexes exchanges by. */
  keyOptions?: ExactKeyOptions;
  log?: Logger;
  /** Host names requests may address the proxy by besides loopback names and the bound address; `*` turns the check off. */
  allowHosts?: readonly string[];
  /** As a forward proxy (HTTP_PROXY / HTTPS_PROXY): the CA for intercepted HTTPS, and hosts passed through untouched. */
  forwardProxy?: ForwardProxySettings;
  /** Upstream timeouts and how long shutdown waits; see `DEFAULT_TIMEOUTS`. */
  timeouts?: Partial<Timeouts>;
  /** Called once, when the tape being written fails (disk full, an I/O error): everything after it is not on the tape. */
  onTapeFailure?: (err: TapedeckError) => void;
  /** Faults injected into the run (`--faults`, `--fault`): which calls get a 429, a cut stream, a reset instead. */
  faults?: FaultPlan;
}

export interface RecordOptions extends CommonOptions {
  mode: 'record';
  ifExists?: 'fail' | 'overwrite' | 'append';
  /** Once the tape fails: `refuse` (default) answers every request 503; `serve` forwards them unrecorded. */
  whenTapeFails?: TapeFailurePolicy;
}

export interface ReplayOptions extends CommonOptions {
  mode: 'replay';
  /** Routes for prefixes that neither the tape nor `routes` name (the built-in defaults); lowest precedence. */
  fallbackRoutes?: readonly Route[];
  onMiss?: OnMiss;
  /** Name of the replay tape. Default: `<tape>.replay-<timestamp>`. */
  saveAs?: string;
  /** Keep the replay tape when no request reached it (default: removed on close). */
  keepEmpty?: boolean;
  timing?: Timing;
  /** Build the matcher for the loaded tape. Default: exact matching only. */
  matcher?: (tape: LoadedTape) => Matcher;
  /** Responders asked before the generic HTTP replay (MCP, live LLM); may be built from the loaded tape. */
  responders?: readonly ReplayResponder[] | ((tape: LoadedTape) => readonly ReplayResponder[]);
  allowLive?: TapeAnswers['allowLive'];
  /** Send the `x-tapedeck-*` headers (how each answer matched). Default true; false for agents that snapshot headers. */
  matchHeaders?: boolean;
  /** Once the replay tape fails: `refuse` (default) answers every request 503; `serve` answers on, unkept. As record. */
  whenTapeFails?: TapeFailurePolicy;
  /** Recorded in the replay tape's header (`replayOf.llm`, `replayOf.overrides`). */
  llm?: 'tape' | 'live';
  overrides?: Record<string, unknown>;
  /** Overrides that target a route or a provider, and the routes whose LLM calls went live (`replayOf.targeted`, `liveRoutes`). */
  targeted?: { field: string; value: unknown; route?: string; provider?: string }[];
  liveRoutes?: string[];
  /** `replayOf.liveAfter` and `replayOf.mocks` (the step LLM calls went live after; the mock file used). */
  liveAfter?: number;
  mocks?: string;
  /** Modified replay of WebSocket sessions (Realtime, Live): the overrides for a session that goes live, else undefined. */
  sessionLive?: (call: { route: string; provider: string; model?: string | undefined }) => LlmOverrides | undefined;
}

export type ProxyOptions = RecordOptions | ReplayOptions;

/** Milliseconds. */
export interface Timeouts {
  /** To open a connection to an upstream. */
  connectMs: number;
  /** From sending a request to the upstream's response head (a long non-streamed reasoning call needs more). */
  responseMs: number;
  /** Between two chunks of a response body (a stream that goes quiet this long is cut). */
  idleMs: number;
  /** On stop: how long exchanges still in flight get to finish before the tape is closed without them. */
  shutdownMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = { connectMs: 10_000, responseMs: 300_000, idleMs: 120_000, shutdownMs: 5_000 };

export interface ForwardProxySettings {
  /** The CA that signs intercepted hosts' certificates. Default: the one in `defaultCaDir()`, created on first use. */
  ca?: () => CertificateAuthority;
  /** Hosts (`name` or `name:port`) tunnelled untouched: never recorded, never replayed (a local database, say). */
  passThrough?: readonly string[];
  /** Serve clients on other machines as a forward proxy too (default: loopback peers only, never an open proxy). */
  anyClient?: boolean;
}
