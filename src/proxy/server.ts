import { Cancel } from './cancel.js';
import { Agent } from 'undici';
import { createLogger, type Logger } from '../log.js';
import type { Matcher } from '../replay/matcher.js';
import type { RedactOptions } from '../tape/redact.js';
import type { Route } from '../tape/schema.js';
import type { LoadedTape, TapeStore, TapeWriter } from '../tape/store.js';
import { TapedeckError } from '../errors.js';
import type { CertificateAuthority } from './ca.js';
import { createRequestListener } from './http-app.js';
import { shutdownReason } from './forward.js';
import type { TapeFailurePolicy } from './recorder.js';
import type { ReplayerOptions } from './replayer.js';
import { createDirStore } from '../tape/dir-store.js';
import type { OnMiss, ReplayResponder, Timing } from './types.js';
import type { LlmOverrides } from '../providers/types.js';
import { createUpgradeListener } from './ws/upgrade.js';
import { drainWithin, listenProxy } from './listen.js';
import { openProxySession } from './proxy-session.js';

interface CommonOptions {
  tape: string;
  /** Where the tape is (and the replay tape goes): a store, or a tape folder (`dir`). One of the two. */
  store?: TapeStore;
  dir?: string;
  host?: string;
  /** 0 takes any free port. Default 8787. */
  port?: number;
  routes: readonly Route[];
  redact?: RedactOptions;
  log?: Logger;
  /** Host names requests may address the proxy by besides loopback names and the bound address; `*` turns the check off. */
  allowHosts?: readonly string[];
  /** As a forward proxy (HTTP_PROXY / HTTPS_PROXY): the CA for intercepted HTTPS, and hosts passed through untouched. */
  forwardProxy?: ForwardProxySettings;
  /** Upstream timeouts and how long shutdown waits; see `DEFAULT_TIMEOUTS`. */
  timeouts?: Partial<Timeouts>;
  /** Called once, when the tape being written fails (disk full, an I/O error): everything after it is not on the tape. */
  onTapeFailure?: (err: TapedeckError) => void;
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
  allowLive?: ReplayerOptions['allowLive'];
  /** Send the `x-tapedeck-*` headers (how each answer matched). Default true; false for agents that snapshot headers. */
  matchHeaders?: boolean;
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

export interface RunningProxy {
  url: string;
  host: string;
  port: number;
  /** The tape being written: the recording, or the replay tape. */
  writer: TapeWriter;
  /** In replay mode: the tape being replayed. */
  source?: LoadedTape;
  /** Hosts passed through untouched (`host:port` -> connections or requests), which are not on the tape. */
  passedThrough: ReadonlyMap<string, number>;
  /** Stop accepting, end open streams, finish writing, close the tape. */
  close(): Promise<void>;
}

/** Start the proxy in record or replay mode; resolves once it is listening. */
export async function startProxy(opts: ProxyOptions): Promise<RunningProxy> {
  const log = opts.log ?? createLogger();
  const timeouts = { ...DEFAULT_TIMEOUTS, ...opts.timeouts };
  const dispatcher = proxyDispatcher(timeouts);
  // Aborted first thing on stop: whatever still waits for an upstream ends at once and goes on the tape with why.
  const stopping = new Cancel();
  const session = await openProxySession(opts, { store: storeOf(opts), dispatcher, stopping, log, timeouts });
  const { writer, routes, handle, sessions } = session;
  const listening = await listenProxy({ ...opts, log }, (own, forward) => {
    const request = createRequestListener({ routes, handle, clock: () => writer.now(), log, own, forward });
    const upgrade = createUpgradeListener({ routes, sessions, clock: () => writer.now(), log, own, forward, plain: request });
    return { request, upgrade };
  }).catch(async (err: unknown) => {
    // Not listening: give the tape (and its lock) back before reporting why.
    await writer.close();
    await dispatcher.close().catch(() => undefined);
    throw err;
  });
  let closing: Promise<void> | undefined;
  return {
    url: listening.url,
    host: listening.host,
    port: listening.port,
    writer,
    ...(session.source ? { source: session.source } : {}),
    passedThrough: listening.forward.passedThrough,
    close() {
      closing ??= (async () => {
        stopping.abort(shutdownReason());
        await listening.stop(() => sessions.closeAll());
        // Every exchange settles once its connection is gone; the bound is a safety net, never the normal path.
        await drainWithin(session.drain(), timeouts.shutdownMs, log);
        await writer.close();
        // Anything still in flight after the bound is abandoned, not waited for.
        await dispatcher.destroy().catch(() => undefined);
      })();
      return closing;
    },
  };
}

/** The upstream connection pool of one proxy. */
export function proxyDispatcher(timeouts: Timeouts): Agent {
  return new Agent({
    keepAliveTimeout: 30_000,
    connect: { timeout: timeouts.connectMs },
    headersTimeout: timeouts.responseMs,
    bodyTimeout: timeouts.idleMs,
    connections: 256,
  });
}

/** The store the options name: the one given, or the folder store of `dir`. */
export function storeOf(opts: { store?: TapeStore | undefined; dir?: string | undefined }): TapeStore {
  if (opts.store !== undefined && opts.dir !== undefined) throw new TapedeckError('BAD_ARGS', 'give a store or a dir, not both');
  if (opts.store !== undefined) return opts.store;
  if (opts.dir !== undefined) return createDirStore(opts.dir);
  throw new TapedeckError('BAD_ARGS', 'startProxy needs a store or a dir for the tapes');
}
