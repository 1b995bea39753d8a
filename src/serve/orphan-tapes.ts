/**
 * Orphan tapes: after a complete run of a suite, the recordings in serve's folder (or store namespace) that no test
 * opened or was given: the tapes of tests since renamed or deleted. Only recordings count (replay tapes are a run's
 * output, not a test's), never a tape whose header cannot be read, nor one being written. Listing is always safe;
 * deleting is only right after a run that reached every test, which only the test runner knows: serve deletes
 * when told to (`DELETE /@/orphans` from a helper that checked, or `--prune-orphans` from whoever started it).
 */
import { isTapedeckError } from '../errors.js';
import type { TapeStore } from '../tape/store.js';

export interface PrunedOrphans {
  removed: string[];
  /** Orphans that could not be removed (being written, gone meanwhile), and why. */
  skipped: { name: string; reason: string }[];
}

/** The recordings of `store` that `used` does not claim, sorted. */
export async function findOrphans(store: TapeStore, used: (name: string) => boolean): Promise<string[]> {
  const out: string[] = [];
  for (const name of await store.names()) {
    if (used(name)) continue;
    const header = await store.header(name).catch(() => undefined);
    if (header?.mode !== 'record') continue;
    if ((await store.writing(name)) !== undefined) continue;
    out.push(name);
  }
  return out;
}

export async function pruneOrphans(store: TapeStore, names: readonly string[]): Promise<PrunedOrphans> {
  const result: PrunedOrphans = { removed: [], skipped: [] };
  for (const name of names) {
    try {
      await store.remove(name);
      result.removed.push(name);
    } catch (err) {
      if (!isTapedeckError(err) || (err.code !== 'TAPE_LOCKED' && err.code !== 'TAPE_NOT_FOUND')) throw err;
      result.skipped.push({ name, reason: err.message });
    }
  }
  return result;
}
