/**
 * Large bodies in PostgreSQL: content-addressed by sha256, kept in 1 MiB chunks so that a body streaming in is
 * written as it comes (bounded memory) and any one row stays small. A blob is shared by every tape that holds the
 * same bytes; `tapedeck_blob_refs` (written with each tape's exchanges) says who holds what.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type pg from 'pg';
import { TapedeckError } from '../../../errors.js';
import { blobMismatch, storedBody } from '../../exchange-encoder.js';
import { verifiedBlobStream } from '../../large-body.js';
import type { BlobSink, StoredBody } from '../../store.js';

export const CHUNK_BYTES = 1024 * 1024;

export interface PgBlobs {
  /** Store whole bytes (from the exchange encoder); resolves to the body that refers to them. */
  put(tapeName: string, bytes: Buffer, encoding: StoredBody['encoding']): Promise<StoredBody>;
  sink(tapeName: string): BlobSink;
  read(body: StoredBody): Promise<Buffer>;
  /** That the blob is there at the body's size, from its row alone (TAPE_CORRUPT otherwise): its bytes are not read. */
  check(body: StoredBody): Promise<void>;
  /** The bytes as a stream, one chunk row at a time (bounded memory), checked as they pass. */
  stream(body: StoredBody, where: string): Readable;
  /**
   * Remove blobs among `shas` that no tape refers to any more (unless stored in the last minute: a writer may be
   * about to refer to it), and any orphan older than an hour (stored for an exchange that never reached its tape).
   */
  collect(shas: readonly string[]): Promise<void>;
}

/** What every blob operation works with: the pool, and how a failed call becomes the store's error. */
interface BlobContext {
  pool: pg.Pool;
  onError: (what: string, err: unknown) => TapedeckError;
}

export function createPgBlobs(pool: pg.Pool, onError: (what: string, err: unknown) => TapedeckError): PgBlobs {
  const ctx: BlobContext = { pool, onError };
  return {
    put: (tapeName, bytes, encoding) => putBlob(ctx, tapeName, bytes, encoding),
    sink: (tapeName) => blobSink(ctx, tapeName),
    read: (body) => readBlob(ctx, body),
    check: (body) => checkBlob(ctx, body),
    stream: (body, where) => verifiedBlobStream(() => blobChunks(ctx, body), body, where),
    collect: (shas) => collectBlobs(ctx, shas),
  };
}

/** Move chunks written under `pending` to the blob `sha256`, or drop them when the blob is there already. */
async function settle(pool: pg.Pool, pending: string, sha256: string, bytes: number, chunks: number): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const inserted = await client.query(
      'INSERT INTO tapedeck_blobs (sha256, bytes, chunks) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING RETURNING sha256',
      [sha256, bytes, chunks],
    );
    if (inserted.rowCount === 1) await client.query('UPDATE tapedeck_blob_chunks SET blob = $1 WHERE blob = $2', [sha256, pending]);
    else await client.query('DELETE FROM tapedeck_blob_chunks WHERE blob = $1', [pending]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

function writeChunk(pool: pg.Pool, blob: string, n: number, data: Buffer): Promise<unknown> {
  return pool.query('INSERT INTO tapedeck_blob_chunks (blob, n, data) VALUES ($1, $2, $3)', [blob, n, data]);
}

async function putBlob(ctx: BlobContext, tapeName: string, bytes: Buffer, encoding: StoredBody['encoding']): Promise<StoredBody> {
  const { pool } = ctx;
  const body = storedBody(tapeName, bytes, encoding);
  try {
    // Known already: touch it, so a clean-up running now does not take it from under this tape.
    const known = await pool.query('UPDATE tapedeck_blobs SET created_at = now() WHERE sha256 = $1', [body.sha256]);
    if (known.rowCount === 0) {
      const pending = `pending:${randomUUID()}`;
      let n = 0;
      for (let off = 0; off < bytes.byteLength; off += CHUNK_BYTES)
        await writeChunk(pool, pending, n++, bytes.subarray(off, off + CHUNK_BYTES));
      await settle(pool, pending, body.sha256, bytes.byteLength, n);
    }
  } catch (err) {
    throw new TapedeckError('TAPE_WRITE_FAILED', `cannot store a large body (${bytes.byteLength} bytes)`, {
      cause: ctx.onError('store a large body', err),
    });
  }
  return body;
}

/** A body streaming in: written a chunk at a time under a pending name, hashed on the way, settled at the end. */
function blobSink({ pool, onError }: BlobContext, tapeName: string): BlobSink {
  const pending = `pending:${randomUUID()}`;
  const hash = createHash('sha256');
  let buffered: Buffer[] = [];
  let size = 0;
  let bytes = 0;
  let n = 0;
  let writes: Promise<unknown> = Promise.resolve();
  let failed: unknown;
  const flushChunk = (): void => {
    if (size === 0) return;
    const data = Buffer.concat(buffered, size);
    buffered = [];
    size = 0;
    const at = n++;
    writes = writes.then(() => writeChunk(pool, pending, at, data)).catch((err: unknown) => void (failed ??= err));
  };
  return {
    write(chunk) {
      hash.update(chunk);
      bytes += chunk.byteLength;
      buffered.push(Buffer.from(chunk));
      size += chunk.byteLength;
      if (size >= CHUNK_BYTES) flushChunk();
    },
    async end(encoding) {
      flushChunk();
      await writes;
      if (failed !== undefined)
        throw new TapedeckError('TAPE_WRITE_FAILED', 'cannot store a large body', { cause: onError('store a large body', failed) });
      const sha256 = hash.digest('hex');
      await settle(pool, pending, sha256, bytes, n);
      return { ...storedBody(tapeName, new Uint8Array(0), encoding, sha256), bytes };
    },
    abort() {
      buffered = [];
      void writes.then(() => pool.query('DELETE FROM tapedeck_blob_chunks WHERE blob = $1', [pending])).catch(() => undefined);
    },
  };
}

async function readBlob({ pool, onError }: BlobContext, body: StoredBody): Promise<Buffer> {
  let rows: { data: Buffer }[];
  try {
    rows = (await pool.query<{ data: Buffer }>('SELECT data FROM tapedeck_blob_chunks WHERE blob = $1 ORDER BY n', [body.sha256])).rows;
  } catch (err) {
    throw onError('read a large body', err);
  }
  if (rows.length === 0) throw new TapedeckError('TAPE_CORRUPT', `no stored body ${body.sha256.slice(0, 12)}... in the store`);
  const bytes = Buffer.concat(rows.map((r) => r.data));
  const mismatch = blobMismatch(body, bytes);
  if (mismatch !== undefined)
    throw new TapedeckError('TAPE_CORRUPT', `stored body ${body.sha256.slice(0, 12)}... in the store is damaged: ${mismatch}`);
  return bytes;
}

async function checkBlob({ pool, onError }: BlobContext, body: StoredBody): Promise<void> {
  let bytes: number | undefined;
  try {
    const row = await pool.query<{ bytes: string }>('SELECT bytes FROM tapedeck_blobs WHERE sha256 = $1', [body.sha256]);
    bytes = row.rows[0] === undefined ? undefined : Number(row.rows[0].bytes);
  } catch (err) {
    throw onError('read a large body', err);
  }
  if (bytes === undefined) throw new TapedeckError('TAPE_CORRUPT', `no stored body ${body.sha256.slice(0, 12)}... in the store`);
  if (bytes !== body.bytes)
    throw new TapedeckError('TAPE_CORRUPT', `stored body ${body.sha256.slice(0, 12)}... is ${bytes} bytes, recorded ${body.bytes}`);
}

/** The blob's chunks, one row at a time (bounded memory); its chunk count read first. */
async function blobChunks({ pool, onError }: BlobContext, body: StoredBody): Promise<AsyncIterable<Buffer>> {
  let count: number;
  try {
    const row = await pool.query<{ chunks: number }>('SELECT chunks FROM tapedeck_blobs WHERE sha256 = $1', [body.sha256]);
    count = row.rows[0]?.chunks ?? 0;
  } catch (err) {
    throw onError('read a large body', err);
  }
  if (count === 0) throw new TapedeckError('TAPE_CORRUPT', `no stored body ${body.sha256.slice(0, 12)}... in the store`);
  return (async function* () {
    for (let n = 0; n < count; n++) {
      let rows: { data: Buffer }[];
      try {
        rows = (await pool.query<{ data: Buffer }>('SELECT data FROM tapedeck_blob_chunks WHERE blob = $1 AND n = $2', [body.sha256, n]))
          .rows;
      } catch (err) {
        throw onError('read a large body', err);
      }
      const data = rows[0]?.data;
      if (data === undefined) throw new TapedeckError('TAPE_CORRUPT', `stored body ${body.sha256.slice(0, 12)}... lacks part ${n}`);
      yield data;
    }
  })();
}

async function collectBlobs({ pool }: BlobContext, shas: readonly string[]): Promise<void> {
  const gone = await pool.query<{ sha256: string }>(
    `DELETE FROM tapedeck_blobs b
      WHERE ((b.sha256 = ANY($1::text[]) AND b.created_at < now() - interval '1 minute') OR b.created_at < now() - interval '1 hour')
        AND NOT EXISTS (SELECT 1 FROM tapedeck_blob_refs r WHERE r.sha256 = b.sha256)
      RETURNING sha256`,
    [shas],
  );
  if (gone.rows.length > 0)
    await pool.query('DELETE FROM tapedeck_blob_chunks WHERE blob = ANY($1::text[])', [gone.rows.map((r) => r.sha256)]);
}
