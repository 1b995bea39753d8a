/**
 * The store a command works on: a folder (the default), or a shared store named by URL
 * (`postgres://USER@HOST:PORT/DB[?namespace=NS]`). The PostgreSQL store is loaded only when asked for. Whatever the
 * store, a path to a `.jsonl` file is a tape reference (`path-ref.ts`).
 */
import { TapedeckError } from '../errors.js';
import { createDirStore } from './dir-store.js';
import type { TapeStore } from './store.js';
import { redactStoreUrl } from './url-credentials.js';
import { withPathRefs } from './path-ref.js';

export { redactStoreUrl };

export interface StoreSpec {
  /** The tape folder, used when no `store` URL is given. */
  dir: string;
  /** A store URL. */
  store?: string | undefined;
  /** Keeps teams or branches apart in one shared store. */
  namespace?: string | undefined;
}

export async function openStore(spec: StoreSpec): Promise<TapeStore> {
  if (spec.store === undefined) return createDirStore(spec.dir);
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(spec.store)?.[1]?.toLowerCase();
  if (scheme === 'postgres' || scheme === 'postgresql') {
    const { createPgStore } = await import('./postgres/pg-store.js');
    // A path to a .jsonl is a tape reference here too, as in a folder.
    return withPathRefs(await createPgStore(spec.store, spec.namespace === undefined ? {} : { namespace: spec.namespace }));
  }
  throw new TapedeckError(
    'BAD_ARGS',
    `unknown tape store "${redactStoreUrl(spec.store)}": give a folder with --dir, or a postgres://USER@HOST:PORT/DB URL with --store`,
  );
}
