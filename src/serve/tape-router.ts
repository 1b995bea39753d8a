/**
 * Per-test tapes in one server: the tape a request goes to is named by the request (`tape-name.ts`), and each tape's
 * session is opened on its first request, once, however many requests race for it: in record mode one writer per
 * tape (the store's lock keeps other processes off it too), in replay mode the tape loaded and its matcher and
 * responders built once. `auto` replays a tape that exists and records one that does not; `refresh` records every
 * tape afresh. What each tape did (recorded, replayed, missed) is tallied as its exchanges reach their tape, for the
 * report when the server stops: over every time the tape was opened (a tape closed when its test is over may be
 * opened again, by a retried test: a recording then goes on, `auto` replays what was just recorded). Each opening
 * gets its own fault plan (a test's `call: N` counts within that test) and, with `--expect`, its own contract check
 * when it is closed (`tape-expect.ts`); whether a tape is recorded afresh is `tape-freshness.ts`'s call.
 */
import type { FaultPlan } from '../engine/faults/fault-plan.js';
import { isTapedeckError, TapedeckError } from '../errors.js';
import type { Exchange } from '../tape/schema.js';
import type { LoadedTape, TapeStore, TapeWriter } from '../tape/store.js';
import { openProxySession, type ProxySession, type SessionContext, type SessionSpec } from '../front/proxy-session.js';
import { calledNames, type ExpectJudge, type ExpectVerdict } from './tape-expect.js';
import { planOpening, type Freshness, type ServeMode } from './tape-freshness.js';
import { tapedecksOwnError } from '../replay/servable.js';
import { emptyTally, tallyingStore, type TapeTally } from './tape-tally.js';
import type { ReplayResponder } from '../http/types.js';

export type { ServeMode } from './tape-freshness.js';

type Without<T> = T extends unknown ? Omit<T, 'tape' | 'mode' | 'ifExists' | 'saveAs' | 'faults'> : never;

/** What one opening of a tape has of its own: its fault plan (the MCP responder injects from it too). */
export interface Opening {
  faults?: FaultPlan | undefined;
}

type ReplaySettings = Omit<Without<Extract<SessionSpec, { mode: 'replay' }>>, 'responders'> & {
  /** Built for each opening (each tape its own MCP sessions and ids, each opening its fault plan). */
  responders?: readonly ReplayResponder[] | ((tape: LoadedTape, opening: Opening) => readonly ReplayResponder[]);
};

export interface TapeRouterOptions {
  mode: ServeMode;
  /** Where the tapes are, and where recordings go. */
  store: TapeStore;
  /** Where replay tapes go: `store` to keep them beside their tapes, or a scratch store that forgets them. */
  replayStore: TapeStore;
  /** Settings of a recording session (routes, redaction, what a failed tape does). */
  record: Without<Extract<SessionSpec, { mode: 'record' }>>;
  /** Settings of a replay session (routes, matcher, responders, on-miss, timing). */
  replay: ReplaySettings;
  context: Omit<SessionContext, 'store'>;
  /** A fresh fault plan for each opening of a tape (`--faults`, `--fault`, `--seed`). */
  faults?: ((tape: string) => FaultPlan) | undefined;
  /** `--expect`: how each replayed tape's test is judged on the recorded calls it made (`expectJudge`). */
  expect?: ExpectJudge | undefined;
  /** Tapes recorded afresh (`--rerecord`) and the oldest a tape may be (`--max-age`). */
  freshness?: Freshness | undefined;
}

/** What one tape did while the server ran (every time it was opened). */
export interface TapeReport {
  tape: string;
  /**
   * What the server did with it: `record` when it recorded the tape (then, opened again in `auto` mode, it may have
   * replayed it too: `replayed` says), else `replay`. A tape that could not be opened: what was tried.
   */
  mode: 'record' | 'replay';
  /** Exchanges recorded, and requests answered from the tape (exact, similar or mocked). */
  recorded: number;
  replayed: number;
  /** Requests the tape could not answer (a miss, or a blocked side effect). */
  missed: number;
  /** Requests forwarded to the real upstream during a replay (`--on-miss live`, `--llm live`). */
  live: number;
  /** Of `replayed`, answered by similarity (not the identical request). */
  similar: number;
  /** Of `missed`, blocked as side effects. */
  blocked: number;
  /** Answers a fault rule made up or disturbed (`--faults`, `--fault`): never the upstream's. */
  faults: number;
  /** The first request the tape could not answer: the call and why. */
  firstMiss?: string;
  /** The rule of the first fault injected (`#1 openai call 2 -> 429`). */
  firstFault?: string;
  /** The replay tape saved, when replay tapes are kept. */
  savedAs?: string;
  /** Why the tape's session could not be opened (a missing tape in replay mode, a tape another process writes). */
  error?: { code: string; message: string };
  /** The first write failure: the tape is incomplete. */
  failed?: string;
  /** A test's tape that did not exist, while the tape the earlier naming rule gave the test does (`test-tapes.ts`). */
  earlier?: string;
  /**
   * Recorded afresh, replacing what it held: its test matched `--rerecord`, it was older than `--max-age`, or (auto)
   * it held an error tapedeck made because the upstream gave no answer when it was recorded.
   */
  refreshed?: 'rerecord' | 'max-age' | 'tapedeck-error';
  /** `--expect`, for a replayed tape: the recorded calls its test (its last opening) never made. */
  expect?: ExpectVerdict;
}

export interface TapeSessionEntry {
  tape: string;
  session: ProxySession;
}

export interface TapeRouter {
  /** The session of tape `name`, opened on its first request (the same promise for every request that races). */
  open(name: string): Promise<TapeSessionEntry>;
  /**
   * Close one tape now (a test is over): its WebSocket sessions end, its exchanges are waited for (bounded by
   * `drain`), its writer is closed and its file and lock given back. A later request opens it again: a recording
   * then goes on (appended), `auto` replays what was recorded. Resolves to the tape's report, undefined when it was
   * not open.
   */
  release(name: string, drain: (work: Promise<void>) => Promise<void>): Promise<TapeReport | undefined>;
  /** End every tape's WebSocket sessions (on stop, before the connections are waited for). */
  endSessions(): void;
  /** Wait for each tape's exchanges (bounded by `drain`), then close every writer; resolves to the report. */
  close(drain: (work: Promise<void>) => Promise<void>): Promise<TapeReport[]>;
  /** The report so far, one row per tape in the order they were first asked for. */
  report(): TapeReport[];
  /** Whether the tape was asked for in this run (opened, or tried). */
  knows(name: string): boolean;
  /**
   * Refuse now what opening the tape would refuse for its age (`--max-age` in replay mode, TAPE_TOO_OLD): what a
   * helper is told when it asks for its test's tape.
   */
  checkAge(name: string): Promise<void>;
  /** `--expect` names (tools, models) that no replayed tape's recording called: a misspelling, most likely. */
  unknownExpectNames(): string[];
}

/** One opening of a tape: its session, from the first request until it is closed (its test over, or the server stopped). */
interface Slot {
  tape: string;
  mode: 'record' | 'replay';
  opening: Promise<TapeSessionEntry>;
  session?: ProxySession;
  writer?: TapeWriter;
  /** Set while the tape is being closed early (`release`): a request for it waits, then opens it again. */
  closing?: Promise<void>;
  /** With `--expect`, in replay: the recordings this opening's answers came from. */
  used?: Set<string>;
}

/** What a tape did over the whole run, however many times it was opened. */
interface Entry {
  tally: TapeTally;
  /** The modes it was opened in. */
  opened: Set<'record' | 'replay'>;
  /** The mode its last opening tried, and why that failed (cleared when an opening succeeds). */
  tried: 'record' | 'replay';
  error?: TapedeckError;
  /** The first write failure of any of its writers. */
  failed?: string;
  /** The last replay tape kept. */
  savedAs?: string;
  /** Closed early at least once: recorded again, it is appended to. */
  released: boolean;
  refreshed?: 'rerecord' | 'max-age' | 'tapedeck-error';
  /** `--expect`: the verdict on its last replayed opening. */
  expect?: ExpectVerdict;
}

export function createTapeRouter(opts: TapeRouterOptions): TapeRouter {
  const state: RouterState = { opts, fresh: opts.freshness ?? {}, slots: new Map(), entries: new Map(), closed: false, called: new Set() };
  const router: TapeRouter = {
    open: (name) => openTape(state, name, router),
    release: (name, drain) => releaseTape(state, name, drain),
    endSessions() {
      for (const slot of state.slots.values()) slot.session?.sessions.closeAll();
    },
    close: (drain) => closeTapes(state, drain),
    report: () => reportAll(state),
    knows: (name) => state.entries.has(name),
    async checkAge(name) {
      if (state.fresh.maxAge === undefined || opts.mode !== 'replay' || state.slots.has(name)) return;
      await planOpening(name, opts.mode, state.fresh, opts.store);
    },
    unknownExpectNames: () => (opts.expect?.names ?? []).filter((n) => !state.called.has(n)),
  };
  return router;
}

/** One router's state, built by `createTapeRouter` and passed to each of its steps. */
interface RouterState {
  readonly opts: TapeRouterOptions;
  readonly fresh: Freshness;
  /** The sessions opened or opening, by tape. */
  readonly slots: Map<string, Slot>;
  /** Every tape asked for, in order, with what it did. */
  readonly entries: Map<string, Entry>;
  closed: boolean;
  /** With --expect: the names the replayed recordings called, to warn of an --expect name none did. */
  readonly called: Set<string>;
}

/** The session of tape `name`: the opening under way, or a new one (once it is no longer being closed). */
function openTape(state: RouterState, name: string, router: TapeRouter): Promise<TapeSessionEntry> {
  if (state.closed) return Promise.reject(new TapedeckError('TAPE_CLOSED', 'tapedeck is stopping'));
  let slot = state.slots.get(name);
  // Being closed early: open it again once it is.
  if (slot?.closing !== undefined) return slot.closing.then(() => router.open(name));
  if (slot === undefined) {
    const mode = state.opts.mode === 'replay' ? 'replay' : 'record';
    const of = entryOf(state, name, mode);
    const added: Slot = { tape: name, mode, opening: Promise.resolve() as unknown as Promise<TapeSessionEntry> };
    added.opening = start(state, added, of).catch((err: unknown) => {
      const known = isTapedeckError(err)
        ? err
        : new TapedeckError('INTERNAL', `could not open tape "${name}": ${(err as Error).message}`, { cause: err });
      of.error = known;
      // A tape that could not be opened is tried again by its next request (another process may have let it go).
      if (state.slots.get(name) === added) state.slots.delete(name);
      throw known;
    });
    state.slots.set(name, added);
    slot = added;
  }
  return slot.opening;
}

/** Open a slot's session: recorded or replayed, as `tape-freshness.ts` plans it. */
async function start(state: RouterState, slot: Slot, entry: Entry): Promise<TapeSessionEntry> {
  const { opts } = state;
  const plan = await planOpening(slot.tape, opts.mode, state.fresh, opts.store);
  slot.mode = plan.mode;
  entry.tried = slot.mode;
  const faults = opts.faults?.(slot.tape);
  const used = slot.mode === 'replay' && opts.expect !== undefined ? new Set<string>() : undefined;
  const onStored =
    used === undefined ? undefined : (ex: Exchange): void => void (ex.match?.source !== undefined && used.add(ex.match.source));
  const store = tallyingStore(opts.store, opts.replayStore, entry.tally, onStored);
  let refreshed: Entry['refreshed'] = plan.refreshed;
  let session = await openProxySession(sessionSpec(opts, slot, entry, refreshed, faults), { ...opts.context, store });
  // Auto: a tape holding an error tapedeck made (the upstream gave no answer when it was recorded) is not a recording
  // to replay: it is recorded again (`replay/servable.ts`).
  if (opts.mode === 'auto' && slot.mode === 'replay' && !entry.released && session.source?.exchanges.some((ex) => tapedecksOwnError(ex))) {
    await session.writer.close();
    slot.mode = 'record';
    entry.tried = 'record';
    refreshed = 'tapedeck-error';
    session = await openProxySession(sessionSpec(opts, slot, entry, refreshed, faults), { ...opts.context, store });
  }
  if (refreshed !== undefined && !entry.released) entry.refreshed = refreshed;
  slot.writer = session.writer;
  if (state.closed) {
    // The server stopped while the tape was opening: give it back at once.
    await session.writer.close();
    throw new TapedeckError('TAPE_CLOSED', 'tapedeck is stopping');
  }
  slot.session = session;
  if (used !== undefined) {
    slot.used = used;
    for (const name of calledNames(session.source?.exchanges ?? [])) state.called.add(name);
  }
  entry.opened.add(slot.mode);
  delete entry.error;
  return { tape: slot.tape, session };
}

/** The session an opening asks for: a recording (appended, overwritten or new), or a replay with its own responders. */
function sessionSpec(
  opts: TapeRouterOptions,
  slot: Slot,
  entry: Entry,
  refreshed: Entry['refreshed'],
  faults: FaultPlan | undefined,
): SessionSpec {
  if (slot.mode === 'record')
    return {
      ...opts.record,
      mode: 'record',
      tape: slot.tape,
      ifExists: entry.released ? 'append' : opts.mode === 'refresh' || refreshed !== undefined ? 'overwrite' : 'fail',
      faults,
    };
  const replay = opts.replay;
  const responders = replay.responders;
  // One replay tape per opening; `keepEmpty` is false, so a tape nobody reached leaves none.
  return {
    ...replay,
    mode: 'replay',
    tape: slot.tape,
    faults,
    responders: typeof responders === 'function' ? (loaded: LoadedTape) => responders(loaded, { faults }) : responders,
  };
}

/** Close one tape now (`TapeRouter.release`). */
async function releaseTape(
  state: RouterState,
  name: string,
  drain: (work: Promise<void>) => Promise<void>,
): Promise<TapeReport | undefined> {
  const slot = state.slots.get(name);
  // Not open: with --expect, a test's tape it never opened is judged as such.
  if (slot === undefined) return state.entries.has(name) ? undefined : judgeUnopened(state, name);
  await slot.opening.catch(() => undefined);
  const entry = state.entries.get(name) as Entry;
  if (slot.closing !== undefined) {
    await slot.closing;
    return reportOf(state, name, entry);
  }
  const session = slot.session;
  if (state.slots.get(name) !== slot || session === undefined) return undefined;
  slot.closing = (async () => {
    session.sessions.closeAll();
    await drain(session.drain());
    await session.writer.close();
    noteWriter(state, entry, slot);
    judge(state, entry, slot);
    entry.released = true;
    state.slots.delete(name);
  })();
  await slot.closing;
  return reportOf(state, name, entry);
}

/** Every tape closed (`TapeRouter.close`). */
async function closeTapes(state: RouterState, drain: (work: Promise<void>) => Promise<void>): Promise<TapeReport[]> {
  state.closed = true;
  const slots = state.slots;
  // Sessions still opening settle first (each is closed again at once, see `start`).
  await Promise.allSettled([...slots.values()].flatMap((s) => [s.opening, ...(s.closing ? [s.closing] : [])]));
  const open = [...slots.values()].filter((s) => s.session !== undefined && s.closing === undefined);
  await drain(Promise.all(open.map((s) => (s.session as ProxySession).drain())).then(() => undefined));
  await Promise.all(open.map((s) => (s.writer as TapeWriter).close()));
  for (const s of open) {
    noteWriter(state, state.entries.get(s.tape) as Entry, s);
    judge(state, state.entries.get(s.tape) as Entry, s);
  }
  return reportAll(state);
}

/** `--expect`: the verdict on an opening (so far, or once closed). */
function judge(state: RouterState, entry: Entry, slot: Slot): void {
  const expect = state.opts.expect;
  if (expect === undefined || slot.used === undefined || slot.session?.source === undefined) return;
  entry.expect = expect.judge(slot.session.source.exchanges, slot.used);
}

/**
 * `--expect`, a test's tape closed without a request (the test made none): every expected recorded call is
 * missing, if the tape would have been replayed.
 */
async function judgeUnopened(state: RouterState, name: string): Promise<TapeReport | undefined> {
  const { opts } = state;
  const judge = opts.expect;
  if (judge === undefined || state.closed) return undefined;
  const plan = await planOpening(name, opts.mode, state.fresh, opts.store).catch(() => undefined);
  if (plan?.mode !== 'replay' || !(await opts.store.has(name))) return undefined;
  const recorded = (await opts.store.load(name, { resolveFiles: false })).exchanges;
  for (const n of calledNames(recorded)) state.called.add(n);
  const entry = entryOf(state, name, 'replay');
  entry.opened.add('replay');
  entry.expect = judge.judge(recorded, new Set());
  return reportOf(state, name, entry);
}

function entryOf(state: RouterState, name: string, mode: 'record' | 'replay'): Entry {
  let entry = state.entries.get(name);
  if (entry === undefined) {
    entry = { tally: emptyTally(), opened: new Set(), tried: mode, released: false };
    state.entries.set(name, entry);
  }
  return entry;
}

/** What an opening leaves in its tape's entry once its writer is closed (or, for a report, so far). */
function noteWriter(state: RouterState, entry: Entry, slot: Slot): void {
  const writer = slot.writer;
  if (writer === undefined) return;
  if (writer.failure !== undefined) entry.failed ??= writer.failure.message;
  if (slot.mode === 'replay' && state.opts.replayStore === state.opts.store && writer.count > 0) entry.savedAs = writer.name;
}

function reportOf(state: RouterState, tape: string, entry: Entry): TapeReport {
  const open = state.slots.get(tape);
  if (open !== undefined) {
    noteWriter(state, entry, open);
    judge(state, entry, open);
  }
  const t = entry.tally;
  return {
    tape,
    mode: entry.opened.has('record') ? 'record' : entry.opened.has('replay') ? 'replay' : entry.tried,
    recorded: t.recorded,
    replayed: t.replayed,
    missed: t.missed,
    live: t.live,
    similar: t.similar,
    blocked: t.blocked,
    faults: t.faults,
    ...(t.firstMiss !== undefined ? { firstMiss: t.firstMiss } : {}),
    ...(t.firstFault !== undefined ? { firstFault: t.firstFault } : {}),
    ...(entry.savedAs !== undefined ? { savedAs: entry.savedAs } : {}),
    ...(entry.error ? { error: { code: entry.error.code, message: entry.error.message } } : {}),
    ...(entry.failed !== undefined ? { failed: entry.failed } : {}),
    ...(entry.refreshed !== undefined ? { refreshed: entry.refreshed } : {}),
    ...(entry.expect !== undefined ? { expect: entry.expect } : {}),
  };
}

function reportAll(state: RouterState): TapeReport[] {
  return [...state.entries].map(([tape, entry]) => reportOf(state, tape, entry));
}
