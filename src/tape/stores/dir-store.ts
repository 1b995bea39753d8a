/**
 * The folder store: a tape is `<dir>/<name>.jsonl` (one header line, one line per exchange), its large bodies in
 * `<name>.files/<sha256>.<ext>` beside it, its writer's lock in `<name>.jsonl.lock`. Byte for byte the format
 * tapedeck has always written; `tape-writer.ts` and `tape-reader.ts` do the file work.
 *
 * tapedeck never acts outside the folder through a symbolic link below it: a tape reached through a linked folder
 * (or a tape file that is itself a link) is neither listed, read, written nor deleted. The folder itself may be a link.
 */
import { randomBytes, createHash } from 'node:crypto';
import { closeSync, lstatSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { TapedeckError } from '../../errors.js';
import { storedBody } from '../exchange-encoder.js';
import { importIntoDir } from './dir-import.js';
import { listByScanning } from './listing.js';
import { acquireTapeLock, describeLockHolder } from './lock.js';
import { sideDir, TAPE_EXT, tapeFile, validateTapeName } from '../paths.js';
import { replaysByHeaders, resolveRef, scanningResolveSource, tapeNotFound } from './resolve.js';
import { statsOf } from '../stats.js';
import type { BlobSink, ResolvedTape, TapeListEntry, TapeStore } from '../store.js';
import { createTapeWriter, type TapeWriterOptions } from './tape-writer.js';
import { linesOf, listTapeNames, readSideFile, readTape, readTapeHeader, streamSideFile } from '../tape-reader.js';

export interface DirStoreOptions {
  /** File-system seam for tests: the writes that put lines on disk. */
  fs?: TapeWriterOptions['fs'];
  /** How often `watch` looks at a tape's file (ms). Default 250. */
  pollMs?: number;
}

export function createDirStore(dir: string, opts: DirStoreOptions = {}): TapeStore {
  const pollMs = opts.pollMs ?? 250;
  /** Listing entries by file fingerprint: a tape read once is read again only when its file changed. */
  const entries = new Map<string, { fp: string; entry: TapeListEntry }>();
  const watchers = new Set<NodeJS.Timeout>();

  /** The tape's file, refused when a link below the folder would lead out of it. */
  const fileOf = (name: string): string => {
    const file = tapeFile(dir, name);
    refuseLinks(dir, validateTapeName(name), file);
    return file;
  };
  const fingerprint = async (name: string): Promise<{ fp: string; mtime: Date } | undefined> => {
    try {
      const s = await stat(fileOf(name));
      return s.isFile() ? { fp: `${s.size}:${s.mtimeMs}`, mtime: s.mtime } : undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  };
  const notFound = async (name: string): Promise<TapedeckError> => tapeNotFound(name, dir, await listTapeNames(dir));

  const store: TapeStore = {
    kind: 'dir',
    location: dir,
    where: (name) => tapeFile(dir, name),
    async openWriter(w) {
      fileOf(w.name);
      return createTapeWriter({ ...w, dir, ...(opts.fs ? { fs: opts.fs } : {}) });
    },
    async importTape(tape, importOpts) {
      fileOf(tape.name);
      const count = await importIntoDir(dir, tape, importOpts);
      entries.delete(tape.name);
      return count;
    },
    async has(name) {
      return (await fingerprint(name)) !== undefined;
    },
    async writing(name) {
      return describeLockHolder(fileOf(name));
    },
    async header(name) {
      if (!(await store.has(name))) throw await notFound(name);
      return readTapeHeader(fileOf(name));
    },
    async load(name, readOpts) {
      if (!(await store.has(name))) throw await notFound(name);
      const tape = await readTape(fileOf(name), readOpts);
      return { ...tape, name };
    },
    async *lines(name) {
      if (!(await store.has(name))) throw await notFound(name);
      yield* linesOf(await readFile(fileOf(name), 'utf8'));
    },
    names: () => listTapeNames(dir),
    async list(query = {}) {
      return listByScanning(await listTapeNames(dir), query, async (name) => {
        const found = await fingerprint(name);
        if (found === undefined) return undefined; // removed while listing
        const cached = entries.get(name);
        if (cached?.fp === found.fp) return cached.entry;
        const modifiedAt = found.mtime.toISOString();
        let entry: TapeListEntry;
        try {
          const tape = await readTape(fileOf(name), { resolveFiles: false });
          entry = { ok: true, name, header: tape.header, stats: statsOf(tape.exchanges), problems: tape.problems, modifiedAt };
        } catch (err) {
          entry = { ok: false, name, error: (err as Error).message, modifiedAt };
        }
        entries.set(name, { fp: found.fp, entry });
        return entry;
      });
    },
    async resolve(ref, resolveOpts) {
      // A path to a tape file anywhere: that file, in a folder store of its own folder.
      if (ref.endsWith(TAPE_EXT)) {
        const file = path.resolve(ref);
        if (await isFile(file)) {
          const here = path.relative(path.resolve(dir), file);
          const inside = here !== '' && !here.startsWith('..') && !path.isAbsolute(here);
          const of: TapeStore = inside ? store : createDirStore(path.dirname(file), opts);
          return {
            store: of,
            name: inside ? here.slice(0, -TAPE_EXT.length).split(path.sep).join('/') : path.basename(file, TAPE_EXT),
            by: 'path',
          } satisfies ResolvedTape;
        }
      }
      return resolveRef(scanningResolveSource(store), ref, resolveOpts);
    },
    async replaysOf(name) {
      return replaysByHeaders(store, await listTapeNames(dir), name);
    },
    async remove(name) {
      const file = fileOf(name);
      if (!(await store.has(name))) throw await notFound(name);
      // Hold the tape's lock while deleting: a tape being recorded is refused (naming its writer), and no writer can
      // start on it half-way. A stale lock (its holder gone) is taken over, as a writer would.
      let lock;
      try {
        lock = acquireTapeLock(file, name);
      } catch (err) {
        if (err instanceof TapedeckError && err.code === 'TAPE_LOCKED') {
          const holder = err.details as { pid: number; host: string; lock: string };
          throw new TapedeckError(
            'TAPE_LOCKED',
            `cannot delete tape "${name}": it is being written by pid ${holder.pid} on ${holder.host}. ` +
              `Stop that tapedeck first; if none is running, delete ${holder.lock}`,
            { status: 409, details: err.details },
          );
        }
        throw err;
      }
      try {
        const side = sideDir(file);
        const sideFiles = await stat(side).then(
          (s) => s.isDirectory(),
          () => false,
        );
        await rm(file, { force: true });
        if (sideFiles) await rm(side, { recursive: true, force: true });
        entries.delete(name);
        return { name, path: file, sideFiles };
      } finally {
        lock.release();
      }
    },
    readBlob(name, body) {
      return readSideFile(fileOf(name), body);
    },
    openBlob(name, body) {
      return streamSideFile(fileOf(name), body);
    },
    blobSink(name) {
      return dirBlobSink(sideDir(fileOf(name)), name);
    },
    watch(name, onChange) {
      let last: string | undefined;
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      const poll = async (): Promise<void> => {
        try {
          const fp = (await fingerprint(name))?.fp;
          if (fp !== last) {
            last = fp;
            if (!stopped) onChange();
          }
        } catch {
          // an unreadable folder: try again next time
        }
        if (stopped) return;
        timer = setTimeout(() => void poll(), pollMs);
        timer.unref();
        watchers.add(timer);
      };
      void poll();
      return () => {
        stopped = true;
        if (timer !== undefined) {
          clearTimeout(timer);
          watchers.delete(timer);
        }
      };
    },
    async version(name) {
      return (await fingerprint(name))?.fp;
    },
    async close() {
      for (const t of watchers) clearTimeout(t);
      watchers.clear();
    },
  };
  return store;
}

/**
 * Refuse a tape path that goes through a symbolic link below the store's folder (a linked sub-folder, or a tape
 * file that is a link): acting on it would act outside the folder.
 */
function refuseLinks(dir: string, name: string, file: string): void {
  const parts = name.split('/');
  let cur = dir;
  for (let i = 0; i < parts.length; i++) {
    cur = i === parts.length - 1 ? file : path.join(cur, parts[i] as string);
    let isLink: boolean;
    try {
      isLink = lstatSync(cur).isSymbolicLink();
    } catch {
      return; // nothing further exists
    }
    if (isLink)
      throw new TapedeckError(
        'BAD_ARGS',
        `tape "${name}" is reached through a symbolic link (${path.relative(dir, cur)}): tapedeck never acts outside its tape folder ${dir}`,
        { status: 400 },
      );
  }
}

/** A large body written to a temporary file in the side folder as it streams, hashed on the way, named by its hash at the end. */
function dirBlobSink(side: string, name: string): BlobSink {
  mkdirSync(side, { recursive: true });
  const tmp = path.join(side, `.incoming-${randomBytes(6).toString('hex')}`);
  const fd = openSync(tmp, 'w');
  const hash = createHash('sha256');
  let bytes = 0;
  let open = true;
  const finish = (): void => {
    if (!open) return;
    open = false;
    closeSync(fd);
  };
  return {
    write(chunk) {
      if (!open) throw new TapedeckError('TAPE_CLOSED', `large body of tape "${name}" is already ended`);
      hash.update(chunk);
      let off = 0;
      while (off < chunk.byteLength) off += writeSync(fd, chunk, off, chunk.byteLength - off);
      bytes += chunk.byteLength;
    },
    async end(encoding) {
      finish();
      const sha256 = hash.digest('hex');
      const body = { ...storedBody(name, new Uint8Array(0), encoding, sha256), bytes };
      renameSync(tmp, path.join(side, path.basename(body.file)));
      return body;
    },
    abort() {
      finish();
      try {
        unlinkSync(tmp);
      } catch {
        // already gone
      }
    },
  };
}

async function isFile(file: string): Promise<boolean> {
  return stat(file).then(
    (s) => s.isFile(),
    () => false,
  );
}
