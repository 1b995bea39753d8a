/**
 * The viewer's open tapes, over any tape store: a tape is read once and kept while its store says it is unchanged
 * (`version`), read again when it changed. A tape being recorded grows by whole exchanges, so "read again" is how the
 * live view follows it; reads of one tape never overlap (a second request waits for the read under way).
 */
import { TapedeckError } from '../errors.js';
import { validateTapeName } from '../tape/paths.js';
import type { TapeHeader } from '../tape/schema.js';
import type { LoadedTape, TapeProblem, TapeStore } from '../tape/store.js';
import { listingOf, stepsOf, type TapeSummary, type UsageCostFn } from './model.js';
import { timelineItem, type TimelineItem } from './timeline-items.js';
import type { Step } from './model.js';

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
  /** Bumped each time the tape is read again (the live view compares it). */
  version: number;
  /** How long the last read took (the live view backs off on slow reads). */
  loadMs: number;
}

/** A row of the tapes list: the summary `tapedeck list` prints, or why the tape could not be read. */
export type TapeListItem =
  (TapeSummary & { ok: true; modifiedAt: string }) | { ok: false; name: string; error: string; modifiedAt: string };

export interface OpenTapes {
  /** Where the tapes are (a folder, a database URL without its password). */
  readonly location: string;
  readonly store: TapeStore;
  list(): Promise<TapeListItem[]>;
  /** The tape as it is in the store now (read again only when it changed). */
  open(name: string): Promise<OpenTape>;
}

export interface OpenTapesOptions {
  store: TapeStore;
  usageCost: UsageCostFn;
}

export function createOpenTapes(opts: OpenTapesOptions): OpenTapes {
  const { store, usageCost } = opts;
  const opened = new Map<string, { fp: string; tape: OpenTape }>();
  const loading = new Map<string, Promise<OpenTape>>();
  let versions = 0;

  const load = async (name: string, fp: string): Promise<OpenTape> => {
    const t0 = performance.now();
    const tape = await store.load(name);
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
    location: store.location,
    store,
    async open(name) {
      validateTapeName(name);
      const pending = loading.get(name);
      if (pending) return pending;
      const p = (async (): Promise<OpenTape> => {
        const fp = await store.version(name);
        if (fp === undefined) {
          opened.delete(name);
          throw new TapedeckError('TAPE_NOT_FOUND', `no tape "${name}" in ${store.location}`, { status: 404 });
        }
        const cached = opened.get(name);
        return cached && cached.fp === fp ? cached.tape : load(name, fp);
      })().finally(() => loading.delete(name));
      loading.set(name, p);
      return p;
    },
    async list() {
      const out: TapeListItem[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await store.list({ limit: 1000, ...(after !== undefined ? { after } : {}) });
        for (const entry of page.tapes) {
          // One row that cannot be summarised is that row's error, never the whole list's.
          let row: ReturnType<typeof listingOf>;
          try {
            row = listingOf(entry, { usageCost });
          } catch (err) {
            row = { ok: false, name: entry.name, error: `cannot be summarised: ${(err as Error).message}` };
          }
          out.push(
            row.ok
              ? { ...row.summary, ok: true, modifiedAt: row.modifiedAt }
              : { ok: false, name: row.name, error: row.error, modifiedAt: entry.modifiedAt ?? '' },
          );
        }
        if (page.next === undefined) return out;
        after = page.next;
      }
    },
  };
}
