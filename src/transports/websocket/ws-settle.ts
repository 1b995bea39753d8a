/**
 * A WebSocket session through the engine's settle (`engine/settle.ts`), as every call is: the session is one call (its
 * upgrade request, `ws-call.ts`), decided as a value (played from the tape, relayed live, refused as a miss), its fault
 * picked once by the settle (a close after N server messages: it only disturbs a session, so it is asked once the
 * session is decided, and a refused session is not counted), and its record made by its tee only (`engine/tee.ts`):
 * committed whole for a refused upgrade, begun when the upgrade is answered for a session, whose frames and end line
 * follow as it goes (`session-tape.ts`). Nothing here sends: the relay (`relay.ts`) and the player (`play-session.ts`,
 * `player.ts`) deliver a decided session in their framing.
 */
import type { Decision } from '../../engine/decision.js';
import { decideCall, type Decided, type FaultFacts, type Injected, type SettleContext } from '../../engine/settle.js';
import type { SessionPlay } from '../../replay/session-pool.js';
import type { WsUpgrade } from './types.js';
import { wsCall } from './ws-call.js';

/** The API's own error event for a miss, given the client message it answers (`SessionReader.missEvent`). */
export type MissEvent = (message: string, client: unknown) => unknown;

/** Played from the tape: the recorded session the pool gave this one. */
export interface PlayDecision extends Decision {
  from: 'tape';
  play: SessionPlay;
  missEvent: MissEvent | undefined;
}

/** Relayed to the upstream (record, `--on-miss live`, modified replay's rewrites). */
export interface LiveDecision extends Decision {
  from: 'live';
  /** The query sent upstream (and recorded): the client's, or rewritten once by modified replay. */
  query: [string, string][];
  /** The client's query string as received, sent as it is when it was not rewritten. */
  rawQuery?: string | undefined;
  /** Modified replay: each client message as sent upstream (JSON in, JSON out). */
  clientJson?: ((json: unknown) => unknown) | undefined;
  /** Notes known only at the end (the overrides a rewrite applied), added by the end line. */
  endNotes?: (() => Record<string, unknown> | undefined) | undefined;
}

/** Nothing recorded where the session connects: its upgrade is refused like an HTTP miss. */
export interface MissDecision extends Decision {
  from: 'miss';
  reason: string;
  /** The session's API, for the error's shape. */
  api: { provider: string; api: string } | undefined;
}

/** A rule that answers the upgrade in the session's place (none does today: a session's rules close it). */
export interface FaultDecision extends Decision {
  from: 'fault';
  fault: Injected;
}

export type WsDecision = PlayDecision | LiveDecision | MissDecision | FaultDecision;

/** Decide a session: its fault (asked with `facts`, the session's route and API), its decision, its tee. */
export function decideSession(
  up: WsUpgrade,
  ctx: SettleContext,
  facts: FaultFacts,
  decide: () => WsDecision,
): Promise<Decided<WsDecision>> {
  return decideCall<WsDecision>(
    {
      faultAfter: true,
      faultFacts: (d) =>
        d === undefined || d.from === 'miss' || ctx.faults?.has('websocket') !== true ? undefined : { facts, levels: ['websocket'] },
      injected: (fault) => ({ from: 'fault', fault }),
      decide,
      // A session's meaning is read from its frames (`providers/sessions/`), not described line by line.
      recorded: (d) => ({ call: wsCall(up, d.from === 'live' ? d.query : up.query), meaningOf: {} }),
    },
    ctx,
  );
}

/** A live decision with the client's own query (record, `--on-miss live`). */
export function liveAsAsked(up: WsUpgrade, match?: Decision['match']): LiveDecision {
  return { from: 'live', query: up.query, rawQuery: up.rawQuery, match };
}
