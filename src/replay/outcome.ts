/**
 * How one exchange on a tape was answered, read from the marks the engine puts on its record (`match`, `notes`), and
 * the counts of a run made from them: what the end-of-run lines of `record`, `replay` and `serve` say (answered from
 * the tape, by similarity, mocked, live, missed, blocked, faults injected) and the first miss they name. One place reads
 * the marks, so a new kind of answer is counted by adding it here.
 *
 * The marks: `match.kind` (`exact`, `semantic` (any similarity stage), `mock`, `live`, `miss`, `blocked`, `fault`: an
 * answer a fault rule made up) on replay tapes and on a recording's injected answers; `notes.fault` (the rule, `#1
 * openai call 2 -> 429`) on every exchange a fault rule made or disturbed (a delay, a cut). A record without `match`
 * is a recording.
 */
import type { Exchange } from '../tape/schema.js';

export type Outcome = 'recorded' | 'exact' | 'similar' | 'mock' | 'live' | 'miss' | 'blocked' | 'fault';

export function outcomeOf(ex: Pick<Exchange, 'match'>): Outcome {
  switch (ex.match?.kind) {
    case undefined:
      return 'recorded';
    case 'exact':
      return 'exact';
    case 'semantic':
      return 'similar';
    case 'mock':
      return 'mock';
    case 'live':
      return 'live';
    case 'miss':
      return 'miss';
    case 'blocked':
      return 'blocked';
    case 'fault':
      return 'fault';
    default:
      // A kind a newer tapedeck wrote: an answer, from somewhere this one cannot name.
      return 'exact';
  }
}

/** The fault rule that made or disturbed this exchange's answer (`#1 openai call 2 -> 429`), if one did. */
export function faultOf(ex: Pick<Exchange, 'match' | 'notes'>): string | undefined {
  const noted = ex.notes?.fault;
  if (typeof noted === 'string' && noted !== '') return noted.replace(/^injected by fault rule /, '');
  if (ex.match?.kind === 'fault') return (ex.match.reason ?? 'a fault rule').replace(/^injected by fault rule /, '');
  return undefined;
}

/** What a run's exchanges were, by how each was answered. */
export interface RunCounts {
  exchanges: number;
  /** Recorded from the upstream (a recording, or a replay's `--on-miss live` is `live`). */
  recorded: number;
  /** Answered from the tape: exactly, or by similarity (`similar`, counted in `fromTape` too). */
  fromTape: number;
  similar: number;
  mocked: number;
  live: number;
  missed: number;
  blocked: number;
  /** Exchanges a fault rule made up or disturbed. */
  faults: number;
}

export function emptyCounts(): RunCounts {
  return { exchanges: 0, recorded: 0, fromTape: 0, similar: 0, mocked: 0, live: 0, missed: 0, blocked: 0, faults: 0 };
}

/** Count one exchange into `counts` (in place). A disturbed answer counts as what it was and as a fault. */
export function countExchange(counts: RunCounts, ex: Pick<Exchange, 'match' | 'notes'>): void {
  counts.exchanges++;
  const outcome = outcomeOf(ex);
  if (outcome === 'recorded') counts.recorded++;
  else if (outcome === 'exact') counts.fromTape++;
  else if (outcome === 'similar') {
    counts.fromTape++;
    counts.similar++;
  } else if (outcome === 'mock') counts.mocked++;
  else if (outcome === 'live') counts.live++;
  else if (outcome === 'miss') counts.missed++;
  else if (outcome === 'blocked') counts.blocked++;
  if (faultOf(ex) !== undefined) counts.faults++;
}

export function countRun(exchanges: readonly Pick<Exchange, 'match' | 'notes'>[]): RunCounts {
  const counts = emptyCounts();
  for (const ex of exchanges) countExchange(counts, ex);
  return counts;
}

/**
 * The counts in words, the parts that are not zero: `3 from the tape (1 by similarity), 1 missed, 1 fault(s)
 * injected`. Empty when there is nothing to say (no exchanges; a recording's exchanges, all recorded, unless
 * `recorded` asks for them).
 */
export function countsText(c: RunCounts, opts: { recorded?: boolean } = {}): string {
  const parts = [
    c.recorded > 0 && opts.recorded === true && `${c.recorded} recorded`,
    c.fromTape > 0 && `${c.fromTape} from the tape${c.similar > 0 ? ` (${c.similar} by similarity)` : ''}`,
    c.mocked > 0 && `${c.mocked} mocked`,
    c.live > 0 && `${c.live} live`,
    c.missed > 0 && `${c.missed} missed`,
    c.blocked > 0 && `${c.blocked} blocked as side effect(s)`,
    c.faults > 0 && `${c.faults} fault(s) injected`,
  ];
  return parts.filter((p): p is string => typeof p === 'string').join(', ');
}
