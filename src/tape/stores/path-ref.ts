/**
 * A path to a `.jsonl` file is a tape reference in every store, not only in a folder: with a shared store configured,
 * `tapedeck diff fleet-b ./local/fleet-b.jsonl` compares the store's tape with the file on disk. A folder store
 * resolves paths itself (`dir-store.ts`); `openStore` gives every other store this wrapper.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { createDirStore } from './dir-store.js';
import { TAPE_EXT } from '../paths.js';
import type { ResolvedTape, TapeStore } from '../store.js';

/** Whether `ref` names a tape file on disk: it ends in `.jsonl` and the file is there. */
async function isTapeFile(ref: string): Promise<boolean> {
  if (!ref.endsWith(TAPE_EXT)) return false;
  try {
    return (await stat(path.resolve(ref))).isFile();
  } catch {
    return false;
  }
}

/** `store`, whose `resolve` also takes a path to a `.jsonl` file (that file, in a folder store of its folder). */
export function withPathRefs(store: TapeStore): TapeStore {
  const resolve: TapeStore['resolve'] = async (ref, opts) => {
    if (!(await isTapeFile(ref))) return store.resolve(ref, opts);
    const file = path.resolve(ref);
    return { store: createDirStore(path.dirname(file)), name: path.basename(file, TAPE_EXT), by: 'path' } satisfies ResolvedTape;
  };
  // Everything else is the store's own (getters and methods alike), so the wrapper follows the interface as it grows.
  return new Proxy(store, { get: (target, key) => (key === 'resolve' ? resolve : Reflect.get(target, key, target)) });
}
