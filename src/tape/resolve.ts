/**
 * What a tape reference names, for every command that takes a tape:
 * - a path to a `.jsonl` file anywhere (`./runs/a.jsonl`, `/tmp/x.jsonl`) that exists: that file;
 * - a tape's name in the tape folder (`checkout`, `ci/baseline`): that tape;
 * - `latest`: the newest tape by its header's `createdAt`, replay tapes left out unless asked for; `latest-replay`:
 *   the newest replay tape (a tape actually named so wins);
 * - a unique prefix of a name (`check` for `checkout-bug`); a prefix of several names is refused with them listed.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { TapedeckError } from '../errors.js';
import { TAPE_EXT, tapeFile, validateTapeName } from './paths.js';
import { listTapeNames, readTape } from './tape-reader.js';

export interface ResolvedTape {
  /** The folder the tape is in, and its name there: `loadTape(dir, name)` reads it. */
  dir: string;
  name: string;
  file: string;
  /** How the reference was read. */
  by: 'path' | 'name' | 'latest' | 'prefix';
}

export interface ResolveOptions {
  /** `latest` may be a replay tape too. */
  includeReplays?: boolean;
}

export const LATEST = 'latest';
export const LATEST_REPLAY = 'latest-replay';

export async function resolveTape(dir: string, ref: string, opts: ResolveOptions = {}): Promise<ResolvedTape> {
  if (ref.endsWith(TAPE_EXT) && (await isFile(path.resolve(ref)))) {
    const file = path.resolve(ref);
    return { dir: path.dirname(file), name: path.basename(file, TAPE_EXT), file, by: 'path' };
  }
  const name = validateTapeName(ref);
  if (await isFile(tapeFile(dir, name))) return { dir, name, file: tapeFile(dir, name), by: 'name' };
  const names = await listTapeNames(dir);
  if (name === LATEST || name === LATEST_REPLAY) {
    const which = name === LATEST_REPLAY ? 'replay' : opts.includeReplays === true ? 'any' : 'record';
    const newest = await latestTape(dir, names, which);
    if (newest === undefined)
      throw new TapedeckError('TAPE_NOT_FOUND', `no ${which === 'any' ? '' : `${which} `}tape in ${dir} to be "${name}"`, {
        status: 404,
      });
    return { dir, name: newest, file: tapeFile(dir, newest), by: 'latest' };
  }
  const matches = names.filter((n) => n.startsWith(name));
  if (matches.length === 1) return { dir, name: matches[0] as string, file: tapeFile(dir, matches[0] as string), by: 'prefix' };
  if (matches.length > 1)
    throw new TapedeckError(
      'BAD_ARGS',
      `"${ref}" is the start of ${matches.length} tapes (${matches.slice(0, 5).join(', ')}${matches.length > 5 ? ', ...' : ''}): say which`,
    );
  throw new TapedeckError('TAPE_NOT_FOUND', `no tape at ${tapeFile(dir, name)}`, { status: 404 });
}

/** The newest tape by header `createdAt` among recorded, replay or all tapes; unreadable tapes are skipped. */
async function latestTape(dir: string, names: readonly string[], which: 'record' | 'replay' | 'any'): Promise<string | undefined> {
  let best: { name: string; at: number } | undefined;
  for (const name of names) {
    let header;
    try {
      header = (await readTape(tapeFile(dir, name), { resolveFiles: false })).header;
    } catch {
      continue;
    }
    if (which !== 'any' && (header.mode === 'replay') !== (which === 'replay')) continue;
    const at = Date.parse(header.createdAt);
    if (Number.isNaN(at)) continue;
    if (best === undefined || at > best.at || (at === best.at && name > best.name)) best = { name, at };
  }
  return best?.name;
}

/** Tapes in `dir` whose header says they replay `name` (`replayOf.tape`). */
export async function replaysOf(dir: string, name: string): Promise<string[]> {
  const out: string[] = [];
  for (const n of await listTapeNames(dir)) {
    try {
      if ((await readTape(tapeFile(dir, n), { resolveFiles: false })).header.replayOf?.tape === name) out.push(n);
    } catch {
      // unreadable: not known to be a replay of it
    }
  }
  return out;
}

async function isFile(file: string): Promise<boolean> {
  return stat(file).then(
    (s) => s.isFile(),
    () => false,
  );
}
