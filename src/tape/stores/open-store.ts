/**
 * The store a command works on: a folder (the default), or a shared store named by URL
 * (`postgres://USER@HOST:PORT/DB[?namespace=NS]`). The PostgreSQL store is loaded only when asked for. Whatever the
 * store, a path to a `.jsonl` file is a tape reference (`path-ref.ts`).
 */
import { TapedeckError } from '../../errors.js';
import { createDirStore } from './dir-store.js';
import type { TapeStore } from '../store.js';
import { redactStoreUrl } from '../redaction/url-credentials.js';
import { withPathRefs } from './path-ref.js';

/** Kept for callers of the library: prefer the store's own `location`, rebuilt from what its driver read. */
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
  // Never the text itself: what is not a store URL tapedeck reads cannot be told apart from its password.
  const what =
    scheme !== undefined
      ? `a "${scheme}:" URL, which is no tape store tapedeck knows`
      : /^\s*[a-z_]+\s*=/i.test(spec.store)
        ? 'a keyword/value connection string (host=... dbname=...), not a URL'
        : 'not a URL';
  throw new TapedeckError(
    'BAD_ARGS',
    `the tape store given is ${what} (it is not printed, as it may hold a password): give a folder with --dir, or a ` +
      'postgres://USER:PASSWORD@HOST:PORT/DB URL with --store',
  );
}

/**
 * The store a library caller names: the one given, or the folder store of `dir` (or of `fallbackDir`, where a
 * caller has a default). The one place `{store, dir}` options become a store.
 */
export function storeOf(
  opts: { store?: TapeStore | undefined; dir?: string | undefined },
  more: { fallbackDir?: string; pollMs?: number | undefined } = {},
): TapeStore {
  if (opts.store !== undefined && opts.dir !== undefined) throw new TapedeckError('BAD_ARGS', 'give a store or a dir, not both');
  if (opts.store !== undefined) return opts.store;
  const dir = opts.dir ?? more.fallbackDir;
  if (dir !== undefined) return createDirStore(dir, more.pollMs === undefined ? {} : { pollMs: more.pollMs });
  throw new TapedeckError('BAD_ARGS', 'a store or a dir for the tapes is needed');
}
