/**
 * The viewer's tapes: read once, kept while the file is unchanged (size and mtime), read again when it changed.
 * A tape being recorded grows by whole lines, so "read again" is how the live view follows it; reads of one tape
 * never overlap (a second request waits for the read under way).
 */
import { stat } from 'node:fs/promises';
import { TapedeckError } from '../errors.js';
import { tapeFile, validateTapeName } from '../tape/paths.js';
import type { TapeHeader } from '../tape/schema.js';
import { listTapeNames, readTape, type LoadedTape, type TapeProblem } from '../tape/tape-reader.js';
import { stepsOf, summaryOf, type CostFn, type Step, type TapeSummary } from './model.js';
import { timelineItem, type TimelineItem } from './timeline-items.js';

export interface OpenTape {
  name: string;
  path: string;
  header: TapeHeader;
  tape: LoadedTape;
  problems: TapeProblem[];
  steps: Step[];
  items: TimelineItem[];
  /** Exchange id -> timeline position. */
  byId: Map<string, number>;
  /** End of the last exchange, ms since the tape began. */
  spanMs: number;
  /** Bumped each time the file is read again (the live view compares it). */
  version: number;
  /** How long the last read took (the live poll backs off on slow reads). */
  loadMs: number;
}

/** A row of the tapes list: the summary `tapedeck list` prints, or why the tape could not be read. */
export type TapeListItem =
  (TapeSummary & { ok: true; modifiedAt: string }) | { ok: false; name: string; error: string; modifiedAt: string };

export interface TapeStore {
  readonly dir: string;
  list(): Promise<TapeListItem[]>;
  /** The tape as it is on disk now (read again only when the file changed). */
  open(name: string): Promise<OpenTape>;
  /** The size and mtime of a tape's file, or undefined when it is gone. */
  fingerprint(name: string): Promise<string | undefined>;
}

export interface TapeStoreOptions {
  dir: string;
  costOf: CostFn;
}

export function createTapeStore(opts: TapeStoreOptions): TapeStore {
  const { dir, costOf } = opts;
  const opened = new Map<string, { fp: string; tape: OpenTape }>();
  const loading = new Map<string, Promise<OpenTape>>();
  const summaries = new Map<string, { fp: string; item: TapeListItem }>();
  let versions = 0;

  const fingerprint = async (name: string): Promise<string | undefined> => {
    try {
      const s = await stat(tapeFile(dir, name));
      return `${s.size}:${s.mtimeMs}`;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  };

  const load = async (name: string, fp: string): Promise<OpenTape> => {
    const t0 = performance.now();
    const tape = await readTape(tapeFile(dir, name));
    const steps = stepsOf(tape.exchanges);
    // The time axis starts at the first exchange (steps are in start order).
    const origin = steps[0]?.offsetMs ?? 0;
    const items = steps.map((s) => timelineItem(s, origin));
    const byId = new Map(items.map((it) => [it.id, it.i]));
    const spanMs = items.reduce((m, it) => Math.max(m, it.start + it.dur), 0);
    const open: OpenTape = {
      name,
      path: tape.path,
      header: tape.header,
      tape: { ...tape, name },
      problems: tape.problems,
      steps,
      items,
      byId,
      spanMs,
      version: ++versions,
      loadMs: performance.now() - t0,
    };
    opened.set(name, { fp, tape: open });
    return open;
  };

  return {
    dir,
    fingerprint,
    async open(name) {
      validateTapeName(name);
      const pending = loading.get(name);
      if (pending) return pending;
      const p = (async (): Promise<OpenTape> => {
        const fp = await fingerprint(name);
        if (fp === undefined) {
          opened.delete(name);
          throw new TapedeckError('TAPE_NOT_FOUND', `no tape "${name}" in ${dir}`, { status: 404 });
        }
        const cached = opened.get(name);
        return cached && cached.fp === fp ? cached.tape : load(name, fp);
      })().finally(() => loading.delete(name));
      loading.set(name, p);
      return p;
    },
    async list() {
      const names = await listTapeNames(dir);
      const out: TapeListItem[] = [];
      for (const name of names) {
        let s;
        try {
          s = await stat(tapeFile(dir, name));
        } catch {
          continue; // removed while listing
        }
        const fp = `${s.size}:${s.mtimeMs}`;
        const cached = summaries.get(name);
        if (cached && cached.fp === fp) {
          out.push(cached.item);
          continue;
        }
        const modifiedAt = s.mtime.toISOString();
        let item: TapeListItem;
        try {
          const tape = await readTape(tapeFile(dir, name), { resolveFiles: false });
          item = { ...summaryOf({ ...tape, name }, costOf), ok: true, modifiedAt };
        } catch (err) {
          item = { ok: false, name, error: (err as Error).message, modifiedAt };
        }
        summaries.set(name, { fp, item });
        out.push(item);
      }
      return out;
    },
  };
}
