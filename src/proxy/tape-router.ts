/**
 * Per-test tapes in one server: the tape a request goes to is named by the request (`tape-name.ts`), and each tape's
 * session is opened on its first request, once, however many requests race for it: in record mode one writer per
 * tape (the store's lock keeps other processes off it too), in replay mode the tape loaded and its matcher and
 * responders built once. `auto` replays a tape that exists and records one that does not; `refresh` records every
 * tape afresh. What each tape did (recorded, replayed, missed) is tallied as its exchanges reach their tape, for the
 * report when the server stops.
 */
import { isTapedeckError, TapedeckError } from '../errors.js';
import type { TapeStore, TapeWriter } from '../tape/store.js';
import { openProxySession, type ProxySession, type SessionContext, type SessionSpec } from './proxy-session.js';
import { tallyingStore, type TapeTally } from './tape-tally.js';

export type ServeMode = 'auto' | 'record' | 'replay' | 'refresh';

type Without<T> = T extends unknown ? Omit<T, 'tape' | 'mode' | 'ifExists' | 'saveAs'> : never;

export interface TapeRouterOptions {
  mode: ServeMode;
  /** Where the tapes are, and where recordings go. */
  store: TapeStore;
  /** Where replay tapes go: `store` to keep them beside their tapes, or a scratch store that forgets them. */
  replayStore: TapeStore;
  /** Settings of a recording session (routes, redaction, what a failed tape does). */
  record: Without<Extract<SessionSpec, { mode: 'record' }>>;
  /** Settings of a replay session (routes, matcher, responders, on-miss, timing). */
  replay: Without<Extract<SessionSpec, { mode: 'replay' }>>;
  context: Omit<SessionContext, 'store'>;
}

/** What one tape did while the server ran. */
export interface TapeReport {
  tape: string;
  /** What the server did with it: recorded it, or replayed it. */
  mode: 'record' | 'replay';
  /** Exchanges recorded (record), or answered from the tape (replay: exact, similar or mocked). */
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
}

interface Slot {
  tape: string;
  mode: 'record' | 'replay';
  tally: TapeTally;
  opening: Promise<TapeSessionEntry>;
  session?: ProxySession;
  writer?: TapeWriter;
  error?: TapedeckError;
  /** Set while the tape is being closed early (`release`): a request for it waits, then opens it again. */
  closing?: Promise<void>;
}

export function createTapeRouter(opts: TapeRouterOptions): TapeRouter {
  // The sessions opened or opening; `seen` also keeps a tape whose session could not be opened, for the report.
  const slots = new Map<string, Slot>();
  const seen = new Map<string, Slot>();
  // A tape's counts over every time it was opened; the tapes closed early (recorded again: appended).
  const tallies = new Map<string, TapeTally>();
  const released = new Set<string>();
  let closed = false;

  const modeFor = async (tape: string): Promise<'record' | 'replay'> => {
    if (opts.mode === 'auto') return (await opts.store.has(tape)) ? 'replay' : 'record';
    return opts.mode === 'replay' ? 'replay' : 'record';
  };

  const start = async (slot: Slot): Promise<TapeSessionEntry> => {
    slot.mode = await modeFor(slot.tape);
    const store = tallyingStore(opts.store, opts.replayStore, slot.tally);
    const spec: SessionSpec =
      slot.mode === 'record'
        ? {
            ...opts.record,
            mode: 'record',
            tape: slot.tape,
            ifExists: released.has(slot.tape) ? 'append' : opts.mode === 'refresh' ? 'overwrite' : 'fail',
          }
        : // One replay tape per tape and server run; `keepEmpty` is false, so a tape nobody reached leaves none.
          { ...opts.replay, mode: 'replay', tape: slot.tape };
    const session = await openProxySession(spec, { ...opts.context, store });
    slot.writer = session.writer;
    if (closed) {
      // The server stopped while the tape was opening: give it back at once.
      await session.writer.close();
      throw new TapedeckError('TAPE_CLOSED', 'tapedeck is stopping');
    }
    slot.session = session;
    return { tape: slot.tape, session };
  };

  const reportOf = (slot: Slot): TapeReport => {
    const t = slot.tally;
    const keptReplay = slot.mode === 'replay' && slot.writer !== undefined && opts.replayStore === opts.store && slot.writer.count > 0;
    return {
      tape: slot.tape,
      mode: slot.mode,
      recorded: t.recorded,
      replayed: t.replayed,
      missed: t.missed,
      live: t.live,
      ...(keptReplay && slot.writer ? { savedAs: slot.writer.name } : {}),
      ...(slot.error ? { error: { code: slot.error.code, message: slot.error.message } } : {}),
      ...(slot.writer?.failure ? { failed: slot.writer.failure.message } : {}),
    };
  };

  const report = (): TapeReport[] => [...seen.values()].map(reportOf);

  const router: TapeRouter = {
    open(name) {
      if (closed) return Promise.reject(new TapedeckError('TAPE_CLOSED', 'tapedeck is stopping'));
      let slot = slots.get(name);
      // Being closed early: open it again once it is.
      if (slot?.closing !== undefined) return slot.closing.then(() => router.open(name));
      if (slot === undefined) {
        const fresh: Slot = {
          tape: name,
          mode: opts.mode === 'replay' ? 'replay' : 'record',
          tally: tallies.get(name) ?? { recorded: 0, replayed: 0, missed: 0, live: 0 },
          opening: Promise.resolve() as unknown as Promise<TapeSessionEntry>,
        };
        fresh.opening = start(fresh).catch((err: unknown) => {
          const known = isTapedeckError(err)
            ? err
            : new TapedeckError('INTERNAL', `could not open tape "${name}": ${(err as Error).message}`, { cause: err });
          fresh.error = known;
          // A tape that could not be opened is tried again by its next request (another process may have let it go).
          if (slots.get(name) === fresh) slots.delete(name);
          throw known;
        });
        tallies.set(name, fresh.tally);
        slots.set(name, fresh);
        seen.set(name, fresh);
        slot = fresh;
      }
      return slot.opening;
    },
    async release(name, drain) {
      const slot = slots.get(name);
      if (slot === undefined) return undefined;
      await slot.opening.catch(() => undefined);
      if (slot.closing !== undefined) {
        await slot.closing;
        return reportOf(slot);
      }
      const session = slot.session;
      if (slots.get(name) !== slot || session === undefined) return undefined;
      slot.closing = (async () => {
        session.sessions.closeAll();
        await drain(session.drain());
        await session.writer.close();
        released.add(name);
        slots.delete(name);
      })();
      await slot.closing;
      return reportOf(slot);
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
      return report();
    },
    report,
  };
  return router;
}
