/**
 * The writer core's group commit (`writer-core.ts`): the records of one event-loop turn go to the sink together,
 * after the turn (setImmediate), one commit at a time and in order. Each record is complete before it is queued, so a
 * crash loses at most the last commit. A batch the sink stored in part (`PartlyPersisted`) settles its stored records
 * and fails the rest with the tape's failure.
 */
import type { TapedeckError } from '../../errors.js';
import type { Exchange } from '../schema.js';

/** One record of a commit: an exchange's line, or a session's continuation line (`frames`, `end`). */
export interface SinkRecord {
  kind: 'exchange' | 'part';
  /** Its JSON text, without the newline. */
  line: string;
  /** Its position among the tape's records, from the first record after the header. */
  pos: number;
  /** The exchange, for an exchange's line. */
  ex?: Exchange;
}

/** Raised by a sink whose batch was stored in part: how many of its first records are stored. */
export class PartlyPersisted extends Error {
  constructor(
    readonly persisted: number,
    override readonly cause: unknown,
    /** Said with the failure (a torn last line that could not be cut off). */
    readonly note?: string,
  ) {
    super('a batch was stored in part');
  }
}

interface Waiting {
  record: SinkRecord;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** What the group commit asks of its writer: the latched failure, how to latch one, and what to count as stored. */
export interface CommitHost {
  failure(): TapedeckError | undefined;
  fail(err: unknown): TapedeckError;
  /** An exchange's record is stored. */
  stored(): void;
}

export class GroupCommit {
  private batch: Waiting[] = [];
  private scheduled = false;
  private running: Promise<void> = Promise.resolve();
  private readonly flushNow = (): void | Promise<void> => this.flush();

  constructor(
    private readonly sink: { persist(records: readonly SinkRecord[]): void | Promise<void> },
    private readonly host: CommitHost,
    /** The next record's position among the tape's records. */
    private pos: number,
  ) {}

  /** Queue a record; resolves once it is stored, rejects with the tape's failure. */
  enqueue(kind: SinkRecord['kind'], line: string, ex?: Exchange): Promise<void> {
    const failure = this.host.failure();
    if (failure !== undefined) return Promise.reject(failure);
    return new Promise<void>((resolve, reject) => {
      const record: SinkRecord = ex === undefined ? { kind, line, pos: this.pos++ } : { kind, line, pos: this.pos++, ex };
      this.batch.push({ record, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.running = this.running.then(this.flushNow);
      });
    });
  }

  /** Resolves once every record queued so far has been committed (or failed). */
  async settled(): Promise<void> {
    // A commit scheduled but not started yet is chained on `running` only after its immediate fires.
    while (this.scheduled || this.batch.length > 0) await new Promise((r) => setImmediate(r));
    await this.running;
  }

  private flush(): void | Promise<void> {
    this.scheduled = false;
    const mine = this.batch;
    this.batch = [];
    if (mine.length === 0) return;
    const failure = this.host.failure();
    if (failure !== undefined) return void mine.forEach((w) => w.reject(failure));
    let persisting: void | Promise<void>;
    try {
      persisting = this.sink.persist(mine.map((w) => w.record));
    } catch (err) {
      return this.failed(mine, err);
    }
    // A store whose writes are synchronous (a file) settles its batch in this turn, with no promise between.
    if (persisting === undefined) return this.stored(mine);
    return persisting.then(
      () => this.stored(mine),
      (err: unknown) => this.failed(mine, err),
    );
  }

  private stored(mine: readonly Waiting[]): void {
    for (const w of mine) if (w.record.kind === 'exchange') this.host.stored();
    for (const w of mine) w.resolve();
  }

  private failed(mine: readonly Waiting[], err: unknown): void {
    const part = err instanceof PartlyPersisted ? err : undefined;
    const whole = part?.persisted ?? 0;
    this.stored(mine.slice(0, whole));
    const error = this.host.fail(part?.cause ?? err);
    if (part?.note !== undefined && !error.message.endsWith(part.note)) error.message += `; ${part.note}`;
    for (const w of mine.slice(whole)) w.reject(error);
  }
}
