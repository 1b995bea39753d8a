/**
 * Group commit for stores whose writes are asynchronous (a database): the records appended during one event-loop
 * turn go out in one `flush`; while a flush is under way, new records gather for the next. Each `add` resolves once
 * the flush that carried its record has succeeded; a failed flush rejects its records and every later `add`.
 */
export interface GroupCommit<T> {
  add(record: T): Promise<void>;
  /** Resolves once everything added so far is flushed (or failed). */
  settle(): Promise<void>;
}

export function createGroupCommit<T>(flush: (records: T[]) => Promise<void>): GroupCommit<T> {
  let batch: { record: T; resolve: () => void; reject: (err: unknown) => void }[] = [];
  let scheduled = false;
  let running: Promise<void> = Promise.resolve();
  let failed: { err: unknown } | undefined;

  const run = async (): Promise<void> => {
    scheduled = false;
    const mine = batch;
    batch = [];
    if (mine.length === 0) return;
    if (failed !== undefined) {
      for (const w of mine) w.reject(failed.err);
      return;
    }
    try {
      await flush(mine.map((w) => w.record));
      for (const w of mine) w.resolve();
    } catch (err) {
      failed = { err };
      for (const w of mine) w.reject(err);
    }
  };
  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    // After this turn, and after the flush under way: one flush at a time, in order.
    setImmediate(() => {
      running = running.then(run);
    });
  };

  return {
    add(record) {
      if (failed !== undefined) return Promise.reject(failed.err);
      return new Promise<void>((resolve, reject) => {
        batch.push({ record, resolve, reject });
        schedule();
      });
    },
    async settle() {
      // A flush scheduled but not started yet is chained on `running` only after its immediate fires.
      while (scheduled || batch.length > 0) await new Promise((r) => setImmediate(r));
      await running;
    },
  };
}
