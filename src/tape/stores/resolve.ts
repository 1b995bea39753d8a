/**
 * What a tape reference names, for every command that takes a tape, in every store:
 * - a tape's name (`checkout`, `ci/baseline`): that tape;
 * - `latest`: the newest tape by its header's `createdAt`, replay tapes left out unless asked for; `latest-replay`:
 *   the newest replay tape (a tape actually named so wins);
 * - a unique prefix of a name (`check` for `checkout-bug`); a prefix of a recording and of the replays of it means
 *   the recording; a prefix of several unrelated names is refused with them listed;
 * - in a folder store, also a path to a `.jsonl` file anywhere (`./runs/a.jsonl`): that file (`dir-store.ts`).
 * A name that names nothing is TAPE_NOT_FOUND, one message everywhere, with the closest names when there are any.
 */
import { closestNames } from '../../edit-distance.js';
import { TapedeckError } from '../../errors.js';
import { validateTapeName } from '../paths.js';
import type { TapeHeader } from '../schema.js';
import type { ResolveOptions, ResolvedTape, TapeStore } from '../store.js';

export const LATEST = 'latest';
export const LATEST_REPLAY = 'latest-replay';

/** Which tapes `latest` may be. */
export type LatestKind = 'record' | 'replay' | 'any';

/** The store operations resolving needs; a store may answer `latest` and prefixes faster itself (a database index). */
export interface ResolveSource {
  readonly store: TapeStore;
  /** The newest tape of a kind, by header `createdAt` (ties: the greater name). */
  latest(kind: LatestKind): Promise<string | undefined>;
  /** Names starting with `prefix`, sorted; at most `limit`. */
  withPrefix(prefix: string, limit: number): Promise<string[]>;
  /** Every name, for "did you mean". */
  names(): Promise<string[]>;
}

export async function resolveRef(src: ResolveSource, ref: string, opts: ResolveOptions = {}): Promise<ResolvedTape> {
  const { store } = src;
  const name = validateTapeName(ref);
  if (await store.has(name)) return { store, name, by: 'name' };
  if (name === LATEST || name === LATEST_REPLAY) {
    const kind: LatestKind = name === LATEST_REPLAY ? 'replay' : opts.includeReplays === true ? 'any' : 'record';
    const newest = await src.latest(kind);
    if (newest === undefined)
      throw new TapedeckError('TAPE_NOT_FOUND', `no ${kind === 'any' ? '' : `${kind} `}tape in ${store.location} to be "${name}"`, {
        status: 404,
        details: { ref, store: store.location },
      });
    return { store, name: newest, by: 'latest' };
  }
  const matches = await src.withPrefix(name, 51);
  if (matches.length === 1) return { store, name: matches[0] as string, by: 'prefix' };
  if (matches.length > 1) {
    const recording = await recordingAmong(store, matches);
    if (recording !== undefined) return { store, name: recording, by: 'prefix' };
    throw new TapedeckError(
      'BAD_ARGS',
      `"${ref}" is the start of ${matches.length > 50 ? 'more than 50' : matches.length} tapes (${matches.slice(0, 5).join(', ')}${matches.length > 5 ? ', ...' : ''}): say which`,
    );
  }
  throw tapeNotFound(ref, store.location, await src.names());
}

/** The one error for a tape that is not there, naming the closest names. */
export function tapeNotFound(ref: string, location: string, names: readonly string[]): TapedeckError {
  const close = closestNames(ref, names);
  const hint =
    close.length > 0 ? `; did you mean ${close.map((n) => `"${n}"`).join(', ')}?` : names.length === 0 ? ' (it holds no tapes)' : '';
  return new TapedeckError('TAPE_NOT_FOUND', `no tape "${ref}" in ${location}${hint} (tapedeck list shows them)`, {
    status: 404,
    details: { ref, store: location, ...(close.length > 0 ? { suggestions: close } : {}) },
  });
}

/**
 * Of tapes sharing a prefix, the one recording the rest replay (`checkout` among `checkout`,
 * `checkout.replay-2026-...`), or undefined when they are not one recording and its replays.
 */
async function recordingAmong(store: TapeStore, names: readonly string[]): Promise<string | undefined> {
  if (names.length > 50) return undefined;
  const headers: { name: string; header: TapeHeader }[] = [];
  for (const name of names) {
    try {
      headers.push({ name, header: await store.header(name) });
    } catch {
      return undefined;
    }
  }
  const recordings = headers.filter((h) => h.header.mode === 'record');
  if (recordings.length !== 1) return undefined;
  const recording = (recordings[0] as { name: string }).name;
  return headers.every((h) => h.name === recording || h.header.replayOf?.tape === recording) ? recording : undefined;
}

/** `latest` over headers read one by one (a store without an index on `createdAt`); unreadable tapes are skipped. */
export async function latestByHeaders(store: TapeStore, names: readonly string[], kind: LatestKind): Promise<string | undefined> {
  let best: { name: string; at: number } | undefined;
  for (const name of names) {
    let header;
    try {
      header = await store.header(name);
    } catch {
      continue;
    }
    if (kind !== 'any' && (header.mode === 'replay') !== (kind === 'replay')) continue;
    const at = Date.parse(header.createdAt);
    if (Number.isNaN(at)) continue;
    if (best === undefined || at > best.at || (at === best.at && name > best.name)) best = { name, at };
  }
  return best?.name;
}

/** Tapes whose header says they replay `name`, by reading headers (a store without an index on it). */
export async function replaysByHeaders(store: TapeStore, names: readonly string[], name: string): Promise<string[]> {
  const out: string[] = [];
  for (const n of names) {
    try {
      if ((await store.header(n)).replayOf?.tape === name) out.push(n);
    } catch {
      // unreadable: not known to be a replay of it
    }
  }
  return out;
}

/** A resolve source over a store's `names()` and `header()`: what the folder and in-memory stores use. */
export function scanningResolveSource(store: TapeStore): ResolveSource {
  return {
    store,
    names: () => store.names(),
    latest: async (kind) => latestByHeaders(store, await store.names(), kind),
    withPrefix: async (prefix, limit) => (await store.names()).filter((n) => n.startsWith(prefix)).slice(0, limit),
  };
}
