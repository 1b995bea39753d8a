/**
 * What the PostgreSQL store's operations share: the pool, the namespace, the large-body store and how a failed call
 * becomes the store's error. One context per opened store, handed to the functions that list, read and delete, so
 * each stays a small function of its own instead of a method inside one long factory.
 */
import type pg from 'pg';
import type { TapedeckError } from '../../../errors.js';
import { validateTapeName } from '../../paths.js';
import { tapeNotFound } from '../resolve.js';
import { storeError, type PgLocation } from './connection.js';
import type { PgBlobs } from './pg-blobs.js';
import { isTapeName } from './rows.js';

export interface PgStoreContext {
  loc: PgLocation;
  pool: pg.Pool;
  /** The store's namespace (`loc.namespace`). */
  ns: string;
  blobs: PgBlobs;
  /** A failed call as the store's error, naming what was being done. */
  fail(what: string, err: unknown): TapedeckError;
  /** Where a tape is, fit to print. */
  where(name: string): string;
  /** One query on the pool; a failure comes back as the store's error. */
  query<R extends pg.QueryResultRow>(what: string, sql: string, params: unknown[]): Promise<pg.QueryResult<R>>;
}

export function pgStoreContext(loc: PgLocation, pool: pg.Pool, blobs: PgBlobs): PgStoreContext {
  const fail = (what: string, err: unknown): TapedeckError => storeError(loc, what, err);
  return {
    loc,
    pool,
    ns: loc.namespace,
    blobs,
    fail,
    where: (name) => `${loc.display}#${name}`,
    async query<R extends pg.QueryResultRow>(what: string, sql: string, params: unknown[]): Promise<pg.QueryResult<R>> {
      try {
        return await pool.query<R>(sql, params);
      } catch (err) {
        throw fail(what, err);
      }
    },
  };
}

/** The tape's row (its id and header line), or undefined when the namespace holds no such tape. */
export async function tapeRow(ctx: PgStoreContext, name: string): Promise<{ id: string; header: string } | undefined> {
  const r = await ctx.query<{ id: string; header: string }>(
    'read',
    'SELECT id, header FROM tapedeck_tapes WHERE namespace = $1 AND name = $2',
    [ctx.ns, validateTapeName(name)],
  );
  return r.rows[0];
}

/** Only names tapedeck would write: a row another writer gave a name with control characters is never offered. */
export async function tapeNames(ctx: PgStoreContext): Promise<string[]> {
  return (await ctx.query<{ name: string }>('read', 'SELECT name FROM tapedeck_tapes WHERE namespace = $1 ORDER BY name', [ctx.ns])).rows
    .map((r) => r.name)
    .filter(isTapeName);
}

export async function notFound(ctx: PgStoreContext, name: string): Promise<TapedeckError> {
  return tapeNotFound(name, ctx.loc.display, await tapeNames(ctx));
}
