/**
 * The folder store: a tape is `<dir>/<name>.jsonl` (one header line, one line per exchange), its large bodies in
 * `<name>.files/<sha256>.<ext>` beside it, its writer's lock in `<name>.jsonl.lock`. Byte for byte the format
 * tapedeck has always written; `tape-writer.ts` and `tape-reader.ts` do the file work, `dir-blob-sink.ts` writes
 * large bodies as they stream.
 *
 * tapedeck never acts outside the folder through a symbolic link below it: a tape reached through a linked folder
 * (or a tape file that is itself a link) is neither listed, read, written nor deleted. The folder itself may be a link.
 */
import { lstatSync } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { TapedeckError } from '../../errors.js';
import { dirBlobSink } from './dir-blob-sink.js';
import { importIntoDir } from './dir-import.js';
import { listByScanning } from './listing.js';
import { acquireTapeLock, describeLockHolder } from './lock.js';
import { sideDir, TAPE_EXT, tapeFile, validateTapeName } from '../paths.js';
import { replaysByHeaders, resolveRef, scanningResolveSource, tapeNotFound } from './resolve.js';
import { statsOf } from '../stats.js';
import type { RemovedTape, ResolveOptions, ResolvedTape, TapeListEntry, TapeStore } from '../store.js';
import { createTapeWriter, type TapeWriterOptions } from './tape-writer.js';
import { linesOf, listTapeNames, readSideFile, readTape, readTapeHeader, streamSideFile } from '../tape-reader.js';

export interface DirStoreOptions {
  /** File-system seam for tests: the writes that put lines on disk. */
  fs?: TapeWriterOptions['fs'];
  /** How often `watch` looks at a tape's file (ms). Default 250. */
  pollMs?: number;
}

/** What the folder store's operations share: its folder, its options and the state one store keeps. */
interface DirContext {
  dir: string;
  opts: DirStoreOptions;
  pollMs: number;
  /** Listing entries by file fingerprint: a tape read once is read again only when its file changed. */
  entries: Map<string, { fp: string; entry: TapeListEntry }>;
  /** The pending polls of `watch`, cleared on close. */
  watchers: Set<NodeJS.Timeout>;
}

export function createDirStore(dir: string, opts: DirStoreOptions = {}): TapeStore {
  const ctx: DirContext = { dir, opts, pollMs: opts.pollMs ?? 250, entries: new Map(), watchers: new Set() };
  const store: TapeStore = {
    kind: 'dir',
    location: dir,
    where: (name) => tapeFile(dir, name),
    async openWriter(w) {
      fileOf(ctx, w.name);
      return createTapeWriter({ ...w, dir, ...(opts.fs ? { fs: opts.fs } : {}) });
    },
    async importTape(tape, importOpts) {
      fileOf(ctx, tape.name);
      const count = await importIntoDir(dir, tape, importOpts);
      ctx.entries.delete(tape.name);
      return count;
    },
    has: (name) => hasTape(ctx, name),
    async writing(name) {
      return describeLockHolder(fileOf(ctx, name));
    },
    async header(name) {
      if (!(await hasTape(ctx, name))) throw await notFound(ctx, name);
      return readTapeHeader(fileOf(ctx, name));
    },
    async load(name, readOpts) {
      if (!(await hasTape(ctx, name))) throw await notFound(ctx, name);
      const tape = await readTape(fileOf(ctx, name), readOpts);
      return { ...tape, name };
    },
    async *lines(name) {
      if (!(await hasTape(ctx, name))) throw await notFound(ctx, name);
      yield* linesOf(await readFile(fileOf(ctx, name), 'utf8'));
    },
    names: () => listTapeNames(dir),
    async list(query = {}) {
      return listByScanning(await listTapeNames(dir), query, (name) => listEntry(ctx, name));
    },
    resolve: (ref, resolveOpts) => resolveTape(ctx, store, ref, resolveOpts),
    async replaysOf(name) {
      return replaysByHeaders(store, await listTapeNames(dir), name);
    },
    remove: (name) => removeTape(ctx, name),
    readBlob(name, body) {
      return readSideFile(fileOf(ctx, name), body);
    },
    openBlob(name, body) {
      return streamSideFile(fileOf(ctx, name), body);
    },
    blobSink(name) {
      return dirBlobSink(sideDir(fileOf(ctx, name)), name);
    },
    watch: (name, onChange) => watchTape(ctx, name, onChange),
    async version(name) {
      return (await fingerprint(ctx, name))?.fp;
    },
    async close() {
      for (const t of ctx.watchers) clearTimeout(t);
      ctx.watchers.clear();
    },
  };
  return store;
}

/** The tape's file, refused when a link below the folder would lead out of it. */
function fileOf({ dir }: DirContext, name: string): string {
  const file = tapeFile(dir, name);
  refuseLinks(dir, validateTapeName(name), file);
  return file;
}

async function fingerprint(ctx: DirContext, name: string): Promise<{ fp: string; mtime: Date } | undefined> {
  try {
    const s = await stat(fileOf(ctx, name));
    return s.isFile() ? { fp: `${s.size}:${s.mtimeMs}`, mtime: s.mtime } : undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function hasTape(ctx: DirContext, name: string): Promise<boolean> {
  return (await fingerprint(ctx, name)) !== undefined;
}

async function notFound({ dir }: DirContext, name: string): Promise<TapedeckError> {
  return tapeNotFound(name, dir, await listTapeNames(dir));
}

/** The tape's listing entry: from the cache while its file is unchanged, else read again (an unreadable tape says why). */
async function listEntry(ctx: DirContext, name: string): Promise<TapeListEntry | undefined> {
  const found = await fingerprint(ctx, name);
  if (found === undefined) return undefined; // removed while listing
  const cached = ctx.entries.get(name);
  if (cached?.fp === found.fp) return cached.entry;
  const modifiedAt = found.mtime.toISOString();
  let entry: TapeListEntry;
  try {
    const tape = await readTape(fileOf(ctx, name), { resolveFiles: false });
    entry = { ok: true, name, header: tape.header, stats: statsOf(tape.exchanges), problems: tape.problems, modifiedAt };
  } catch (err) {
    entry = { ok: false, name, error: (err as Error).message, modifiedAt };
  }
  ctx.entries.set(name, { fp: found.fp, entry });
  return entry;
}

async function resolveTape(ctx: DirContext, store: TapeStore, ref: string, resolveOpts: ResolveOptions | undefined): Promise<ResolvedTape> {
  // A path to a tape file anywhere: that file, in a folder store of its own folder.
  if (ref.endsWith(TAPE_EXT)) {
    const file = path.resolve(ref);
    if (await isFile(file)) {
      const here = path.relative(path.resolve(ctx.dir), file);
      const inside = here !== '' && !here.startsWith('..') && !path.isAbsolute(here);
      const of: TapeStore = inside ? store : createDirStore(path.dirname(file), ctx.opts);
      return {
        store: of,
        name: inside ? here.slice(0, -TAPE_EXT.length).split(path.sep).join('/') : path.basename(file, TAPE_EXT),
        by: 'path',
      } satisfies ResolvedTape;
    }
  }
  return resolveRef(scanningResolveSource(store), ref, resolveOpts);
}

async function removeTape(ctx: DirContext, name: string): Promise<RemovedTape> {
  const file = fileOf(ctx, name);
  if (!(await hasTape(ctx, name))) throw await notFound(ctx, name);
  const lock = lockForRemoval(file, name);
  try {
    const side = sideDir(file);
    const sideFiles = await stat(side).then(
      (s) => s.isDirectory(),
      () => false,
    );
    await rm(file, { force: true });
    if (sideFiles) await rm(side, { recursive: true, force: true });
    ctx.entries.delete(name);
    return { name, path: file, sideFiles };
  } finally {
    lock.release();
  }
}

/**
 * Hold the tape's lock while deleting: a tape being recorded is refused (naming its writer), and no writer can
 * start on it half-way. A stale lock (its holder gone) is taken over, as a writer would.
 */
function lockForRemoval(file: string, name: string): ReturnType<typeof acquireTapeLock> {
  try {
    return acquireTapeLock(file, name);
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
}

/** Poll the tape's file fingerprint every `pollMs`; a change (or the first look) calls `onChange`. */
function watchTape(ctx: DirContext, name: string, onChange: () => void): () => void {
  let last: string | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const poll = async (): Promise<void> => {
    try {
      const fp = (await fingerprint(ctx, name))?.fp;
      if (fp !== last) {
        last = fp;
        if (!stopped) onChange();
      }
    } catch {
      // an unreadable folder: try again next time
    }
    if (stopped) return;
    timer = setTimeout(() => void poll(), ctx.pollMs);
    timer.unref();
    ctx.watchers.add(timer);
  };
  void poll();
  return () => {
    stopped = true;
    if (timer !== undefined) {
      clearTimeout(timer);
      ctx.watchers.delete(timer);
    }
  };
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

async function isFile(file: string): Promise<boolean> {
  return stat(file).then(
    (s) => s.isFile(),
    () => false,
  );
}
