/** Tape housekeeping in any store: prune tapes older than an age, or replay tapes; never a tape being written. */
import { TapedeckError } from '../../errors.js';
import type { RemovedTape, TapeStore } from '../store.js';

export type { RemovedTape } from '../store.js';

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30d`, `12h`, `90m`, `45s` to milliseconds; anything else is a BAD_ARGS error that says what is accepted. */
export function parseAge(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([smhd])$/.exec(text.trim());
  if (!m) throw new TapedeckError('BAD_ARGS', `bad duration "${text}": use a number and a unit s, m, h or d (e.g. 30d, 12h)`);
  return Number(m[1]) * (UNITS[m[2] as string] as number);
}

export interface PruneOptions {
  /** Tapes created longer ago than this (ms before `now`); absent: any age. */
  olderThanMs?: number;
  /** Only replay tapes (`mode: replay`). */
  replaysOnly?: boolean;
  dryRun?: boolean;
  now?: Date;
}

export interface PruneResult {
  /** ISO time: tapes created before it were removed (absent without an age). */
  cutoff?: string;
  removed: (RemovedTape & { createdAt: string })[];
  kept: number;
  /** Tapes that were not removed although they qualify: an unreadable header (age unknown), a tape being written. */
  skipped: { name: string; reason: string }[];
}

/** Remove every tape that qualifies (older than the age, a replay tape when asked). `dryRun` removes nothing. */
export async function pruneTapes(store: TapeStore, opts: PruneOptions): Promise<PruneResult> {
  const now = opts.now ?? new Date();
  const cutoff = opts.olderThanMs === undefined ? undefined : now.getTime() - opts.olderThanMs;
  const result: PruneResult = {
    ...(cutoff !== undefined ? { cutoff: new Date(cutoff).toISOString() } : {}),
    removed: [],
    kept: 0,
    skipped: [],
  };
  let after: string | undefined;
  for (;;) {
    const page = await store.list({
      ...(opts.replaysOnly === true ? { mode: 'replay' } : {}),
      limit: 500,
      ...(after !== undefined ? { after } : {}),
    });
    for (const entry of page.tapes) {
      if (!entry.ok) {
        result.skipped.push({ name: entry.name, reason: entry.error });
        continue;
      }
      const createdAt = entry.header.createdAt;
      const t = Date.parse(createdAt);
      if (cutoff !== undefined && Number.isNaN(t)) {
        result.skipped.push({ name: entry.name, reason: `createdAt "${createdAt}" is not a date` });
        continue;
      }
      if (cutoff !== undefined && t >= cutoff) {
        result.kept++;
        continue;
      }
      if (opts.dryRun === true) {
        result.removed.push({ name: entry.name, path: `${store.location}#${entry.name}`, sideFiles: false, createdAt });
        continue;
      }
      try {
        result.removed.push({ ...(await store.remove(entry.name)), createdAt });
      } catch (err) {
        if (!(err instanceof TapedeckError) || (err.code !== 'TAPE_LOCKED' && err.code !== 'TAPE_NOT_FOUND')) throw err;
        result.skipped.push({ name: entry.name, reason: err.message });
      }
    }
    if (page.next === undefined) break;
    after = page.next;
  }
  return result;
}
