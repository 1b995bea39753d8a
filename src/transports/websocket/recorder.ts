/**
 * Record mode for WebSocket sessions: each one decided live through the settle (`ws-settle.ts`: a fault rule may
 * close it after N server messages), relayed to its upstream and put on the tape as it goes.
 */
import type { Logger } from '../../log.js';
import type { ExchangeLog } from '../../engine/exchange-log.js';
import type { SettleContext } from '../../engine/settle.js';
import type { TapeFailurePolicy } from '../../engine/tape-failure.js';
import type { BodySpill } from '../../http/body-spill.js';
import { detectSession } from '../../providers/sessions/detect.js';
import { createClientServer } from './client-server.js';
import { relaySession } from './relay.js';
import type { SessionHandler, WsUpgrade } from './types.js';
import { decideSession, liveAsAsked } from './ws-settle.js';
import { injectedAnswer, refuseSession } from './refuse.js';
import { detectLlmApi } from '../../providers/detect.js';

export interface SessionRecorderOptions {
  out: ExchangeLog;
  log: Logger;
  /** How long an upstream may take to switch protocols. */
  handshakeMs: number;
  onTapeFailure?: TapeFailurePolicy;
  /** Faults injected into the recording (`--faults`): a session a rule picks is closed with its code after N server messages. */
  faults?: SettleContext['faults'];
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

/** What fault rules match a session on: its route and, when it is one, its LLM API. */
export function sessionFacts(up: WsUpgrade): { route: string; provider?: string | undefined; api?: string | undefined } {
  const api = detectSession(up.route.prefix, up.path, up.route.upstream);
  return { route: up.route.prefix, provider: api?.provider, api: api?.adapter.api };
}

/** The LLM API a session's upgrade is for, for an error in its shape. */
export function sessionApi(up: WsUpgrade): ReturnType<typeof detectLlmApi> {
  return detectLlmApi(up.route.prefix, up.path, 'GET', up.route.upstream);
}

export function createSessionRecorder(opts: SessionRecorderOptions): SessionHandler {
  const wss = createClientServer();
  const stops = new Set<() => void>();
  const ctx: SettleContext = { log: opts.out, faults: opts.faults, onTapeFailure: opts.onTapeFailure ?? 'refuse' };
  const relay = {
    settle: ctx,
    wss,
    log: opts.log,
    handshakeMs: opts.handshakeMs,
    ...(opts.spill ? { spill: opts.spill } : {}),
    register(stop: () => void) {
      stops.add(stop);
      return () => void stops.delete(stop);
    },
  };
  return {
    handle(up) {
      // Shutdown waits for the session's end to be on the tape.
      const work = decideSession(up, ctx, sessionFacts(up), () => liveAsAsked(up)).then(async (d) => {
        const { decision } = d;
        if (decision.from === 'live') return relaySession(up, { ...d, decision }, relay);
        if (decision.from === 'fault') await refuseSession(up, d, injectedAnswer(decision.fault, sessionApi(up)));
      });
      opts.out.track(settled(opts.log, up, work));
    },
    closeAll() {
      for (const stop of stops) stop();
    },
  };
}
