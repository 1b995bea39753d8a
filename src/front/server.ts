import { Cancel } from '../engine/cancel.js';
import { Agent } from 'undici';
import { createLogger } from '../log.js';
import type { LoadedTape, TapeWriter } from '../tape/store.js';
import { createRequestListener } from './http-app.js';
import { shutdownReason } from '../upstream/forward.js';
import { storeOf } from '../tape/stores/open-store.js';
import { createUpgradeListener } from './ws-upgrade.js';
import { drainWithin, listenProxy } from './listen.js';
import { openProxySession } from './proxy-session.js';
import { DEFAULT_TIMEOUTS, type ProxyOptions, type Timeouts } from './proxy-options.js';

export {
  DEFAULT_TIMEOUTS,
  type ForwardProxySettings,
  type ProxyOptions,
  type RecordOptions,
  type ReplayOptions,
  type Timeouts,
} from './proxy-options.js';

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
    const request = createRequestListener({ routes, handle, clock: () => writer.now(), log, own, forward, spill: session.spill });
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
        const until = Date.now() + timeouts.shutdownMs;
        await listening.stop(() => sessions.closeAll());
        // Every exchange settles once its connection is gone; the bound is a safety net, never the normal path.
        await drainWithin(session.drain(), timeouts.shutdownMs, log);
        // A store that stopped answering fails the tape rather than hold the stop past its time (a healthy one gets at
        // least half a second to confirm the last commit and let the tape go).
        await writer.close({ withinMs: Math.max(500, until - Date.now()) });
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
