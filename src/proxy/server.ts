import { Cancel } from './cancel.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { createLogger, type Logger } from '../log.js';
import { ownHosts } from '../own-hosts.js';
import { createMatcher, type Matcher } from '../replay/matcher.js';
import type { RedactOptions } from '../tape/redact.js';
import type { Route } from '../tape/schema.js';
import type { LoadedTape, TapeStore, TapeWriter } from '../tape/store.js';
import { TapedeckError } from '../errors.js';
import { defaultCaDir, loadOrCreateCa, type CertificateAuthority } from './ca.js';
import { createPortServer } from './port-sniff.js';
import { guardSocketHandler } from './socket-guard.js';
import { createForwardProxy, isSelfFor } from './forward-proxy.js';
import { createRequestListener, type ProxyHandler } from './http-app.js';
import { createExchangeLog } from './exchange-log.js';
import { shutdownReason } from './forward.js';
import { createRecorder, type TapeFailurePolicy } from './recorder.js';
import { createBodySpill } from './body-spill.js';
import { createReplayer, type ReplayerOptions } from './replayer.js';
import { openTapeSession } from './tape-session.js';
import { createDirStore } from '../tape/dir-store.js';
import type { OnMiss, ReplayResponder, Timing } from './types.js';
import type { LlmOverrides } from '../providers/types.js';
import { createSessionPlayer } from './ws/player.js';
import { createSessionRecorder } from './ws/recorder.js';
import type { SessionHandler } from './ws/types.js';
import { createUpgradeListener } from './ws/upgrade.js';

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
  const dispatcher = new Agent({
    keepAliveTimeout: 30_000,
    connect: { timeout: timeouts.connectMs },
    headersTimeout: timeouts.responseMs,
    bodyTimeout: timeouts.idleMs,
    connections: 256,
  });
  // Aborted first thing on stop: whatever still waits for an upstream ends at once and goes on the tape with why.
  const stopping = new Cancel();
  const store = storeOf(opts);
  let handle: ProxyHandler;
  let drain: () => Promise<void>;
  // WebSocket sessions (upgrade requests): relayed and recorded, or played from the tape.
  let sessions: SessionHandler;
  let writer: TapeWriter;
  let source: LoadedTape | undefined;
  let routes = [...opts.routes];

  if (opts.mode === 'record') {
    ({ writer } = await openTapeSession({
      mode: 'record',
      store,
      tape: opts.tape,
      ifExists: opts.ifExists ?? 'fail',
      redact: opts.redact,
      routes,
      onTapeFailure: opts.onTapeFailure,
    }));
    const out = createExchangeLog(writer, log);
    handle = createRecorder({
      out,
      dispatcher,
      stopping,
      spill: createBodySpill(store, writer.name),
      ...(opts.whenTapeFails ? { onTapeFailure: opts.whenTapeFails } : {}),
    }).handle;
    drain = out.drain;
    sessions = createSessionRecorder({ out, log, handshakeMs: timeouts.responseMs, onTapeFailure: opts.whenTapeFails ?? 'refuse' });
  } else {
    const session = await openTapeSession({
      mode: 'replay',
      store,
      tape: opts.tape,
      saveAs: opts.saveAs,
      keepEmpty: opts.keepEmpty,
      streamLargeBodies: true,
      redact: opts.redact,
      routes,
      fallbackRoutes: opts.fallbackRoutes,
      onTapeFailure: opts.onTapeFailure,
      replayOf: {
        onMiss: opts.onMiss ?? 'strict',
        ...(opts.llm ? { llm: opts.llm } : {}),
        ...(opts.overrides ? { overrides: opts.overrides } : {}),
        ...(opts.targeted ? { targeted: opts.targeted } : {}),
        ...(opts.liveRoutes ? { liveRoutes: opts.liveRoutes } : {}),
        ...(opts.liveAfter !== undefined ? { liveAfter: opts.liveAfter } : {}),
        ...(opts.mocks !== undefined ? { mocks: opts.mocks } : {}),
      },
    });
    const tape = session.source as LoadedTape;
    source = tape;
    writer = session.writer;
    routes = session.routes;
    for (const p of tape.problems) log.warn({ tape: opts.tape, line: p.line }, p.message);
    const matcher = opts.matcher?.(tape) ?? createMatcher(tape.exchanges);
    const responders = typeof opts.responders === 'function' ? opts.responders(tape) : (opts.responders ?? []);
    const sessionOut = createExchangeLog(writer, log);
    const replayer = createReplayer({
      tape,
      matcher,
      out: sessionOut,
      onMiss: opts.onMiss ?? 'strict',
      timing: opts.timing ?? { mode: 'instant' },
      dispatcher,
      log,
      responders,
      allowLive: opts.allowLive,
      ...(opts.matchHeaders === false ? { matchHeaders: false } : {}),
      stopping,
      blobs: { open: (body) => store.openBlob(opts.tape, body), spill: createBodySpill(store, session.writer.name) },
    });
    handle = replayer.handle;
    drain = replayer.drain;
    sessions = createSessionPlayer({
      tape,
      out: sessionOut,
      log,
      onMiss: opts.onMiss ?? 'strict',
      timing: opts.timing ?? { mode: 'instant' },
      ...(opts.redact ? { redact: opts.redact } : {}),
      handshakeMs: timeouts.responseMs,
      ...(opts.sessionLive ? { live: opts.sessionLive } : {}),
    });
  }

  const host = opts.host ?? '127.0.0.1';
  const own = ownHosts({ bound: host, allow: opts.allowHosts });
  let boundPort = -1;
  // One CA for the forward proxy's interception and for TLS on tapedeck's own port, made (or loaded) on first use.
  let authority: CertificateAuthority | undefined;
  const ca = (): CertificateAuthority => (authority ??= (opts.forwardProxy?.ca ?? (() => loadOrCreateCa(defaultCaDir())))());
  const forward = createForwardProxy({
    ca,
    passThrough: opts.forwardProxy?.passThrough ?? [],
    anyClient: opts.forwardProxy?.anyClient === true,
    isSelf: isSelfFor(own, () => boundPort),
    log,
  });
  // Bodies too large to hold stream into the tape being written (the recording, or the replay tape).
  const spill = createBodySpill(store, writer.name);
  const listener = createRequestListener({ routes, handle, clock: () => writer.now(), log, own, forward, spill });
  const server: Server = createServer({ keepAliveTimeout: 65_000 }, listener);
  server.on('connect', forward.onConnect(server));
  server.on(
    'upgrade',
    guardSocketHandler(
      'upgrade',
      log,
      createUpgradeListener({ routes, sessions, clock: () => writer.now(), log, own, forward, plain: listener }),
    ),
  );
  // The port takes http:// and https:// (ws:// and wss://) alike, told apart by each connection's first byte.
  const front = createPortServer(server, { tlsContext: (name) => ca().contextFor(name), log });
  const info = await new Promise<AddressInfo>((resolve, reject) => {
    front.server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new TapedeckError('PORT_IN_USE', `port ${opts.port ?? 8787} on ${host} is in use`, {
              details: { port: opts.port ?? 8787, host },
            })
          : err,
      ),
    );
    front.server.listen(opts.port ?? 8787, host, () => resolve(front.server.address() as AddressInfo));
  }).catch(async (err: unknown) => {
    // Not listening: give the tape (and its lock) back before reporting why.
    await writer.close();
    await dispatcher.close().catch(() => undefined);
    throw err;
  });
  const port = info.port;
  boundPort = port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${port}`,
    host,
    port,
    writer,
    ...(source ? { source } : {}),
    passedThrough: forward.passedThrough,
    close() {
      closing ??= (async () => {
        stopping.abort(shutdownReason());
        const closed = new Promise<void>((resolve) => front.server.close(() => resolve()));
        server.close();
        // Long-lived streams (MCP GET streams, slow SSE) end now; their exchanges are still written.
        server.closeAllConnections();
        front.closeAll();
        forward.closeAll();
        sessions.closeAll();
        await closed;
        // Every exchange settles once its connection is gone; the bound is a safety net, never the normal path.
        let timer: NodeJS.Timeout | undefined;
        const bounded = new Promise<void>(
          (resolve) =>
            (timer = setTimeout(() => {
              log.warn(
                { shutdownMs: timeouts.shutdownMs },
                'some exchanges did not finish in time after the stop; closing the tape without them',
              );
              resolve();
            }, timeouts.shutdownMs)),
        );
        await Promise.race([drain(), bounded]);
        clearTimeout(timer);
        await writer.close();
        // Anything still in flight after the bound is abandoned, not waited for.
        await dispatcher.destroy().catch(() => undefined);
      })();
      return closing;
    },
  };
}

/** The store the options name: the one given, or the folder store of `dir`. */
function storeOf(opts: ProxyOptions): TapeStore {
  if (opts.store !== undefined && opts.dir !== undefined) throw new TapedeckError('BAD_ARGS', 'give a store or a dir, not both');
  if (opts.store !== undefined) return opts.store;
  if (opts.dir !== undefined) return createDirStore(opts.dir);
  throw new TapedeckError('BAD_ARGS', 'startProxy needs a store or a dir for the tapes');
}
