/**
 * The recording tee: the one place a call's record is built (`exchangeRecord`) and committed, for every transport and
 * mode. A transport hands its tee the answer as the tape keeps it (`Answer`) before it gives the client the answer's
 * end, and ends or cuts by what the tee says, so one ordering rule holds everywhere:
 *
 *   **what a client has, the tape has first**: a call's record is committed before the client gets the end of its
 *   answer (the last byte, the line, the frame); when it cannot be (the tape failed), the client's answer is cut,
 *   never completed, unless the run serves unrecorded (`whenTapeFails: serve`).
 *
 * Record, replay, a mock, a miss and an injected fault are written the same way; a growing exchange (a WebSocket
 * session) begins through here too and adds its frames as it goes (`begin`).
 */
import type { KnownRequestSide } from '../providers/describe.js';
import type { Exchange } from '../tape/schema.js';
import type { NewExchange, OpenExchange } from '../tape/store.js';
import type { Call } from './call.js';
import type { ExchangeLog } from './exchange-log.js';
import { exchangeRecord, type Answer, type RecordExtras } from './record.js';
import type { TapeFailurePolicy } from './tape-failure.js';

/** The end of an answer, as a transport gives it: whole, or cut (the client must not take it for whole). */
export interface AnswerEnd {
  end(): void;
  cut(): void;
}

export interface TeeOptions extends RecordExtras {
  /** The request's meaning as computed once for it (describing reads only the answer then). */
  known?: KnownRequestSide | undefined;
  /** The meaning of an answer served as recorded for the same request (an exact replay): copied, not described again. */
  meaningOf?: Pick<Exchange, 'llm' | 'mcp'> | undefined;
  /** Once the tape cannot be written: cut what could not be recorded (`refuse`, the default) or serve it. */
  onTapeFailure?: TapeFailurePolicy | undefined;
}

export interface Tee {
  /** The record of `answer`, as it goes on the tape. */
  record(answer: Answer): NewExchange;
  /**
   * Commit the answer's record; resolves true when the client may have the answer's end (it is on the tape, or the
   * run serves unrecorded), false when it must be cut. Never rejects.
   */
  commit(answer: Answer): Promise<boolean>;
  /** Commit, then end or cut: the ordering rule in one call. Resolves once the end (or cut) is given. */
  finish(answer: Answer, to: AnswerEnd): Promise<boolean>;
  /** Commit the record of an answer whose end is not tapedeck's to give (its client left, a stream it never ends). */
  keep(answer: Answer | Promise<Answer>): Promise<void>;
  /** Begin a growing exchange (a WebSocket session): its first record now, its frames and end as they come. */
  begin(answer: Answer): Promise<OpenExchange>;
}

/**
 * The record a tee commits for `answer`, made without committing it: for a caller that reads a call's record before
 * any tape takes it (drift compares a fresh answer first, and writes the refreshed tape through a tee after).
 */
export function teeRecord(call: Call, answer: Answer, opts: TeeOptions = {}): NewExchange {
  const ex = exchangeRecord(call, answer, opts);
  if (opts.meaningOf?.llm !== undefined) ex.llm = opts.meaningOf.llm;
  if (opts.meaningOf?.mcp !== undefined) ex.mcp = opts.meaningOf.mcp;
  return ex;
}

export function createTee(log: ExchangeLog, call: Call, opts: TeeOptions = {}): Tee {
  const serveUnrecorded = opts.onTapeFailure === 'serve';
  const write = { known: opts.known, described: opts.meaningOf !== undefined };
  const record = (answer: Answer): NewExchange => teeRecord(call, answer, opts);
  // Not tracked here: the transport tracks the whole answer, whose end waits for this.
  const commit = (answer: Answer): Promise<boolean> => {
    const committed = log.commit(record(answer), write);
    return serveUnrecorded ? committed.then(() => true) : committed;
  };
  return {
    record,
    commit,
    finish(answer, to) {
      return commit(answer).then((ok) => {
        if (ok) to.end();
        else to.cut();
        return ok;
      });
    },
    keep(answer) {
      const done = Promise.resolve(answer).then(
        (a) => commit(a).then(() => undefined),
        () => undefined,
      );
      log.track(done);
      return done;
    },
    begin(answer) {
      const ex = record(answer);
      ex.websocket ??= { frames: [] };
      return log.writer.begin(ex);
    },
  };
}
