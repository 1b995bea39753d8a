/**
 * Replay mode for WebSocket sessions: tapedeck plays the server. What the server sent unprompted goes out on
 * connect; each client message is matched against the recorded client messages in order (`replay/session-pool.ts`)
 * and answered with the server messages that followed it, at the recorded pace under `--timing`. A miss sends the
 * API's own error event; strict then closes the session (1008, the reason saying why), lenient goes on. A session the
 * tape has nothing for is refused like an HTTP miss (404 in the API's shape), or goes live under `--on-miss live`;
 * sessions whose LLM calls go live (modified replay) are relayed with the overrides applied. Every session, played
 * or live, is written to the replay tape.
 */
import { detectSession, sessionIdKeys } from '../../providers/sessions/detect.js';
import { httpError } from '../../providers/errors.js';
import type { Json, LlmOverrides, Rewritten } from '../../providers/types.js';
import { missError } from '../../replay/miss.js';
import { createReplayMatcher } from '../../replay/pipeline.js';
import { createSessionPool } from '../../replay/session-pool.js';
import { createSecretDetector } from '../../tape/redaction/secrets.js';
import type { Decided, SettleContext } from '../../engine/settle.js';
import { createClientServer } from './client-server.js';
import { sessionApi, sessionFacts, settled } from './recorder.js';
import { relaySession, type RelayOptions } from './relay.js';
import { playSession } from './play-session.js';
import { injectedAnswer, refuseSession } from './refuse.js';
import type { SessionHandler, WsUpgrade } from './types.js';
import type { SessionPlayerOptions } from './player-options.js';
import { decideSession, liveAsAsked, type LiveDecision, type MissDecision, type WsDecision } from './ws-settle.js';

export type { SessionPlayerOptions } from './player-options.js';

export { MISS_CLOSE_CODE } from './play-session.js';

type SessionApi = ReturnType<typeof detectSession>;

export function createSessionPlayer(opts: SessionPlayerOptions): SessionHandler {
  const wss = createClientServer();
  const secrets = createSecretDetector(opts.redact);
  const pool = createSessionPool(opts.tape.exchanges, {
    secrets,
    idKeys: (ex) => sessionIdKeys(detectSession(ex.route, ex.request.path, ex.upstream)),
    api: (ex) => detectSession(ex.route, ex.request.path, ex.upstream),
    callMatcher: opts.callMatcher ?? ((steps) => createReplayMatcher(steps, { secrets })),
  });
  const stops = new Set<() => void>();
  const register = (stop: () => void): (() => void) => {
    stops.add(stop);
    return () => void stops.delete(stop);
  };
  // A replay goes on when its replay tape cannot be written: what could not be kept is lost, not the session.
  const ctx: SettleContext = { log: opts.out, faults: opts.faults, onTapeFailure: 'serve' };
  const relay: RelayOptions = {
    settle: ctx,
    wss,
    log: opts.log,
    handshakeMs: opts.handshakeMs,
    register,
    ...(opts.spill ? { spill: opts.spill } : {}),
  };

  /** The session's decision: relayed with overrides (modified replay), played from the tape, live on a miss, or a miss. */
  const decide = (up: WsUpgrade, api: SessionApi): WsDecision => {
    if (api !== undefined && opts.live !== undefined) {
      const request = { method: 'GET', path: up.path, query: up.query, headers: {}, body: { kind: 'empty' as const } };
      const overrides = opts.live({ route: up.route.prefix, provider: api.provider, model: api.reader.modelOf?.(request) });
      if (overrides !== undefined) return liveRewritten(up, api.reader, overrides);
    }
    const play = pool.open(up.route.prefix, up.path, up.query);
    if (play !== undefined)
      return {
        from: 'tape',
        play,
        missEvent: api?.reader.missEvent,
        match: { kind: 'exact', source: play.source.id, stage: 'session', reason: 'session replayed message by message' },
      };
    if (opts.onMiss === 'live') return liveAsAsked(up, { kind: 'live', reason: 'no session recorded here: forwarded on a miss' });
    const reason = 'the tape has no WebSocket session recorded at this route, path and query';
    return {
      from: 'miss',
      reason,
      match: { kind: 'miss', reason },
      api: api === undefined ? undefined : { provider: api.provider, api: api.adapter.api },
    };
  };

  const deliver = async (up: WsUpgrade, d: Decided<WsDecision>, api: SessionApi): Promise<void> => {
    const { decision } = d;
    if (decision.from === 'live') return relaySession(up, { ...d, decision }, relay);
    if (decision.from === 'tape') return playSession(up, { ...d, decision }, opts, wss, register);
    if (decision.from === 'miss') return refuse(up, { ...d, decision }, opts);
    await refuseSession(
      up,
      d,
      injectedAnswer(decision.fault, api === undefined ? sessionApi(up) : { provider: api.provider, api: api.adapter.api }),
    );
  };

  return {
    handle(up) {
      const api = detectSession(up.route.prefix, up.path, up.route.upstream);
      const work = decideSession(up, ctx, sessionFacts(up), () => decide(up, api)).then((d) => deliver(up, d, api));
      opts.out.track(settled(opts.log, up, work));
    },
    closeAll() {
      for (const stop of stops) stop();
    },
  };
}

/** A live session with modified replay's overrides in its URL and its configuring messages; the replay tape says what changed. */
function liveRewritten(up: WsUpgrade, reader: NonNullable<SessionApi>['reader'], overrides: LlmOverrides): LiveDecision {
  const applied: Rewritten['applied'] = {};
  let query = up.query;
  if (reader.overrideQuery !== undefined) {
    const out = reader.overrideQuery(up.query, overrides);
    Object.assign(applied, out.applied);
    query = out.query;
  }
  const clientJson = (json: unknown): unknown => {
    if (reader.overrideMessage === undefined || json === null || typeof json !== 'object' || Array.isArray(json)) return json;
    const out = reader.overrideMessage(json as Json, overrides);
    Object.assign(applied, out.applied);
    return out.json;
  };
  const changed = Object.keys(overrides).filter((k) => overrides[k as keyof LlmOverrides] !== undefined);
  return {
    from: 'live',
    query,
    clientJson,
    match: {
      kind: 'live',
      reason: changed.length > 0 ? `llm live with ${changed.join(', ')} overridden` : 'llm live: the model is asked again',
    },
    notes: { llm: 'live' },
    endNotes: () => (Object.keys(applied).length > 0 ? { overrides: applied } : undefined),
  };
}

/** No session recorded where this one connects: refused like an HTTP miss, on the replay tape first. */
async function refuse(up: WsUpgrade, d: Decided<MissDecision>, opts: SessionPlayerOptions): Promise<void> {
  const asked = `WebSocket ${up.route.prefix}${up.path}`;
  const { reason, api } = d.decision;
  const miss = missError({
    tape: opts.tape.name,
    asked,
    reason,
    onMiss: opts.onMiss,
    closest: [],
    noCandidates: '',
    details: { tape: opts.tape.name, onMiss: opts.onMiss, asked, reason },
    headers: { 'x-tapedeck-match': 'miss', 'x-should-retry': 'false' },
  });
  opts.log.info({ route: up.route.prefix, path: up.path }, 'replay miss: no WebSocket session recorded here');
  await refuseSession(up, d, httpError(miss, api));
}
