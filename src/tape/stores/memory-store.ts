/**
 * The in-memory store: tapes kept as the same JSON records a folder store writes, for fast tests and for library
 * users who want a tape without a disk. Nothing survives the process. One writer per tape within the process.
 */
import { createHash } from 'node:crypto';
import { TapedeckError } from '../../errors.js';
import { blobMismatch, newTapeHeader, storedBody } from '../exchange-encoder.js';
import { verifiedBlobStream } from '../large-body.js';
import { listByScanning } from './listing.js';
import { validateTapeName } from '../paths.js';
import { replaysByHeaders, resolveRef, scanningResolveSource, tapeNotFound } from './resolve.js';
import type { TapeHeader } from '../schema.js';
import { highestMarker } from '../redaction/secrets.js';
import { statsOf } from '../stats.js';
import type { BlobSink, TapeStore } from '../store.js';
import { createTapeWriterCore, type WriterSink } from './writer-core.js';
import { parseTapeRecords, resolveStoredBodies } from '../tape-reader.js';

interface MemoryTape {
  header: TapeHeader;
  /** The header's JSON, then one JSON record per exchange. */
  records: string[];
  modifiedAt: Date;
  version: number;
  writing: boolean;
}

export const MEMORY_LOCATION = 'memory';

export function createMemoryStore(): TapeStore {
  const tapes = new Map<string, MemoryTape>();
  const blobs = new Map<string, Buffer>();
  const watchers = new Map<string, Set<() => void>>();
  /** One counter for the store: a tape deleted and written again never repeats a version. */
  let versions = 0;
  const changed = (name: string): void => {
    for (const fn of watchers.get(name) ?? []) queueMicrotask(fn);
  };
  const get = (name: string): MemoryTape => {
    const t = tapes.get(validateTapeName(name));
    if (t === undefined) throw tapeNotFound(name, MEMORY_LOCATION, [...tapes.keys()].sort());
    return t;
  };
  const where = (name: string): string => `${MEMORY_LOCATION}#${name}`;

  const store: TapeStore = {
    kind: 'memory',
    location: MEMORY_LOCATION,
    where,
    async openWriter(opts) {
      const name = validateTapeName(opts.name);
      const ifExists = opts.ifExists ?? 'fail';
      const existing = tapes.get(name);
      if (existing?.writing === true)
        throw new TapedeckError('TAPE_LOCKED', `tape "${name}" is locked by this process: another writer is writing it`, {
          status: 409,
          details: { pid: process.pid },
        });
      if (existing !== undefined && ifExists === 'fail')
        throw new TapedeckError('TAPE_EXISTS', `tape "${name}" already exists in ${MEMORY_LOCATION}`, { details: { tape: name } });
      const append = existing !== undefined && ifExists === 'append';
      let tape: MemoryTape;
      let seq = 0;
      let firstMarker = 1;
      if (append) {
        tape = existing;
        const parsed = parseTapeRecords(
          where(name),
          tape.records.map((text, i) => ({ line: i + 1, text })),
        );
        seq = parsed.exchanges.reduce((max, ex) => Math.max(max, ex.seq + 1), 0);
        firstMarker = highestMarker(tape.records.join('\n')) + 1;
      } else {
        const header = newTapeHeader(name, opts.header, opts.redact);
        tape = { header, records: [JSON.stringify(header)], modifiedAt: new Date(), version: ++versions, writing: true };
        tapes.set(name, tape);
      }
      tape.writing = true;
      // The records of one commit appended in one go: the memory store's sink for the writer core.
      const sink: WriterSink = {
        path: where(name),
        putBlob: async (bytes, encoding) => {
          const body = storedBody(name, bytes, encoding);
          blobs.set(body.sha256, Buffer.from(bytes));
          return body;
        },
        async persist(records) {
          for (const r of records) tape.records.push(r.line);
          tape.modifiedAt = new Date();
          tape.version = ++versions;
          changed(name);
        },
        // A session makes the tape format 2, a stream stored apart format 3 (see schema.ts).
        markFormat(format) {
          tape.records[0] = JSON.stringify({ ...tape.header, format });
        },
        failure: (err) => (err instanceof TapedeckError ? err : new TapedeckError('TAPE_WRITE_FAILED', String(err), { cause: err })),
        async release({ discard }) {
          tape.writing = false;
          if (discard) {
            tapes.delete(name);
            changed(name);
          }
        },
      };
      const count = tape.records.slice(1).filter((r) => r.startsWith(`{"type":"exchange"`)).length;
      const { writer } = createTapeWriterCore(opts, { header: tape.header, seq, pos: 0, count, firstMarker, append }, sink);
      return writer;
    },
    async importTape(tape, importOpts) {
      const name = validateTapeName(tape.name);
      const existing = tapes.get(name);
      if (existing?.writing === true)
        throw new TapedeckError('TAPE_LOCKED', `tape "${name}" is locked by this process: another writer is writing it`, { status: 409 });
      if (existing !== undefined && importOpts?.overwrite !== true)
        throw new TapedeckError('TAPE_EXISTS', `tape "${name}" already exists in ${MEMORY_LOCATION}`, { details: { tape: name } });
      const records = [tape.headerLine];
      let count = 0;
      for await (const { ex, line, stored } of tape.records) {
        for (const body of stored) blobs.set(body.sha256, await tape.readBlob(body));
        records.push(line);
        if (ex !== undefined) count++;
      }
      tapes.set(name, { header: tape.header, records, modifiedAt: new Date(), version: ++versions, writing: false });
      changed(name);
      return count;
    },
    async writing(name) {
      return tapes.get(validateTapeName(name))?.writing === true ? 'this process' : undefined;
    },
    async has(name) {
      return tapes.has(validateTapeName(name));
    },
    async header(name) {
      return get(name).header;
    },
    async load(name, readOpts) {
      const t = get(name);
      const parsed = parseTapeRecords(
        where(name),
        t.records.map((text, i) => ({ line: i + 1, text })),
      );
      const exchanges =
        readOpts?.resolveFiles === false
          ? parsed.exchanges
          : await resolveStoredBodies(parsed.exchanges, parsed.problems, (b) => store.readBlob(name, b), {
              above: readOpts?.inlineUpTo,
              open: (b) => store.openBlob(name, b),
            });
      return { path: where(name), name: validateTapeName(name), header: parsed.header, exchanges, problems: parsed.problems };
    },
    async *lines(name) {
      const t = get(name);
      for (let i = 0; i < t.records.length; i++) yield { line: i + 1, text: t.records[i] as string };
    },
    async names() {
      return [...tapes.keys()].sort();
    },
    async list(query = {}) {
      return listByScanning(await store.names(), query, async (name) => {
        const t = tapes.get(name);
        if (t === undefined) return undefined;
        const parsed = parseTapeRecords(
          where(name),
          t.records.map((text, i) => ({ line: i + 1, text })),
        );
        return {
          ok: true,
          name,
          header: t.header,
          stats: statsOf(parsed.exchanges),
          problems: parsed.problems,
          modifiedAt: t.modifiedAt.toISOString(),
        };
      });
    },
    resolve(ref, opts) {
      return resolveRef(scanningResolveSource(store), ref, opts);
    },
    async replaysOf(name) {
      return replaysByHeaders(store, await store.names(), name);
    },
    async remove(name) {
      const t = get(name);
      if (t.writing)
        throw new TapedeckError('TAPE_LOCKED', `cannot delete tape "${name}": it is being written by this process`, {
          status: 409,
          details: { pid: process.pid },
        });
      tapes.delete(validateTapeName(name));
      changed(name);
      return { name, path: where(name), sideFiles: false };
    },
    async readBlob(name, body) {
      const bytes = blobs.get(body.sha256);
      if (bytes === undefined) throw new TapedeckError('TAPE_CORRUPT', `no stored body ${body.sha256.slice(0, 12)}... for tape "${name}"`);
      const mismatch = blobMismatch(body, bytes);
      if (mismatch !== undefined) throw new TapedeckError('TAPE_CORRUPT', mismatch);
      return bytes;
    },
    openBlob(name, body) {
      return verifiedBlobStream(
        async () => {
          const bytes = blobs.get(body.sha256);
          if (bytes === undefined)
            throw new TapedeckError('TAPE_CORRUPT', `no stored body ${body.sha256.slice(0, 12)}... for tape "${name}"`);
          // In slices, as a file would come: a consumer sees the same stream from every store.
          const slices: Buffer[] = [];
          for (let off = 0; off < bytes.byteLength; off += 64 * 1024) slices.push(bytes.subarray(off, off + 64 * 1024));
          return slices;
        },
        body,
        where(name),
      );
    },
    blobSink(name): BlobSink {
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
          blobs.set(body.sha256, bytes);
          return body;
        },
        abort() {
          chunks.length = 0;
        },
      };
    },
    watch(name, onChange) {
      const set = watchers.get(name) ?? new Set();
      watchers.set(name, set);
      set.add(onChange);
      queueMicrotask(onChange);
      return () => {
        set.delete(onChange);
        if (set.size === 0) watchers.delete(name);
      };
    },
    async version(name) {
      const t = tapes.get(validateTapeName(name));
      return t === undefined ? undefined : String(t.version);
    },
    async close() {
      watchers.clear();
    },
  };
  return store;
}
