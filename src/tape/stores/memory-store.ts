/**
 * The in-memory store: tapes kept as the same JSON records a folder store writes, for fast tests and for library
 * users who want a tape without a disk. Nothing survives the process. One writer per tape within the process.
 * What a store holds is in `memory-tapes.ts`; writing and importing in `memory-writer.ts`.
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { TapedeckError } from '../../errors.js';
import { blobMismatch, storedBody } from '../exchange-encoder.js';
import { verifiedBlobStream } from '../large-body.js';
import { listByScanning } from './listing.js';
import { validateTapeName } from '../paths.js';
import { replaysByHeaders, resolveRef, scanningResolveSource } from './resolve.js';
import { statsOf } from '../stats.js';
import type { BlobSink, LoadedTape, ReadTapeOptions, RemovedTape, StoredBody, TapeListEntry, TapeStore } from '../store.js';
import { parseTapeRecords } from '../tape-reader.js';
import { resolveStoredBodies } from '../stored-bodies.js';
import { changed, getTape, memoryContext, memoryWhere, numbered, MEMORY_LOCATION, type MemoryContext } from './memory-tapes.js';
import { importIntoMemory, openMemoryWriter } from './memory-writer.js';

export { MEMORY_LOCATION } from './memory-tapes.js';

export function createMemoryStore(): TapeStore {
  const ctx = memoryContext();
  const store: TapeStore = {
    kind: 'memory',
    location: MEMORY_LOCATION,
    where: memoryWhere,
    openWriter: (opts) => openMemoryWriter(ctx, opts),
    importTape: (tape, importOpts) => importIntoMemory(ctx, tape, importOpts),
    async writing(name) {
      return ctx.tapes.get(validateTapeName(name))?.writing === true ? 'this process' : undefined;
    },
    async has(name) {
      return ctx.tapes.has(validateTapeName(name));
    },
    async header(name) {
      return getTape(ctx, name).header;
    },
    load: (name, readOpts) => loadTape(ctx, store, name, readOpts),
    async *lines(name) {
      const t = getTape(ctx, name);
      for (let i = 0; i < t.records.length; i++) yield { line: i + 1, text: t.records[i] as string };
    },
    async names() {
      return [...ctx.tapes.keys()].sort();
    },
    async list(query = {}) {
      return listByScanning(await store.names(), query, async (name) => listEntry(ctx, name));
    },
    resolve(ref, opts) {
      return resolveRef(scanningResolveSource(store), ref, opts);
    },
    async replaysOf(name) {
      return replaysByHeaders(store, await store.names(), name);
    },
    remove: async (name) => removeTape(ctx, name),
    readBlob: async (name, body) => readBlob(ctx, name, body),
    openBlob: (name, body) => openBlob(ctx, name, body),
    blobSink: (name) => blobSink(ctx, name),
    watch: (name, onChange) => watchTape(ctx, name, onChange),
    async version(name) {
      const t = ctx.tapes.get(validateTapeName(name));
      return t === undefined ? undefined : String(t.version);
    },
    async close() {
      ctx.watchers.clear();
    },
  };
  return store;
}

async function loadTape(ctx: MemoryContext, store: TapeStore, name: string, readOpts: ReadTapeOptions | undefined): Promise<LoadedTape> {
  const parsed = parseTapeRecords(memoryWhere(name), numbered(getTape(ctx, name)));
  const exchanges =
    readOpts?.resolveFiles === false
      ? parsed.exchanges
      : await resolveStoredBodies(
          parsed.exchanges,
          parsed.problems,
          { read: (b) => store.readBlob(name, b), open: (b) => store.openBlob(name, b), check: async (b) => checkBlob(ctx, name, b) },
          readOpts,
        );
  return { path: memoryWhere(name), name: validateTapeName(name), header: parsed.header, exchanges, problems: parsed.problems };
}

function listEntry(ctx: MemoryContext, name: string): TapeListEntry | undefined {
  const t = ctx.tapes.get(name);
  if (t === undefined) return undefined;
  const parsed = parseTapeRecords(memoryWhere(name), numbered(t));
  return {
    ok: true,
    name,
    header: t.header,
    stats: statsOf(parsed.exchanges),
    problems: parsed.problems,
    modifiedAt: t.modifiedAt.toISOString(),
  };
}

function removeTape(ctx: MemoryContext, name: string): RemovedTape {
  const t = getTape(ctx, name);
  if (t.writing)
    throw new TapedeckError('TAPE_LOCKED', `cannot delete tape "${name}": it is being written by this process`, {
      status: 409,
      details: { pid: process.pid },
    });
  ctx.tapes.delete(validateTapeName(name));
  changed(ctx, name);
  return { name, path: memoryWhere(name), sideFiles: false };
}

function readBlob(ctx: MemoryContext, name: string, body: StoredBody): Buffer {
  const bytes = ctx.blobs.get(body.sha256);
  if (bytes === undefined) throw new TapedeckError('TAPE_CORRUPT', `no stored body ${body.sha256.slice(0, 12)}... for tape "${name}"`);
  const mismatch = blobMismatch(body, bytes);
  if (mismatch !== undefined) throw new TapedeckError('TAPE_CORRUPT', mismatch);
  return bytes;
}

/** That a blob is there at the body's size (its bytes are checked when read). */
function checkBlob(ctx: MemoryContext, name: string, body: StoredBody): void {
  const bytes = ctx.blobs.get(body.sha256);
  if (bytes === undefined) throw new TapedeckError('TAPE_CORRUPT', `no stored body ${body.sha256.slice(0, 12)}... for tape "${name}"`);
  if (bytes.byteLength !== body.bytes)
    throw new TapedeckError(
      'TAPE_CORRUPT',
      `stored body ${body.sha256.slice(0, 12)}... is ${bytes.byteLength} bytes, recorded ${body.bytes}`,
    );
}

function openBlob(ctx: MemoryContext, name: string, body: StoredBody): Readable {
  return verifiedBlobStream(
    async () => {
      const bytes = ctx.blobs.get(body.sha256);
      if (bytes === undefined) throw new TapedeckError('TAPE_CORRUPT', `no stored body ${body.sha256.slice(0, 12)}... for tape "${name}"`);
      // In slices, as a file would come: a consumer sees the same stream from every store.
      const slices: Buffer[] = [];
      for (let off = 0; off < bytes.byteLength; off += 64 * 1024) slices.push(bytes.subarray(off, off + 64 * 1024));
      return slices;
    },
    body,
    memoryWhere(name),
  );
}

function blobSink(ctx: MemoryContext, name: string): BlobSink {
  const chunks: Buffer[] = [];
  const hash = createHash('sha256');
  return {
    write(chunk) {
      hash.update(chunk);
      chunks.push(Buffer.from(chunk));
    },
    async end(encoding) {
      const bytes = Buffer.concat(chunks);
      const body = storedBody(name, bytes, encoding, hash.digest('hex'));
      ctx.blobs.set(body.sha256, bytes);
      return body;
    },
    abort() {
      chunks.length = 0;
    },
  };
}

/** Follow a tape: told once now (on a microtask) and after each change. */
function watchTape(ctx: MemoryContext, name: string, onChange: () => void): () => void {
  const set = ctx.watchers.get(name) ?? new Set();
  ctx.watchers.set(name, set);
  set.add(onChange);
  queueMicrotask(onChange);
  return () => {
    set.delete(onChange);
    if (set.size === 0) ctx.watchers.delete(name);
  };
}
