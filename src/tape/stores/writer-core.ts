/**
 * The one tape writer: what every store's writer does, whatever keeps its records. It assigns ids and sequence
 * numbers, encodes each exchange once (`exchange-encoder.ts`: redaction, large bodies stored apart), gathers the
 * records of one event-loop turn into one commit (group commit: one write, one statement), latches the first failure
 * (said once, then every append rejects with it), counts what is stored, keeps the tape's timeline (`now`), waits
 * for what is in flight before it closes, discards a tape nobody wrote to, and grows sessions (`begin`) and streams
 * stored apart (`eventLines`), marking the tape's format as they need.
 *
 * A store gives it a tape it has claimed (`ClaimedTape`: the header, where its numbering goes on, its lock already
 * held) and a small sink: persist a batch of records, put a blob, mark the header's format, say what a failure
 * means, and release the tape. The folder store's sink appends lines to a file (`tape-writer.ts`), the memory
 * store's keeps strings (`memory-writer.ts`), PostgreSQL's runs one statement per commit (`postgres/pg-writer.ts`).
 */
import { TapedeckError } from '../../errors.js';
import { createExchangeEncoder, type EncodedExchange, type PutBlob } from '../exchange-encoder.js';
import { beginExchange } from '../open-exchange.js';
import { GroupCommit, type SinkRecord } from './group-commit.js';

export type { SinkRecord } from './group-commit.js';
import { TAPE_FORMAT_SESSIONS, TAPE_FORMAT_STREAM_FILES, type Exchange, type TapeHeader } from '../schema.js';
import type { TapeWriter, WriterOptions } from '../store.js';

/** A tape a store has claimed for writing: its lock held, its header stored. */
export interface ClaimedTape {
  header: TapeHeader;
  /** The next exchange's `seq`, and the next record's position (after those of an appended-to tape). */
  seq: number;
  pos: number;
  /** Exchanges already on it. */
  count: number;
  /** The first `[REDACTED:N]` number this session may use. */
  firstMarker: number;
  /** Whether it is an existing tape appended to (never discarded). */
  append: boolean;
}

export interface WriterSink {
  /** Where the tape is, for messages: its file, or `<store>#<name>`. */
  readonly path: string;
  /** Store a batch, in order. Synchronous where the store's writes are; throws (or rejects) when it could not. */
  persist(records: readonly SinkRecord[]): void | Promise<void>;
  /** Store the bytes of a large body apart. */
  putBlob: PutBlob;
  /** The header takes this format (2: it holds a session; 3: a stream stored apart), from now or the next commit. */
  markFormat(format: TapeHeader['format']): void;
  /** The tape's failure, in the store's words (what it holds, where). */
  failure(err: unknown, stored: number): TapedeckError;
  /**
   * Give the tape back: make it durable, drop it when it is to be discarded (nobody wrote to it), release its lock.
   * `abandon`: the store did not confirm what was pending in time, let the tape go at once; `failed`: the tape has
   * failed (a store may not be able to tidy up then).
   */
  release(o: { discard: boolean; abandon: boolean; failed: boolean; until: number | undefined }): Promise<void>;
}

/**
 * The writer of a claimed tape over its store's sink. `fail` latches a failure the store learns of between commits
 * (a database connection that dropped): every later append rejects with it.
 */
export function createTapeWriterCore(
  opts: WriterOptions,
  claimed: ClaimedTape,
  sink: WriterSink,
): { writer: TapeWriter; fail: (err: unknown) => TapedeckError } {
  const { header } = claimed;
  let { seq, count } = claimed;
  const perfStart = performance.now() - (Date.now() - Date.parse(header.createdAt));
  const encoder = createExchangeEncoder({
    redact: opts.redact,
    largeBodyBytes: opts.largeBodyBytes,
    firstMarker: claimed.firstMarker,
    putBlob: sink.putBlob,
  });

  let closed = false;
  let appended = 0;
  let failure: TapedeckError | undefined;
  const fail = (err: unknown): TapedeckError => {
    if (failure === undefined) {
      failure = sink.failure(err, count);
      opts.onFailure?.(failure);
    }
    return failure;
  };

  // Group commit (`group-commit.ts`): the records of one event-loop turn go out together, in order.
  const commits = new GroupCommit(sink, { failure: () => failure, fail, stored: () => void count++ }, claimed.pos);
  const enqueue = (kind: SinkRecord['kind'], line: string, ex?: Exchange): Promise<void> => commits.enqueue(kind, line, ex);

  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    inFlight.add(p);
    const done = (): void => void inFlight.delete(p);
    p.then(done, done);
    return p;
  };
  const queueExchange = (encoded: EncodedExchange): Promise<Exchange> =>
    enqueue('exchange', encoded.line, encoded.ex).then(() => encoded.ex);

  const markFormat = (format: TapeHeader['format']): void => {
    if (header.format >= format) return;
    try {
      sink.markFormat(format);
    } catch (err) {
      throw fail(err);
    }
    header.format = format;
  };

  const writer: TapeWriter = {
    path: sink.path,
    name: opts.name,
    header,
    get count() {
      return count;
    },
    get failure() {
      return failure;
    },
    now: () => performance.now() - perfStart,
    append(input) {
      if (failure !== undefined) return Promise.reject(failure);
      if (closed) return Promise.reject(new TapedeckError('TAPE_CLOSED', `tape "${opts.name}" is closed`));
      let encoded: EncodedExchange | Promise<EncodedExchange>;
      try {
        if (input.response?.eventsFile !== undefined) markFormat(TAPE_FORMAT_STREAM_FILES);
        encoded = encoder.encode(input, seq++);
      } catch (err) {
        return Promise.reject(err as Error);
      }
      appended++;
      // The common case queues at once (its record keeps its place in call order); a large body is stored first.
      if (!(encoded instanceof Promise)) return queueExchange(encoded);
      return track(
        encoded.then(queueExchange, (err: unknown) => {
          // A large body that could not be stored apart: the tape cannot be written any more.
          throw err instanceof TapedeckError && err.code === 'TAPE_WRITE_FAILED' ? fail(err.cause ?? err) : err;
        }),
      );
    },
    eventLines: (events) => encoder.encodeEventLines(events),
    begin(input) {
      if (closed) return Promise.reject(new TapedeckError('TAPE_CLOSED', `tape "${opts.name}" is closed`));
      return beginExchange(
        {
          tape: opts.name,
          encoder,
          enqueue: (line) => enqueue('part', line),
          failure: () => failure,
          fail,
          markSessions: () => markFormat(TAPE_FORMAT_SESSIONS),
        },
        (ex) => writer.append(ex),
        input,
      );
    },
    async close(closeOpts) {
      if (closed) return;
      closed = true;
      const until = closeOpts?.withinMs === undefined ? undefined : Date.now() + closeOpts.withinMs;
      // Exchanges appended before the close whose large bodies are still being stored go on the tape first.
      const pending = Promise.allSettled([...inFlight]).then(() => commits.settled());
      const confirmed = await settlesBy(pending, until);
      if (!confirmed)
        // The store has not confirmed what is pending, and the stop's time is up: the tape fails with it.
        fail(Object.assign(new Error("did not confirm the last exchange(s) before the stop's time ran out"), { code: 'STORE_STOPPED' }));
      // A tape nobody wrote to (a replay no client called) leaves nothing behind.
      const discard = opts.discardIfEmpty === true && appended === 0 && !claimed.append && failure === undefined;
      await sink.release({ discard, abandon: !confirmed, failed: failure !== undefined, until });
    },
  };
  return { writer, fail };
}

/** Whether `p` settles by `until` (epoch ms; undefined: waits for it). */
export async function settlesBy(p: Promise<unknown>, until: number | undefined): Promise<boolean> {
  if (until === undefined) {
    await p;
    return true;
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, until - Date.now()))));
  const done = await Promise.race([p.then(() => true as const), late]);
  clearTimeout(timer);
  return done;
}
