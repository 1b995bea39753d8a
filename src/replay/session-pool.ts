/**
 * Replaying WebSocket sessions without sockets: the recorded sessions of a tape, grouped by where they connected
 * (route, path, query without secrets), each cut into what the server sent unprompted on connect and, per client
 * message, the server messages that followed it. A live session plays one recorded session: it takes the first one
 * nobody is playing, and keeps it while the client's messages match it, message by message, in order. When the first
 * message that does not match it matches another recording from the start (concurrent sessions that connected in
 * another order), it moves to that one; when none matches, it is a miss.
 */
import type { SessionApi } from '../providers/sessions/detect.js';
import type { Exchange, MatchInfo, WsFrame } from '../tape/schema.js';
import { isSecretQueryName } from '../tape/redaction/secret-query.js';
import type { SecretDetector } from '../tape/redaction/secrets.js';
import { bindIds, compareFrame, newIdMap, withNewIds, type IdMap } from './frame-match.js';
import type { Matcher } from './matcher.js';
import { matchCall, recordedCalls, type SessionCalls } from './session-calls.js';

/** One client message of a recording and the server messages that followed it (until the next client message). */
export interface Turn {
  client: WsFrame;
  replies: WsFrame[];
}

export interface RecordedSession {
  exchange: Exchange;
  /** What the server sent before the client's first message. */
  opening: WsFrame[];
  turns: Turn[];
}

/** Cut a recorded session into its opening and turns. Client closes end a turn's replies (what follows is the close echo). */
export function scriptOf(exchange: Exchange): RecordedSession {
  const opening: WsFrame[] = [];
  const turns: Turn[] = [];
  let closedByClient = false;
  for (const f of exchange.websocket?.frames ?? []) {
    if (f.from === 'client') {
      if (f.kind === 'close') closedByClient = true;
      else if (!closedByClient) turns.push({ client: f, replies: [] });
      continue;
    }
    if (closedByClient) continue;
    (turns.at(-1)?.replies ?? opening).push(f);
  }
  return { exchange, opening, turns };
}

/** `call`: for a session matched one call at a time (`session-calls.ts`), how this message's call was matched. */
export type PlayOutcome =
  | { kind: 'match'; replies: WsFrame[]; turn: Turn; index: number; call?: MatchInfo }
  | { kind: 'miss'; reason: string; closest?: { id: string; difference: string }; call?: MatchInfo };

/** One live session playing a recording. */
export interface SessionPlay {
  /** The recording being played (it may change at the first messages: see the module comment). */
  readonly source: Exchange;
  /** The server messages to send on connect. */
  opening(): WsFrame[];
  /** A client message: the server messages that answer it, or why none does (a call matched semantically takes a while). */
  next(frame: WsFrame): PlayOutcome | Promise<PlayOutcome>;
  /** The session ended: its recording is used (a later session takes another one first). */
  done(): void;
}

export interface SessionPool {
  /** The sessions recorded for this upgrade, or undefined when the tape has none there. */
  open(route: string, path: string, query: readonly [string, string][]): SessionPlay | undefined;
  /** How many sessions the tape has (for messages). */
  readonly size: number;
}

export interface SessionPoolOptions {
  secrets: SecretDetector;
  /** Per-run identifier fields of the API a session speaks. */
  idKeys: (ex: Exchange) => readonly string[];
  /** The API a recorded session speaks: one whose reader has `callOf` is played one call at a time (`session-calls.ts`). */
  api?: (ex: Exchange) => SessionApi | undefined;
  /** The matcher over a place's recorded calls (replay's: exact, then semantic, with the run's settings). */
  callMatcher?: (steps: readonly Exchange[]) => Matcher;
}

const REDACTED_VALUE = /^\[REDACTED(?::\d+)?\]$/;

/** Where a session connected, as matched: route, path, and the query without credentials (named so, or redacted on the tape). */
function placeOf(route: string, path: string, query: readonly [string, string][], redactedKeys?: ReadonlySet<string>): string {
  const kept = query
    .filter(([k, v]) => !REDACTED_VALUE.test(v) && !redactedKeys?.has(k) && !isSecretQueryName(k))
    .map(([k, v]) => `${k}=${v}`)
    .sort();
  return `${route} ${path}?${kept.join('&')}`;
}

export function createSessionPool(exchanges: readonly Exchange[], opts: SessionPoolOptions): SessionPool {
  const recorded = exchanges
    .filter((ex) => ex.websocket !== undefined && ex.response?.status === 101 && ex.match?.kind !== 'miss')
    .sort((a, b) => a.offsetMs - b.offsetMs || a.seq - b.seq);
  const redacted = redactedQueryKeys(recorded);
  const byPlace = sessionsByPlace(recorded, redacted);
  const state: PoolState = { owner: new Map(), used: new Set(), opts };
  const calls = new Map<string, { api: SessionApi; calls: SessionCalls } | undefined>();
  /** The calls recorded at a place, when its API is matched one call at a time (built once per place). */
  const callsAt = (place: string, candidates: RecordedSession[]): { api: SessionApi; calls: SessionCalls } | undefined => {
    if (!calls.has(place)) {
      const first = candidates[0] as RecordedSession;
      const api = opts.api?.(first.exchange);
      const made =
        api?.reader.callOf === undefined || opts.callMatcher === undefined
          ? undefined
          : {
              api,
              calls: recordedCalls(
                candidates.map((c) => c.exchange),
                api,
                opts.callMatcher,
              ),
            };
      calls.set(place, made);
    }
    return calls.get(place);
  };
  return {
    size: recorded.length,
    open(route, path, query) {
      const place = placeOf(route, path, query, redacted.get(route));
      const candidates = byPlace.get(place);
      if (candidates === undefined || candidates.length === 0) return undefined;
      const byCall = callsAt(place, candidates);
      if (byCall !== undefined)
        return new CallPlay(candidates[0] as RecordedSession, byCall.api, byCall.calls, { route, path, query: [...query] });
      return new Play(candidates, state);
    },
  };
}

/**
 * A live session of an API that asks for one call per client message: each message matched like an HTTP call
 * against every call recorded at this place (`session-calls.ts`). It connects as the first recording there did.
 */
class CallPlay implements SessionPlay {
  constructor(
    private readonly first: RecordedSession,
    private readonly api: SessionApi,
    private readonly calls: SessionCalls,
    private readonly place: { route: string; path: string; query: [string, string][] },
  ) {}

  get source(): Exchange {
    return this.first.exchange;
  }

  opening(): WsFrame[] {
    return this.first.opening;
  }

  async next(frame: WsFrame): Promise<PlayOutcome> {
    const out = await matchCall(this.calls, this.api, this.place, frame);
    if (out.kind === 'miss')
      return {
        kind: 'miss',
        reason: out.reason,
        ...(out.match !== undefined ? { call: out.match } : {}),
        ...(out.closest !== undefined ? { closest: out.closest } : {}),
      };
    return { kind: 'match', replies: out.replies, turn: { client: out.ask, replies: out.replies }, index: 0, call: out.match };
  }

  done(): void {}
}

/** Query keys the tape has redacted anywhere on a route (an API key in the URL is not part of where it connected). */
function redactedQueryKeys(recorded: readonly Exchange[]): Map<string, Set<string>> {
  const redacted = new Map<string, Set<string>>();
  for (const ex of recorded) {
    const keys = redacted.get(ex.route) ?? new Set<string>();
    for (const [k, v] of ex.request.query) if (REDACTED_VALUE.test(v)) keys.add(k);
    redacted.set(ex.route, keys);
  }
  return redacted;
}

/** The recorded sessions cut into scripts, grouped by where they connected, in the order they did. */
function sessionsByPlace(recorded: readonly Exchange[], redacted: Map<string, Set<string>>): Map<string, RecordedSession[]> {
  const byPlace = new Map<string, RecordedSession[]>();
  for (const ex of recorded) {
    const place = placeOf(ex.route, ex.request.path, ex.request.query, redacted.get(ex.route));
    const list = byPlace.get(place) ?? [];
    list.push(scriptOf(ex));
    byPlace.set(place, list);
  }
  return byPlace;
}

/** What the plays of one pool share: who plays each recording now; which were played to the end. */
interface PoolState {
  readonly owner: Map<RecordedSession, Play>;
  readonly used: Set<RecordedSession>;
  readonly opts: SessionPoolOptions;
}

type TurnTry = { ok: true; ids: IdMap } | { ok: false; difference: string };

/** One live session playing a recording of its pool (see the module comment), its ids bound message by message. */
class Play implements SessionPlay {
  private session: RecordedSession;
  private readonly history: WsFrame[] = [];
  private ids: IdMap = newIdMap();
  private readonly keys: ReadonlySet<string>;
  private ended = false;

  constructor(
    private readonly candidates: RecordedSession[],
    private readonly pool: PoolState,
  ) {
    this.session = this.pick();
    pool.owner.set(this.session, this);
    this.keys = new Set(pool.opts.idKeys(this.session.exchange));
  }

  get source(): Exchange {
    return this.session.exchange;
  }

  /** The first recording nobody plays and nobody played; else one nobody plays; else the first. */
  private pick(): RecordedSession {
    const free = (s: RecordedSession): boolean => this.pool.owner.get(s) === undefined;
    return (
      this.candidates.find((s) => free(s) && !this.pool.used.has(s)) ??
      this.candidates.find(free) ??
      (this.candidates[0] as RecordedSession)
    );
  }

  opening(): WsFrame[] {
    return this.session.opening.map((f) => withNewIds(f, this.ids, this.keys));
  }

  next(frame: WsFrame): PlayOutcome {
    const k = this.history.length;
    const owner = this.pool.owner.get(this.session);
    const here = owner === this || owner === undefined ? this.tryTurn(this.session, k, frame, this.ids) : undefined;
    if (here?.ok === true) return this.take(this.session, k, frame, here.ids);
    return this.switchTo(k, frame) ?? this.miss(k, here);
  }

  /**
   * Another recording this client matches from its first message on (one nobody plays, or one whose player has not
   * matched a message yet): this session plays it from now on, and its player (if any) picks again.
   */
  private switchTo(k: number, frame: WsFrame): PlayOutcome | undefined {
    const { owner } = this.pool;
    for (const c of this.candidates) {
      if (c === this.session) continue;
      const other = owner.get(c);
      if (other !== undefined && other !== this && other.history.length > 0) continue;
      const ids = newIdMap();
      let ok = true;
      for (let i = 0; i <= k && ok; i++) ok = this.tryTurn(c, i, i < k ? (this.history[i] as WsFrame) : frame, ids).ok;
      if (!ok) continue;
      if (owner.get(this.session) === this) owner.delete(this.session);
      if (other !== undefined && other !== this) other.bumped();
      owner.set(c, this);
      this.session = c;
      return this.take(c, k, frame, ids);
    }
    return undefined;
  }

  /** Why message k+1 matched nothing; `here`: how it compared with this session's recording (undefined: played by another). */
  private miss(k: number, here: Extract<TurnTry, { ok: false }> | undefined): PlayOutcome {
    const { id } = this.session.exchange;
    const turns = this.session.turns.length;
    const reason =
      here === undefined
        ? `recording #${id} is played by another session`
        : k >= turns
          ? `recording #${id} has ${turns} client message(s); this is message ${k + 1}`
          : `message ${k + 1} differs from recording #${id}: ${here.difference}`;
    return {
      kind: 'miss',
      reason,
      ...(here !== undefined && k < turns ? { closest: { id, difference: here.difference } } : {}),
    };
  }

  private tryTurn(s: RecordedSession, k: number, frame: WsFrame, ids: IdMap): TurnTry {
    const turn = s.turns[k];
    if (turn === undefined) return { ok: false, difference: 'the recording has no more client messages' };
    const verdict = compareFrame(frame, turn.client, ids, this.keys, this.pool.opts.secrets);
    if (!verdict.ok) return verdict;
    const next: IdMap = { toNew: new Map(ids.toNew), toRecorded: new Map(ids.toRecorded) };
    bindIds(next, verdict.bind);
    return { ok: true, ids: next };
  }

  private take(s: RecordedSession, k: number, frame: WsFrame, ids: IdMap): PlayOutcome {
    this.ids = ids;
    this.history.push(frame);
    const turn = s.turns[k] as Turn;
    return { kind: 'match', turn, index: k, replies: turn.replies.map((f) => withNewIds(f, ids, this.keys)) };
  }

  /** Another session took the recording this one was given on connect: it picks again at its first message. */
  bumped(): void {
    this.session = this.pick();
    if (this.pool.owner.get(this.session) === undefined) this.pool.owner.set(this.session, this);
  }

  done(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.pool.owner.get(this.session) === this) this.pool.owner.delete(this.session);
    if (this.history.length > 0) this.pool.used.add(this.session);
  }
}
