/**
 * Where every exchange goes, in record and replay, over HTTP and stdio: describe what it means (LLM call, MCP
 * message), append it to the tape, and log a failure rather than lose it silently. It also keeps track of the work
 * still in flight (writes, long-lived streams) so that shutdown can wait for all of it before closing the tape.
 */
import { isTapedeckError } from '../errors.js';
import type { Logger } from '../log.js';
import { describeExchange, type KnownRequestSide } from '../providers/describe.js';
import { splitBatchExchange } from '../providers/mcp-batch.js';
import { LegacyPairing } from '../providers/mcp-legacy-pairing.js';
import type { Exchange } from '../tape/schema.js';
import type { NewExchange, TapeWriter } from '../tape/stores/tape-writer.js';

export interface WriteOptions {
  described?: boolean;
  known?: KnownRequestSide | undefined;
}

export interface ExchangeLog {
  /** The tape being written. */
  readonly writer: TapeWriter;
  /**
   * Describe `ex` and append it. Never throws: a failure is logged. `described` skips describing when the meaning is
   * already on the exchange (an exact replay copies the recorded one); `known` is the request's meaning as computed
   * once for it (describing reads only the answer then).
   */
  write(ex: NewExchange, opts?: WriteOptions): void;
  /**
   * Describe and append `ex`; resolves true once its line is on the tape, false when it could not be written. Unlike
   * `write`, not tracked: the caller tracks the work it is part of.
   */
  commit(ex: NewExchange, opts?: WriteOptions): Promise<boolean>;
  /** Write the exchange `pending` resolves to, once it does; resolves when it is on the tape (or failed to be). */
  writeWhen(pending: Promise<NewExchange>, opts?: WriteOptions): Promise<void>;
  /** Work shutdown must wait for that is not a write yet (a stream still open). */
  track(work: Promise<unknown>): void;
  /** Resolves once everything written or tracked so far has settled, including work started meanwhile. */
  drain(): Promise<void>;
}

export interface ExchangeLogOptions {
  /**
   * Pair a legacy MCP stream's events with their POSTs as it goes on a recording (default: a recording does). Off for a
   * tape written from records already paired (drift's refreshed tape).
   */
  pairLegacyStreams?: boolean;
}

export function createExchangeLog(writer: TapeWriter, log: Logger, opts: ExchangeLogOptions = {}): ExchangeLog {
  const pending = new Set<Promise<unknown>>();
  const track = (work: Promise<unknown>): void => {
    pending.add(work);
    const done = (): void => void pending.delete(work);
    work.then(done, done);
  };
  // These run for every exchange: plain promise chains rather than async functions, one promise per step.
  // A JSON-RPC batch goes on the tape one message per exchange (each as if sent alone), in one write.
  const append = (ex: NewExchange, described: boolean, known?: KnownRequestSide): Promise<boolean> => {
    const parts = splitBatchExchange(ex);
    if (parts === undefined) return appendOne(ex, described, known);
    return Promise.all(parts.map((part) => appendOne(part, false))).then((done) => done.every(Boolean));
  };
  const written = (ex: Exchange): boolean => {
    if (log.isLevelEnabled('debug'))
      log.debug({ id: ex.id, route: ex.route, path: ex.request.path, status: ex.response?.status }, 'exchange written');
    return true;
  };
  // Recording: a legacy MCP stream's record says which of its events answered which POST (`legacy-pairing.ts`).
  const pairing = writer.header.mode === 'record' && opts.pairLegacyStreams !== false ? new LegacyPairing() : undefined;
  const appendOne = (ex: NewExchange, described: boolean, known?: KnownRequestSide): Promise<boolean> => {
    let appended: Promise<Exchange>;
    try {
      const full = described ? ex : describeExchange(ex, log, known);
      pairing?.annotate(full);
      appended = writer.append(full);
      if (pairing !== undefined) appended = appended.then((stored) => (pairing.observe(stored), stored));
    } catch (err) {
      appended = Promise.reject(err as Error);
    }
    return appended.then(written, (err: unknown) => {
      // A tape that cannot be written any more was reported once, when it failed (TAPE_WRITE_FAILED): not per exchange.
      if (!(isTapedeckError(err) && err.code === 'TAPE_WRITE_FAILED' && err === writer.failure)) {
        log.error({ err: (err as Error).message, tape: writer.name, route: ex.route, path: ex.request.path }, 'could not write exchange');
      }
      return false;
    });
  };

  return {
    writer,
    write(ex, opts = {}) {
      track(append(ex, opts.described === true, opts.known));
    },
    // Not tracked here: the caller (a live answer) tracks the whole exchange, whose end waits for this.
    commit(ex, opts = {}) {
      return append(ex, opts.described === true, opts.known);
    },
    writeWhen(ex, opts = {}) {
      const done = ex.then(
        async (e) => void (await append(e, opts.described === true, opts.known)),
        (err: unknown) => void log.error({ err: (err as Error).message, tape: writer.name }, 'could not capture exchange'),
      );
      track(done);
      return done;
    },
    track,
    async drain() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
  };
}
