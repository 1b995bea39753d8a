/** Tape housekeeping: remove a tape (and its `.files/` side folder), prune tapes older than an age. */
import { rm, stat } from 'node:fs/promises';
import { TapedeckError } from '../errors.js';
import { sideDir, tapeFile } from './paths.js';
import { listTapeNames, readTape } from './tape-reader.js';

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30d`, `12h`, `90m`, `45s` to milliseconds; anything else is a BAD_ARGS error that says what is accepted. */
export function parseAge(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([smhd])$/.exec(text.trim());
  if (!m) throw new TapedeckError('BAD_ARGS', `bad duration "${text}": use a number and a unit s, m, h or d (e.g. 30d, 12h)`);
  return Number(m[1]) * (UNITS[m[2] as string] as number);
}

export interface RemovedTape {
  name: string;
  file: string;
  /** True when a `.files/` side folder existed and was removed with it. */
  sideFiles: boolean;
}

/** Delete a tape and its side folder. A missing tape is TAPE_NOT_FOUND. */
export async function removeTape(dir: string, name: string): Promise<RemovedTape> {
  const file = tapeFile(dir, name);
  try {
    await stat(file);
  } catch {
    throw new TapedeckError('TAPE_NOT_FOUND', `no tape "${name}" in ${dir}`, { status: 404 });
  }
  const side = sideDir(file);
  const sideFiles = await stat(side).then(
    (s) => s.isDirectory(),
    () => false,
  );
  await rm(file, { force: true });
  if (sideFiles) await rm(side, { recursive: true, force: true });
  return { name, file, sideFiles };
}

export interface PruneResult {
  cutoff: string;
  removed: (RemovedTape & { createdAt: string })[];
  kept: number;
  /** Tapes whose age could not be told (unreadable header): never removed. */
  skipped: { name: string; reason: string }[];
}

/** Remove every tape whose header `createdAt` is older than `olderThanMs` before `now`. `dryRun` removes nothing. */
export async function pruneTapes(dir: string, olderThanMs: number, opts: { dryRun?: boolean; now?: Date } = {}): Promise<PruneResult> {
  const now = opts.now ?? new Date();
  const cutoff = now.getTime() - olderThanMs;
  const result: PruneResult = { cutoff: new Date(cutoff).toISOString(), removed: [], kept: 0, skipped: [] };
  for (const name of await listTapeNames(dir)) {
    let createdAt: string;
    try {
      createdAt = (await readTape(tapeFile(dir, name), { resolveFiles: false })).header.createdAt;
    } catch (err) {
      result.skipped.push({ name, reason: (err as Error).message });
      continue;
    }
    const t = Date.parse(createdAt);
    if (Number.isNaN(t)) {
      result.skipped.push({ name, reason: `createdAt "${createdAt}" is not a date` });
      continue;
    }
    if (t >= cutoff) {
      result.kept++;
      continue;
    }
    if (opts.dryRun) {
      const file = tapeFile(dir, name);
      const sideFiles = await stat(sideDir(file)).then(
        (s) => s.isDirectory(),
        () => false,
      );
      result.removed.push({ name, file, sideFiles, createdAt });
    } else {
      result.removed.push({ ...(await removeTape(dir, name)), createdAt });
    }
  }
  return result;
}
