/**
 * Whether a test's tape is recorded or replayed when it is opened: serve's mode, then the two ways a suite refreshes
 * its tapes. `--rerecord PATTERN` (`TAPEDECK_RERECORD`): the tests it names record their tape afresh, whatever the
 * mode (in replay mode they alone go live). `--max-age AGE` (`TAPEDECK_MAX_AGE`): a tape recorded longer ago (its
 * header's `createdAt`), or one whose `createdAt` is no time it could have been recorded at, is recorded afresh in auto
 * mode, and refused in replay mode with one line that says how old it is (or why its age is unknown) and how to
 * refresh it.
 */
import { TapedeckError } from '../errors.js';
import type { TapeStore } from '../tape/store.js';

export type ServeMode = 'auto' | 'record' | 'replay' | 'refresh';

export interface Freshness {
  /** Tapes recorded afresh in this run, whatever the mode. */
  rerecord?: ((tape: string) => boolean) | undefined;
  /** The oldest a tape may be, and how it was given (`30d`), for messages. */
  maxAge?: { ms: number; text: string } | undefined;
}

/** How a tape is opened: recorded (replacing what it held when `refreshed` says why) or replayed. */
export interface OpeningPlan {
  mode: 'record' | 'replay';
  refreshed?: 'rerecord' | 'max-age';
}

export async function planOpening(tape: string, mode: ServeMode, fresh: Freshness, store: TapeStore): Promise<OpeningPlan> {
  if (mode === 'refresh') return { mode: 'record' };
  if (fresh.rerecord?.(tape) === true) return { mode: 'record', refreshed: 'rerecord' };
  if (mode === 'record') return { mode: 'record' };
  if (!(await store.has(tape))) return { mode: mode === 'auto' ? 'record' : 'replay' };
  if (fresh.maxAge !== undefined) {
    const createdAt = (await store.header(tape)).createdAt;
    const age = ageOf(createdAt);
    // An age that cannot be read is an old age: a tape is never let through as young for want of its date.
    if (age === undefined || age > fresh.maxAge.ms) {
      if (mode === 'auto') return { mode: 'record', refreshed: 'max-age' };
      throw age === undefined ? ageUnknown(tape, createdAt, fresh.maxAge.text) : tooOld(tape, age, createdAt, fresh.maxAge.text);
    }
  }
  return { mode: 'replay' };
}

/** A day: how far ahead of this clock a tape's `createdAt` may be (another machine's clock) and still be an age. */
const CLOCK_SKEW_MS = 86_400_000;

/**
 * How long ago a header's `createdAt` was (ms), or undefined when it says no time a tape was recorded at: not an ISO
 * date (`yesterday-ish`, empty), or later than now (more than a clock's skew).
 */
export function ageOf(createdAt: string): number | undefined {
  if (!/^\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)?)?$/.test(createdAt)) return undefined;
  const at = Date.parse(createdAt);
  if (!Number.isFinite(at)) return undefined;
  const age = Date.now() - at;
  return age < -CLOCK_SKEW_MS ? undefined : Math.max(0, age);
}

function refreshHint(tape: string): string {
  return `re-record it with TAPEDECK_RERECORD='${tape}' (the vitest and pytest helpers) or tapedeck serve --rerecord '${tape}'`;
}

function ageUnknown(tape: string, createdAt: string, maxAge: string): TapedeckError {
  return new TapedeckError(
    'TAPE_TOO_OLD',
    `tape "${tape}" says it was recorded at ${JSON.stringify(createdAt)}, which is no time it could have been: its age is unknown, ` +
      `so --max-age ${maxAge} takes it as too old: ${refreshHint(tape)}`,
    { details: { tape, createdAt, maxAge } },
  );
}

function tooOld(tape: string, ageMs: number, createdAt: string, maxAge: string): TapedeckError {
  return new TapedeckError(
    'TAPE_TOO_OLD',
    `tape "${tape}" is ${describeAge(ageMs)} old (recorded ${createdAt.slice(0, 10)}), older than --max-age ${maxAge}: ${refreshHint(tape)}`,
    { details: { tape, createdAt, maxAge } },
  );
}

/** `45 days`, `5 hours`, `12 minutes`: the largest whole unit. */
export function describeAge(ms: number): string {
  const units: [string, number][] = [
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
  ];
  for (const [name, size] of units) {
    const n = Math.floor(ms / size);
    if (n >= 1) return `${n} ${name}${n === 1 ? '' : 's'}`;
  }
  return `${Math.max(0, Math.floor(ms / 1000))} seconds`;
}
