/**
 * The handlers of one tape: in record mode the tape's writer and the recorder in front of it; in replay mode the
 * tape loaded once, its matcher and responders built once, the replayer and the writer of the replay tape. The HTTP
 * handler, the WebSocket session handler and the drain that shutdown waits for all come from here, so the
 * single-tape proxy (`startProxy`) and the per-test tape router (`startServe`) wire a session the same way.
 */
import type { Dispatcher } from 'undici';
import type { Logger } from '../log.js';
import { createMatcher } from '../replay/matcher.js';
import { servableExchanges, unservedReasons } from '../replay/servable.js';
import type { Route } from '../tape/schema.js';
import type { LoadedTape, TapeStore, TapeWriter } from '../tape/store.js';
import type { Cancel } from '../engine/cancel.js';
import { createExchangeLog } from '../engine/exchange-log.js';
import type { ProxyHandler } from './http-app.js';
import { createBodySpill, type BodySpill } from '../http/body-spill.js';
import { createHttpEngine } from '../transports/http/http-engine.js';
import { RecordedAnswers } from '../transports/http/recorded-answers.js';
import type { RecordOptions, ReplayOptions, Timeouts } from './proxy-options.js';
import { openTapeSession } from '../engine/tape-session.js';
import { lazySessions } from '../transports/websocket/lazy.js';
import type { SessionHandler } from '../transports/websocket/types.js';

/** What every session of one server shares. */
export interface SessionContext {
  store: TapeStore;
  dispatcher: Dispatcher;
  /** Aborted first thing on stop. */
  stopping: Cancel;
  log: Logger;
  timeouts: Timeouts;
}

/** The options of a session: the proxy's, less where it listens. */
export type SessionSpec =
  | Omit<RecordOptions, 'host' | 'port' | 'allowHosts' | 'forwardProxy' | 'timeouts' | 'store' | 'dir' | 'log'>
  | Omit<ReplayOptions, 'host' | 'port' | 'allowHosts' | 'forwardProxy' | 'timeouts' | 'store' | 'dir' | 'log'>;

export interface ProxySession {
  /** The tape being written: the recording, or the replay tape. */
  writer: TapeWriter;
  /** In replay: the tape being replayed. */
  source?: LoadedTape;
  /** The routes in effect (in replay: given, then the tape's, then the fallbacks). */
  routes: Route[];
  /** Plain HTTP requests. */
  handle: ProxyHandler;
  /** WebSocket sessions (upgrade requests): relayed and recorded, or played from the tape. */
  sessions: SessionHandler;
  /** Resolves once every exchange started so far is on the tape. */
  drain(): Promise<void>;
  /** Where bodies too large to hold go as they stream: the tape being written (for the request listener). */
  spill: BodySpill;
}

export async function openProxySession(opts: SessionSpec, ctx: SessionContext): Promise<ProxySession> {
  const { store, dispatcher, stopping, log, timeouts } = ctx;
  if (opts.mode === 'record') {
    const { writer, routes } = await openTapeSession({
      mode: 'record',
      store,
      tape: opts.tape,
      ifExists: opts.ifExists ?? 'fail',
      redact: opts.redact,
      keyOptions: opts.keyOptions,
      routes: opts.routes,
      onTapeFailure: opts.onTapeFailure,
    });
    const out = createExchangeLog(writer, log);
    const spill = createBodySpill(store, writer);
    // Record: the engine with every answer live.
    const { handle } = createHttpEngine({
      out,
      log,
      dispatcher,
      stopping,
      spill,
      onTapeFailure: opts.whenTapeFails ?? 'refuse',
      faults: opts.faults,
    });
    const sessions = lazySessions(
      async () =>
        (await import('../transports/websocket/recorder.js')).createSessionRecorder({
          out,
          log,
          handshakeMs: timeouts.responseMs,
          onTapeFailure: opts.whenTapeFails ?? 'refuse',
          faults: opts.faults,
          spill,
        }),
      log,
      out.track,
    );
    return { writer, routes, handle, sessions, drain: out.drain, spill };
  }
  const session = await openTapeSession({
    mode: 'replay',
    store,
    tape: opts.tape,
    saveAs: opts.saveAs,
    keepEmpty: opts.keepEmpty,
    streamLargeBodies: true,
    redact: opts.redact,
    keyOptions: opts.keyOptions,
    routes: opts.routes,
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
  const writer = session.writer;
  for (const p of tape.problems) log.warn({ tape: opts.tape, line: p.line }, p.message);
  // Only the upstream's answers are served: an injected fault or tapedeck's own error on the tape is not (`servable.ts`).
  // The matcher and the responders (MCP, OAuth) see those only; a rule of this run injects its fault again.
  const { served, unserved } = servableExchanges(tape.exchanges);
  const servable: LoadedTape = served === tape.exchanges ? tape : { ...tape, exchanges: [...served] };
  const matcher = opts.matcher?.(servable) ?? createMatcher(served);
  if (unserved.length > 0)
    log.warn(
      { tape: opts.tape, count: unserved.length, first: unserved[0]?.why },
      "answers on the tape that are not the upstream's are not served",
    );
  const responders = typeof opts.responders === 'function' ? opts.responders(servable) : (opts.responders ?? []);
  const out = createExchangeLog(writer, log);
  const spill = createBodySpill(store, writer);
  const onMiss = opts.onMiss ?? 'strict';
  const timing = opts.timing ?? { mode: 'instant' as const };
  const engine = createHttpEngine({
    out,
    log,
    dispatcher,
    stopping,
    spill,
    // As record: once the replay tape fails, 503 (or, with whenTapeFails: serve, answers that are not kept).
    onTapeFailure: opts.whenTapeFails ?? 'refuse',
    faults: opts.faults,
    replay: {
      tape,
      matcher,
      onMiss,
      timing,
      log,
      responders,
      context: { tape: servable, matcher, out, onMiss, timing, log },
      allowLive: opts.allowLive,
      matchHeaders: opts.matchHeaders,
      // The name it was loaded by (a tape file copied under another name keeps its header's name).
      blobs: { open: (body) => store.openBlob(opts.tape, body), spill },
      answers: new RecordedAnswers(),
      unserved: unservedReasons(matcher, unserved),
    },
  });
  const sessions = lazySessions(
    async () =>
      (await import('../transports/websocket/player.js')).createSessionPlayer({
        tape,
        out,
        log,
        onMiss,
        timing,
        ...(opts.redact ? { redact: opts.redact } : {}),
        handshakeMs: timeouts.responseMs,
        ...(opts.sessionLive ? { live: opts.sessionLive } : {}),
        spill,
        faults: opts.faults,
        // A Responses-over-WebSocket call is matched as replay matches an HTTP call (`replay/session-calls.ts`).
        callMatcher: (steps) => opts.matcher?.({ ...tape, exchanges: [...steps] }) ?? createMatcher(steps),
      }),
    log,
    out.track,
  );
  return { writer, source: tape, routes: session.routes, handle: engine.handle, sessions, drain: engine.drain, spill };
}
