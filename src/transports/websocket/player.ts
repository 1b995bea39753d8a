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
import { createSessionPool } from '../../replay/session-pool.js';
import { createSecretDetector } from '../../tape/redaction/secrets.js';
import { createClientServer } from './client-server.js';
import { refuseRaw } from '../../http/raw-answer.js';
import { settled } from './recorder.js';
import { relaySession, type RelayOptions } from './relay.js';
import { playSession } from './play-session.js';
import type { SessionHandler, WsUpgrade } from './types.js';
import { wsCall } from './ws-call.js';
import type { SessionPlayerOptions } from './player-options.js';
import { elapsedSince } from '../../engine/call.js';
import { exchangeRecord } from '../../engine/record.js';

export type { SessionPlayerOptions } from './player-options.js';

export { MISS_CLOSE_CODE } from './play-session.js';

export function createSessionPlayer(opts: SessionPlayerOptions): SessionHandler {
  const wss = createClientServer();
  const secrets = createSecretDetector(opts.redact);
  const pool = createSessionPool(opts.tape.exchanges, {
    secrets,
    idKeys: (ex) => sessionIdKeys(detectSession(ex.route, ex.request.path, ex.upstream)),
  });
  const stops = new Set<() => void>();
  const register = (stop: () => void): (() => void) => {
    stops.add(stop);
    return () => void stops.delete(stop);
  };
  const relay = (up: WsUpgrade, extra: Pick<RelayOptions, 'match' | 'notes' | 'rewrite' | 'endNotes'>): void =>
    opts.out.track(
      relaySession(up, {
        writer: opts.out.writer,
        wss,
        log: opts.log,
        handshakeMs: opts.handshakeMs,
        onTapeFailure: 'serve',
        register,
        ...(opts.spill ? { spill: opts.spill } : {}),
        ...extra,
      }),
    );

  return {
    handle(up) {
      const api = detectSession(up.route.prefix, up.path, up.route.upstream);
      if (api !== undefined && opts.live !== undefined) {
        const request = { method: 'GET', path: up.path, query: up.query, headers: {}, body: { kind: 'empty' as const } };
        const overrides = opts.live({ route: up.route.prefix, provider: api.provider, model: api.reader.modelOf?.(request) });
        if (overrides !== undefined) return relayLive(up, api.reader, overrides, relay);
      }
      const play = pool.open(up.route.prefix, up.path, up.query);
      if (play === undefined) {
        if (opts.onMiss === 'live') return relay(up, { match: { kind: 'live', reason: 'no session recorded here: forwarded on a miss' } });
        return refuse(up, opts, api?.provider === undefined ? undefined : { provider: api.provider, api: api.adapter.api });
      }
      const facts = { route: up.route.prefix, provider: api?.provider, api: api?.adapter.api };
      const fault = opts.faults?.pick(facts, 'websocket');
      opts.out.track(settled(opts.log, up, playSession(up, play, opts, wss, register, api?.reader.missEvent, fault)));
    },
    closeAll() {
      for (const stop of stops) stop();
    },
  };
}

/** A live session with modified replay's overrides in its URL and its configuring messages; the replay tape says what changed. */
function relayLive(
  up: WsUpgrade,
  reader: NonNullable<ReturnType<typeof detectSession>>['reader'],
  overrides: LlmOverrides,
  relay: (up: WsUpgrade, extra: Pick<RelayOptions, 'match' | 'notes' | 'rewrite' | 'endNotes'>) => void,
): void {
  const applied: Rewritten['applied'] = {};
  const rewrite: NonNullable<RelayOptions['rewrite']> = {
    query: (q) => {
      if (reader.overrideQuery === undefined) return q;
      const out = reader.overrideQuery(q, overrides);
      Object.assign(applied, out.applied);
      return out.query;
    },
    clientJson: (json) => {
      if (reader.overrideMessage === undefined || json === null || typeof json !== 'object' || Array.isArray(json)) return json;
      const out = reader.overrideMessage(json as Json, overrides);
      Object.assign(applied, out.applied);
      return out.json;
    },
  };
  const changed = Object.keys(overrides).filter((k) => overrides[k as keyof LlmOverrides] !== undefined);
  relay(up, {
    match: {
      kind: 'live',
      reason: changed.length > 0 ? `llm live with ${changed.join(', ')} overridden` : 'llm live: the model is asked again',
    },
    notes: { llm: 'live' },
    rewrite,
    endNotes: () => (Object.keys(applied).length > 0 ? { overrides: applied } : undefined),
  });
}

/** No session recorded where this one connects: refused like an HTTP miss, and written to the replay tape as one. */
function refuse(up: WsUpgrade, opts: SessionPlayerOptions, api: { provider: string; api: string } | undefined): void {
  const asked = `WebSocket ${up.route.prefix}${up.path}`;
  const reason = 'the tape has no WebSocket session recorded at this route, path and query';
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
  const answer = httpError(miss, api);
  refuseRaw(up.socket, answer);
  const call = wsCall(up);
  const response = { status: answer.status, headers: answer.headers, body: { kind: 'json' as const, json: answer.body } };
  opts.out.writer
    .append(exchangeRecord(call, { response, timing: { durationMs: elapsedSince(call) } }, { match: { kind: 'miss', reason } }))
    .catch((err: unknown) => opts.log.error({ err: (err as Error).message }, 'could not write a refused WebSocket session'));
  opts.log.info({ route: up.route.prefix, path: up.path }, 'replay miss: no WebSocket session recorded here');
}
