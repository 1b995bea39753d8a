/**
 * One session factory for every transport (HTTP and stdio): a record session is the tape's writer; a replay session
 * is the tape being replayed, loaded from its store, and the writer of the replay tape saved beside it (its header
 * saying what was replayed and how). `startProxy` and `mcp-stdio` both build their sessions here, so a replay tape
 * has the same name, header and clean-up whichever way the agent talks.
 */
import { hash } from 'node:crypto';
import { TapedeckError } from '../errors.js';
import { exactKey, type ExactKeyOptions } from '../replay/exact-key.js';
import { STREAMED_BODY_BYTES } from '../tape/large-body.js';
import type { RedactOptions } from '../tape/redaction/redact.js';
import type { Exchange, Route, TapeHeader } from '../tape/schema.js';
import type { LoadedTape, TapeStore, TapeWriter } from '../tape/store.js';

interface SessionCommon {
  store: TapeStore;
  /** The tape recorded, or replayed. */
  tape: string;
  redact?: RedactOptions | undefined;
  /** Called once, when the tape being written fails (disk full, the database gone). */
  onTapeFailure?: ((err: TapedeckError) => void) | undefined;
  /** How requests are keyed (the config's ignored fields and secret rules): the store indexes by the matcher's key. */
  keyOptions?: ExactKeyOptions | undefined;
}

export interface RecordSessionOptions extends SessionCommon {
  mode: 'record';
  routes: readonly Route[];
  ifExists?: 'fail' | 'overwrite' | 'append' | undefined;
}

/** What the replay tape's header records of how the tape was replayed (`replayOf`, but the tape's own name). */
export type ReplaySettings = Omit<NonNullable<TapeHeader['replayOf']>, 'tape'>;

export interface ReplaySessionOptions extends SessionCommon {
  mode: 'replay';
  /** Routes given now; they win over the tape's, which win over `fallbackRoutes` (the built-in defaults). */
  routes: readonly Route[];
  fallbackRoutes?: readonly Route[] | undefined;
  /** The replay tape's name. Default `<tape>.replay-<timestamp>`. */
  saveAs?: string | undefined;
  replayOf: ReplaySettings;
  /** Keep a replay tape that no request reached (default: it is removed on close, leaving no clutter). */
  keepEmpty?: boolean | undefined;
  /**
   * Leave answers stored apart, and request bodies too large to hold (`STREAMED_BODY_BYTES`), in the store, checked to
   * be there, for the replayer to stream them when it serves them (`ReadTapeOptions.answersApart`: the HTTP proxy
   * does; stdio replays load every body).
   */
  streamLargeBodies?: boolean | undefined;
}

export type SessionOptions = RecordSessionOptions | ReplaySessionOptions;

export interface TapeSession {
  /** The tape being written: the recording, or the replay tape. */
  writer: TapeWriter;
  /** In replay: the tape being replayed. */
  source?: LoadedTape;
  /** The routes in effect (in replay: given, then the tape's, then the fallbacks). */
  routes: Route[];
}

/** `<tape>.replay-<timestamp>`: the default name of a replay tape. */
export function defaultReplayName(tape: string, at = new Date()): string {
  return `${tape}.replay-${at.toISOString().replace(/[:.]/g, '-')}`;
}

/**
 * The exact-match key a store indexes exchanges by (sha256 of `exactKey` under the options replay matches with, so
 * the index and the matcher mean the same by "the same request"): finds a request's recordings across tapes.
 * Computed for every recorded exchange: node's one-shot `hash` (no Hash object) costs ~40% less than `createHash` here.
 */
export function indexKey(ex: Exchange, opts: ExactKeyOptions = {}): string {
  return hash('sha256', exactKey(ex, opts), 'hex');
}

/**
 * TAPE_LOCKED when a writer holds the tape: it is being recorded (by another tapedeck, on another machine), and what
 * it holds so far is not the recording, so replaying it would answer with misses. Asked after the tape is loaded: a
 * writer takes the lock before it touches the tape, so a recording that began while the tape was read is seen too.
 */
async function refuseTapeBeingRecorded(store: TapeStore, tape: string): Promise<void> {
  const by = await store.writing(tape);
  if (by === undefined) return;
  throw new TapedeckError(
    'TAPE_LOCKED',
    `cannot replay tape "${tape}": it is being recorded by ${by}, and is not complete yet. Replay it once that ` +
      `recording is over (its test done, or that tapedeck stopped)`,
    { status: 409, details: { tape, writer: by } },
  );
}

export async function openTapeSession(opts: SessionOptions): Promise<TapeSession> {
  const keyOptions = opts.keyOptions ?? {};
  const onFailure = {
    ...(opts.onTapeFailure ? { onFailure: opts.onTapeFailure } : {}),
    indexKey: (ex: Exchange) => indexKey(ex, keyOptions),
  };
  if (opts.mode === 'record') {
    const routes = [...opts.routes];
    const writer = await opts.store.openWriter({
      name: opts.tape,
      ifExists: opts.ifExists ?? 'fail',
      redact: opts.redact,
      header: { mode: 'record', routes },
      ...onFailure,
    });
    return { writer, routes };
  }
  const saveAs = opts.saveAs ?? defaultReplayName(opts.tape);
  if (saveAs === opts.tape)
    throw new TapedeckError('BAD_ARGS', `a replay is saved as a tape of its own: "${saveAs}" is the tape it replays`);
  const source = await opts.store.load(
    opts.tape,
    opts.streamLargeBodies === true ? { inlineUpTo: STREAMED_BODY_BYTES, answersApart: true } : {},
  );
  await refuseTapeBeingRecorded(opts.store, opts.tape);
  // Fallbacks (built-in defaults), then the routes recorded on the tape, then any given now: later wins.
  const byPrefix = new Map([...(opts.fallbackRoutes ?? []), ...source.header.routes].map((r) => [r.prefix, r] as const));
  for (const r of opts.routes) byPrefix.set(r.prefix, r);
  const routes = [...byPrefix.values()];
  const writer = await opts.store.openWriter({
    name: saveAs,
    ifExists: 'overwrite',
    redact: opts.redact,
    header: { mode: 'replay', routes, replayOf: { tape: opts.tape, ...opts.replayOf } },
    discardIfEmpty: opts.keepEmpty !== true,
    ...onFailure,
  });
  return { writer, source, routes };
}
