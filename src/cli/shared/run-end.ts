/**
 * What `record` and `replay` say when a run ends (wrapper mode and server mode alike): the tape written and how its
 * exchanges were answered, read from the tape's own records (`replay/outcome.ts`: from the tape, by similarity,
 * mocked, live, missed, blocked, faults injected), the first miss by its step, what went wrong upstream, and the
 * faults the rules injected (never blamed on the upstream). A replay no request reached leaves no replay tape, and
 * the line says so rather than naming a file that does not exist.
 */
import type { Logger } from '../../log.js';
import { countRun, countsText } from '../../replay/outcome.js';
import { similarServeLines, similarServes } from '../../replay/similar-report.js';
import { describeMiss, missedCalls, runFaults, runTrouble } from '../../inspect/run-trouble.js';
import type { Exchange } from '../../tape/schema.js';
import type { TapeStore } from '../../tape/store.js';
import { warning, type Said } from './notice.js';

export interface EndedTape {
  name: string;
  path: string;
  count: number;
  /** A replay tape (discarded when no request reached it), rather than a recording. */
  replay: boolean;
}

/**
 * The lines: `3 exchange(s) on tape "t" (tapes/t.jsonl): 2 from the tape, 1 missed; node exited with code 0` (`ended`
 * is the part after the `;`, when there is one), then the first miss, the trouble and the faults.
 */
export function runEndLines(
  tape: EndedTape,
  all: readonly Exchange[],
  ended?: string,
  opts: { explain?: boolean } = {},
): (string | Said)[] {
  const tail = ended === undefined ? '' : `; ${ended}`;
  if (tape.count === 0 && tape.replay) return [`no request reached the replay, so no replay tape was written${tail}`];
  // A recording appended to (--append): this run's exchanges are the last ones.
  const exchanges = all.length > tape.count ? all.slice(all.length - tape.count) : all;
  const counts = countRun(exchanges);
  const what = exchanges.length === tape.count ? countsText(counts, { recorded: tape.replay }) : '';
  const kind = tape.replay ? 'replay tape' : 'tape';
  const head = `${tape.count} exchange(s) on ${kind} "${tape.name}" (${tape.path})${what === '' ? '' : `: ${what}`}${tail}`;
  const misses = missedCalls(exchanges);
  const first = misses[0];
  const trouble = runTrouble(exchanges.filter((ex) => ex.match?.kind !== 'miss'));
  const faults = runFaults(exchanges);
  return [
    counts.missed > 0 || counts.blocked > 0 ? warning(head) : head,
    ...(first === undefined
      ? []
      : [
          warning(
            `${misses.length > 1 ? 'first miss of ' + misses.length : 'miss'}: ${describeMiss(first)} ` +
              `(tapedeck show ${tape.name} --step ${first.step})`,
          ),
        ]),
    ...(trouble === undefined ? [] : [warning(`on the tape: ${trouble}`)]),
    ...(faults === undefined ? [] : [faults]),
    // replay --explain: each answer served by similarity, its score, what differed and what was set aside.
    ...(opts.explain === true && tape.replay ? similarServeLines(similarServes(exchanges)) : []),
  ];
}

/** How long the end of a run waits to read its tape back (a store that has gone silent does not hold the exit). */
const READ_BACK_MS = 5_000;

/**
 * The exchanges on the tape just written: none when it holds none, when it could not be written completely (its store
 * failed: reading it back would wait on that store), or when it cannot be read back within READ_BACK_MS. The head line
 * prints either way.
 */
export async function endedExchanges(store: TapeStore, tape: EndedTape & { failed: boolean }, log: Logger): Promise<readonly Exchange[]> {
  if (tape.count === 0 || tape.failed) return [];
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), READ_BACK_MS)));
  try {
    const read = store.load(tape.name, { resolveFiles: false }).then((t) => t.exchanges);
    const exchanges = await Promise.race([read, late]);
    if (exchanges === undefined) log.warn({ tape: tape.name }, 'the tape could not be read back in time for the end-of-run line');
    return exchanges ?? [];
  } catch (err) {
    log.warn({ err: (err as Error).message, tape: tape.name }, 'could not read the tape back for the end-of-run line');
    return [];
  } finally {
    clearTimeout(timer);
  }
}
