/**
 * Bounded memory for huge bodies (`tape/large-body.ts` says why and what changes for them): a request or response
 * body that grows past the limit while it is read goes to the blob sink of the tape being written, chunk by chunk,
 * and is forwarded (or served) from the store as a stream. The proxy never holds more than the limit of it.
 * An event stream that grows past the limit is kept the same way, event by event (`tape/event-file.ts`).
 */
import type { Readable } from 'node:stream';
import { STREAMED_BODY_BYTES, streamedEncoding, Utf8Check } from '../tape/large-body.js';
import type { SseEvent, StoredEvents } from '../tape/schema.js';
import type { BlobSink, StoredBody, TapeStore, TapeWriter } from '../tape/store.js';

export interface BodySpill {
  /** Bodies (and event streams) above this many bytes go to the store as they stream. */
  readonly limit: number;
  sink(): BlobSink;
  open(body: StoredBody): Readable;
  /**
   * The side-file lines of a stream's events, redacted as the tape's lines are (`TapeWriter.eventLines`). Without it
   * a stream stays in its exchange's line, whatever its size.
   */
  eventLines?: ((events: readonly SseEvent[]) => string) | undefined;
}

/** A body already in the store: the reference the tape keeps, and its bytes as a stream. */
export interface LargeBody {
  body: StoredBody;
  open(): Readable;
}

/** A body being moved to the store: every chunk read from now on goes there. */
export interface Spilling {
  write(chunk: Buffer): void;
  /** Store what came; rejects with the store's failure (TAPE_WRITE_FAILED) when it could not be stored. */
  end(): Promise<LargeBody>;
  /** Throw away what came (the client went away, the exchange failed). */
  abort(): void;
}

/** Spill into the blob store of the tape `writer` is writing (its events redacted by that writer). */
export function createBodySpill(store: TapeStore, writer: Pick<TapeWriter, 'name' | 'eventLines'>, limit = STREAMED_BODY_BYTES): BodySpill {
  const { name } = writer;
  return {
    limit,
    sink: () => store.blobSink(name),
    open: (body) => store.openBlob(name, body),
    eventLines: (events) => writer.eventLines(events),
  };
}

/** Start moving a body to the store, with the chunks read so far. */
export function startSpill(spill: BodySpill, first: readonly Buffer[], contentType: string | undefined): Spilling {
  const sink = spill.sink();
  const utf8 = new Utf8Check();
  let failed: unknown;
  let done = false;
  const write = (chunk: Buffer): void => {
    if (failed !== undefined || done) return;
    try {
      utf8.push(chunk);
      sink.write(chunk);
    } catch (err) {
      failed = err;
      sink.abort();
    }
  };
  for (const c of first) write(c);
  return {
    write,
    async end() {
      if (failed !== undefined) throw failed;
      done = true;
      const body = await sink.end(streamedEncoding(contentType, utf8.valid));
      return { body, open: () => spill.open(body) };
    },
    abort() {
      if (done || failed !== undefined) return;
      done = true;
      sink.abort();
    },
  };
}

/** A stream's events being moved to the store: every event captured from now on goes there. */
export interface EventSpilling {
  /** Store these events, after those written before. */
  write(events: readonly SseEvent[]): void;
  /** Store what came; rejects with the store's failure (TAPE_WRITE_FAILED) when it could not be stored. */
  end(): Promise<StoredEvents>;
}

/** Start moving a stream's events to the store; undefined when this spill cannot redact them (they stay in the line). */
export function startEventSpill(spill: BodySpill): EventSpilling | undefined {
  const lines = spill.eventLines;
  if (lines === undefined) return undefined;
  const sink = spill.sink();
  let events = 0;
  let failed: unknown;
  return {
    write(batch) {
      if (failed !== undefined || batch.length === 0) return;
      try {
        sink.write(Buffer.from(lines(batch)));
        events += batch.length;
      } catch (err) {
        failed = err;
        sink.abort();
      }
    },
    async end() {
      if (failed !== undefined) throw failed;
      const body = await sink.end('text');
      return { ...body, encoding: 'text', events };
    },
  };
}

/** Where a replay finds the large bodies of the tape it replays, and where it keeps those it serves. */
export interface ReplayBlobs {
  /** A body stored for the tape being replayed, as a stream. */
  open(body: StoredBody): Readable;
  /** The replay tape's store for large bodies. */
  spill: BodySpill;
}

/**
 * Copy a stored body (or a stream's stored events) into another tape's store as it streams (bounded memory); resolves
 * to the copy's reference.
 */
export async function copyBlob(from: Readable, to: BodySpill, encoding: StoredBody['encoding']): Promise<StoredBody> {
  const sink = to.sink();
  try {
    for await (const chunk of from) sink.write(chunk as Buffer);
  } catch (err) {
    sink.abort();
    throw err;
  }
  return sink.end(encoding);
}
