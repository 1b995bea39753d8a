/**
 * Bounded memory for huge bodies (`tape/large-body.ts` says why and what changes for them): a request or response
 * body that grows past the limit while it is read goes to the blob sink of the tape being written, chunk by chunk,
 * and is forwarded (or served) from the store as a stream. The proxy never holds more than the limit of it.
 */
import type { Readable } from 'node:stream';
import { STREAMED_BODY_BYTES, streamedEncoding, Utf8Check } from '../tape/large-body.js';
import type { BlobSink, StoredBody, TapeStore } from '../tape/store.js';

export interface BodySpill {
  /** Bodies above this many bytes go to the store as they stream. */
  readonly limit: number;
  sink(): BlobSink;
  open(body: StoredBody): Readable;
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

/** Spill into the blob store of the tape `name` is writing. */
export function createBodySpill(store: TapeStore, name: string, limit = STREAMED_BODY_BYTES): BodySpill {
  return { limit, sink: () => store.blobSink(name), open: (body) => store.openBlob(name, body) };
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

/** Where a replay finds the large bodies of the tape it replays, and where it keeps those it serves. */
export interface ReplayBlobs {
  /** A body stored for the tape being replayed, as a stream. */
  open(body: StoredBody): Readable;
  /** The replay tape's store for large bodies. */
  spill: BodySpill;
}

/** Copy a stored body into another tape's store as it streams (bounded memory); resolves to the copy's reference. */
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
