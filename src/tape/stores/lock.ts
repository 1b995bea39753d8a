import { closeSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { z } from 'zod';
import { TapedeckError } from '../../errors.js';

/**
 * One writer per tape: an exclusive lock file `<tape>.jsonl.lock` created with O_EXCL, holding the writer's pid.
 * A second writer (another recorder, an `--append`, an `--overwrite`, a replay saving to the same name) is refused
 * with the holder's pid. A lock whose holder is gone (same host, pid not running) is stale and taken over.
 *
 * Why not proper-lockfile: its staleness is time-based (a holder must touch the lock every few seconds, and a
 * crashed holder blocks the tape until the timeout), and it does not say who holds the lock; a pid answers both.
 */
export interface TapeLock {
  readonly file: string;
  /** Remove the lock (only if it is still ours). Idempotent. */
  release(): void;
}

const LockInfoSchema = z.object({ pid: z.number().int().positive(), host: z.string(), since: z.string() });
type LockInfo = z.infer<typeof LockInfoSchema>;

export function lockFileOf(tapePath: string): string {
  return `${tapePath}.lock`;
}

/** Take the tape's lock or throw TAPE_LOCKED naming the holder. */
export function acquireTapeLock(tapePath: string, tapeName: string): TapeLock {
  const file = lockFileOf(tapePath);
  const mine: LockInfo = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = readLock(file);
      if (holder !== undefined && isAlive(holder)) throw lockedError(tapeName, file, holder);
      takeOverStale(file, holder);
      continue;
    }
    try {
      writeSync(fd, JSON.stringify(mine) + '\n');
    } finally {
      closeSync(fd);
    }
    let released = false;
    return {
      file,
      release() {
        if (released) return;
        released = true;
        const now = readLock(file);
        if (now?.pid === mine.pid && now.since === mine.since) unlinkQuietly(file);
      },
    };
  }
  const holder = readLock(file);
  throw lockedError(tapeName, file, holder ?? { pid: 0, host: '?', since: '?' });
}

/**
 * Who is writing the tape now: the lock's holder when it is alive (or on another host, which cannot be checked),
 * undefined when there is no lock or only a stale one.
 */
export function lockHolder(tapePath: string): { pid: number; host: string; since: string } | undefined {
  const holder = readLock(lockFileOf(tapePath));
  return holder !== undefined && isAlive(holder) ? holder : undefined;
}

/** TAPE_LOCKED for an operation refused because the tape is being written (`what`: "delete", ...). */
export function refuseLocked(tapeName: string, tapePath: string, what: string): void {
  const holder = lockHolder(tapePath);
  if (holder === undefined) return;
  throw new TapedeckError(
    'TAPE_LOCKED',
    `cannot ${what} tape "${tapeName}": it is being written by ${holderName(holder)} (since ${holder.since}). ` +
      `Stop that tapedeck first; if none is running, delete ${lockFileOf(tapePath)}`,
    { status: 409, details: { pid: holder.pid, host: holder.host, lock: lockFileOf(tapePath) } },
  );
}

/** Who holds the tape's lock, as messages name it (`pid 4242 (since ...)`), undefined when nobody live does. */
export function describeLockHolder(tapePath: string): string | undefined {
  const holder = lockHolder(tapePath);
  return holder === undefined ? undefined : `${holderName(holder)} (since ${holder.since})`;
}

function holderName(holder: LockInfo): string {
  return holder.pid > 0 ? `pid ${holder.pid}${holder.host !== hostname() ? ` on ${holder.host}` : ''}` : 'another process';
}

function lockedError(tapeName: string, file: string, holder: LockInfo): TapedeckError {
  return new TapedeckError(
    'TAPE_LOCKED',
    `tape "${tapeName}" is locked by ${holderName(holder)} (since ${holder.since}): another tapedeck is writing it. ` +
      `Stop that one first, or write another tape; if no tapedeck is running, delete ${file}`,
    { status: 409, details: { pid: holder.pid, host: holder.host, lock: file } },
  );
}

function readLock(file: string): LockInfo | undefined {
  try {
    const parsed = LockInfoSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** A holder on another host cannot be checked: treated as alive. */
function isAlive(holder: LockInfo): boolean {
  if (holder.host !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Move the stale lock aside (rename is atomic: of two processes taking over at once, one moves it), check that
 * what was moved is the stale lock we read, and delete it. An unreadable lock (a holder that died between creating
 * and writing it) counts as stale.
 */
function takeOverStale(file: string, stale: LockInfo | undefined): void {
  const aside = `${file}.stale-${process.pid}`;
  try {
    renameSync(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const moved = readLock(aside);
  if (stale !== undefined && moved !== undefined && (moved.pid !== stale.pid || moved.since !== stale.since)) {
    // We moved a fresh lock another process had just taken: put it back.
    try {
      renameSync(aside, file);
    } catch {
      unlinkQuietly(aside);
    }
    return;
  }
  unlinkQuietly(aside);
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}
