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
import { tallyingStore, type TapeTally } from './tape-tally.js';
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
  /** The replay tape saved, when replay tapes are kept. */
  savedAs?: string;
  /** Why the tape's session could not be opened (a missing tape in replay mode, a tape another process writes). */
  error?: { code: string; message: string };
  /** The first write failure: the tape is incomplete. */
  failed?: string;
  /** A test's tape that did not exist, while the tape the earlier naming rule gave the test does (`test-tapes.ts`). */
  earlier?: string;
  /** Recorded afresh, replacing what it held: its test matched `--rerecord`, or it was older than `--max-age`. */
  refreshed?: 'rerecord' | 'max-age';
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
  refreshed?: 'rerecord' | 'max-age';
  /** `--expect`: the verdict on its last replayed opening. */
  expect?: ExpectVerdict;
}

export function createTapeRouter(opts: TapeRouterOptions): TapeRouter {
  // The sessions opened or opening, by tape; every tape asked for, in order, with what it did.
  const slots = new Map<string, Slot>();
  const entries = new Map<string, Entry>();
  let closed = false;
  // With --expect: the names the replayed recordings called, to warn of an --expect name none did.
  const called = new Set<string>();
  const fresh = opts.freshness ?? {};

  const start = async (slot: Slot, entry: Entry): Promise<TapeSessionEntry> => {
    const plan = await planOpening(slot.tape, opts.mode, fresh, opts.store);
    slot.mode = plan.mode;
    entry.tried = slot.mode;
    const faults = opts.faults?.(slot.tape);
    const used = slot.mode === 'replay' && opts.expect !== undefined ? new Set<string>() : undefined;
    const onStored =
      used === undefined ? undefined : (ex: Exchange): void => void (ex.match?.source !== undefined && used.add(ex.match.source));
    const store = tallyingStore(opts.store, opts.replayStore, entry.tally, onStored);
    const replay = opts.replay;
    const responders = replay.responders;
    const spec: SessionSpec =
      slot.mode === 'record'
        ? {
            ...opts.record,
            mode: 'record',
            tape: slot.tape,
            ifExists: entry.released ? 'append' : opts.mode === 'refresh' || plan.refreshed !== undefined ? 'overwrite' : 'fail',
            faults,
          }
        : // One replay tape per opening; `keepEmpty` is false, so a tape nobody reached leaves none.
          {
            ...replay,
            mode: 'replay',
            tape: slot.tape,
            faults,
            responders: typeof responders === 'function' ? (loaded: LoadedTape) => responders(loaded, { faults }) : responders,
          };
    const session = await openProxySession(spec, { ...opts.context, store });
    if (plan.refreshed !== undefined && !entry.released) entry.refreshed = plan.refreshed;
    slot.writer = session.writer;
    if (closed) {
      // The server stopped while the tape was opening: give it back at once.
      await session.writer.close();
      throw new TapedeckError('TAPE_CLOSED', 'tapedeck is stopping');
    }
    slot.session = session;
    if (used !== undefined) {
      slot.used = used;
      for (const name of calledNames(session.source?.exchanges ?? [])) called.add(name);
    }
    entry.opened.add(slot.mode);
    delete entry.error;
    return { tape: slot.tape, session };
  };

  /** `--expect`: the verdict on an opening (so far, or once closed). */
  const judge = (entry: Entry, slot: Slot): void => {
    if (opts.expect === undefined || slot.used === undefined || slot.session?.source === undefined) return;
    entry.expect = opts.expect.judge(slot.session.source.exchanges, slot.used);
  };

  /**
   * `--expect`, a test's tape closed without a request (the test made none): every expected recorded call is
   * missing, if the tape would have been replayed.
   */
  const judgeUnopened = async (name: string): Promise<TapeReport | undefined> => {
    const judge = opts.expect;
    if (judge === undefined || closed) return undefined;
    const plan = await planOpening(name, opts.mode, fresh, opts.store).catch(() => undefined);
    if (plan?.mode !== 'replay' || !(await opts.store.has(name))) return undefined;
    const recorded = (await opts.store.load(name, { resolveFiles: false })).exchanges;
    for (const n of calledNames(recorded)) called.add(n);
    const entry = entryOf(name, 'replay');
    entry.opened.add('replay');
    entry.expect = judge.judge(recorded, new Set());
    return reportOf(name, entry);
  };

  const entryOf = (name: string, mode: 'record' | 'replay'): Entry => {
    let entry = entries.get(name);
    if (entry === undefined) {
      entry = { tally: { recorded: 0, replayed: 0, missed: 0, live: 0 }, opened: new Set(), tried: mode, released: false };
      entries.set(name, entry);
    }
    return entry;
  };

  /** What an opening leaves in its tape's entry once its writer is closed (or, for a report, so far). */
  const noteWriter = (entry: Entry, slot: Slot): void => {
    const writer = slot.writer;
    if (writer === undefined) return;
    if (writer.failure !== undefined) entry.failed ??= writer.failure.message;
    if (slot.mode === 'replay' && opts.replayStore === opts.store && writer.count > 0) entry.savedAs = writer.name;
  };

  const reportOf = (tape: string, entry: Entry): TapeReport => {
    const open = slots.get(tape);
    if (open !== undefined) {
      noteWriter(entry, open);
      judge(entry, open);
    }
    const t = entry.tally;
    return {
      tape,
      mode: entry.opened.has('record') ? 'record' : entry.opened.has('replay') ? 'replay' : entry.tried,
      recorded: t.recorded,
      replayed: t.replayed,
      missed: t.missed,
      live: t.live,
      ...(entry.savedAs !== undefined ? { savedAs: entry.savedAs } : {}),
      ...(entry.error ? { error: { code: entry.error.code, message: entry.error.message } } : {}),
      ...(entry.failed !== undefined ? { failed: entry.failed } : {}),
      ...(entry.refreshed !== undefined ? { refreshed: entry.refreshed } : {}),
      ...(entry.expect !== undefined ? { expect: entry.expect } : {}),
    };
  };

  const report = (): TapeReport[] => [...entries].map(([tape, entry]) => reportOf(tape, entry));

  const router: TapeRouter = {
    open(name) {
      if (closed) return Promise.reject(new TapedeckError('TAPE_CLOSED', 'tapedeck is stopping'));
      let slot = slots.get(name);
      // Being closed early: open it again once it is.
      if (slot?.closing !== undefined) return slot.closing.then(() => router.open(name));
      if (slot === undefined) {
        const mode = opts.mode === 'replay' ? 'replay' : 'record';
        const of = entryOf(name, mode);
        const added: Slot = { tape: name, mode, opening: Promise.resolve() as unknown as Promise<TapeSessionEntry> };
        added.opening = start(added, of).catch((err: unknown) => {
          const known = isTapedeckError(err)
            ? err
            : new TapedeckError('INTERNAL', `could not open tape "${name}": ${(err as Error).message}`, { cause: err });
          of.error = known;
          // A tape that could not be opened is tried again by its next request (another process may have let it go).
          if (slots.get(name) === added) slots.delete(name);
          throw known;
        });
        slots.set(name, added);
        slot = added;
      }
      return slot.opening;
    },
    async release(name, drain) {
      const slot = slots.get(name);
      // Not open: with --expect, a test's tape it never opened is judged as such.
      if (slot === undefined) return entries.has(name) ? undefined : judgeUnopened(name);
      await slot.opening.catch(() => undefined);
      const entry = entries.get(name) as Entry;
      if (slot.closing !== undefined) {
        await slot.closing;
        return reportOf(name, entry);
      }
      const session = slot.session;
      if (slots.get(name) !== slot || session === undefined) return undefined;
      slot.closing = (async () => {
        session.sessions.closeAll();
        await drain(session.drain());
        await session.writer.close();
        noteWriter(entry, slot);
        judge(entry, slot);
        entry.released = true;
        slots.delete(name);
      })();
      await slot.closing;
      return reportOf(name, entry);
    },
    endSessions() {
      for (const slot of slots.values()) slot.session?.sessions.closeAll();
    },
    async close(drain) {
      closed = true;
      // Sessions still opening settle first (each is closed again at once, see `start`).
      await Promise.allSettled([...slots.values()].flatMap((s) => [s.opening, ...(s.closing ? [s.closing] : [])]));
      const open = [...slots.values()].filter((s) => s.session !== undefined && s.closing === undefined);
      await drain(Promise.all(open.map((s) => (s.session as ProxySession).drain())).then(() => undefined));
      await Promise.all(open.map((s) => (s.writer as TapeWriter).close()));
      for (const s of open) {
        noteWriter(entries.get(s.tape) as Entry, s);
        judge(entries.get(s.tape) as Entry, s);
      }
      return report();
    },
    report,
    knows: (name) => entries.has(name),
    async checkAge(name) {
      if (fresh.maxAge === undefined || opts.mode !== 'replay' || slots.has(name)) return;
      await planOpening(name, opts.mode, fresh, opts.store);
    },
    unknownExpectNames: () => (opts.expect?.names ?? []).filter((n) => !called.has(n)),
  };
  return router;
}
