/** Record mode for WebSocket sessions: each one relayed to its upstream and put on the tape as it goes. */
import type { Logger } from '../../log.js';
import type { ExchangeLog } from '../exchange-log.js';
import type { TapeFailurePolicy } from '../recorder.js';
import { createClientServer } from './client-server.js';
import { relaySession } from './relay.js';
import type { SessionHandler } from './types.js';

export interface SessionRecorderOptions {
  out: ExchangeLog;
  log: Logger;
  /** How long an upstream may take to switch protocols. */
  handshakeMs: number;
  onTapeFailure?: TapeFailurePolicy;
}

export function createSessionRecorder(opts: SessionRecorderOptions): SessionHandler {
  const wss = createClientServer();
  const stops = new Set<() => void>();
  return {
    handle(up) {
      // Shutdown waits for the session's end to be on the tape.
      opts.out.track(
        relaySession(up, {
          writer: opts.out.writer,
          wss,
          log: opts.log,
          handshakeMs: opts.handshakeMs,
          onTapeFailure: opts.onTapeFailure ?? 'refuse',
          register(stop) {
            stops.add(stop);
            return () => void stops.delete(stop);
          },
        }),
      );
    },
    closeAll() {
      for (const stop of stops) stop();
    },
  };
}
