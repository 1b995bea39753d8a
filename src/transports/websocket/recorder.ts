/** Record mode for WebSocket sessions: each one relayed to its upstream and put on the tape as it goes. */
import type { Logger } from '../../log.js';
import type { ExchangeLog } from '../../engine/exchange-log.js';
import type { BodySpill } from '../../http/body-spill.js';
import type { TapeFailurePolicy } from '../http/http-engine.js';
import { createClientServer } from './client-server.js';
import { relaySession } from './relay.js';
import type { SessionHandler, WsUpgrade } from './types.js';

export interface SessionRecorderOptions {
  out: ExchangeLog;
  log: Logger;
  /** How long an upstream may take to switch protocols. */
  handshakeMs: number;
  onTapeFailure?: TapeFailurePolicy;
  /** Where messages too large to hold twice go as they are (the tape's store). */
  spill?: BodySpill;
}

/** A session's work, never rejecting: a failure is logged and its connection ended (the upgrade listener's guard covers the start). */
export function settled(log: Logger, up: WsUpgrade, work: Promise<void>): Promise<void> {
  return work.catch((err: unknown) => {
    log.error({ err: (err as Error).message, route: up.route.prefix, path: up.path }, 'WebSocket session failed');
    up.socket.destroy();
  });
}

export function createSessionRecorder(opts: SessionRecorderOptions): SessionHandler {
  const wss = createClientServer();
  const stops = new Set<() => void>();
  return {
    handle(up) {
      // Shutdown waits for the session's end to be on the tape.
      opts.out.track(
        settled(
          opts.log,
          up,
          relaySession(up, {
            writer: opts.out.writer,
            wss,
            log: opts.log,
            handshakeMs: opts.handshakeMs,
            onTapeFailure: opts.onTapeFailure ?? 'refuse',
            ...(opts.spill ? { spill: opts.spill } : {}),
            register(stop) {
              stops.add(stop);
              return () => void stops.delete(stop);
            },
          }),
        ),
      );
    },
    closeAll() {
      for (const stop of stops) stop();
    },
  };
}
