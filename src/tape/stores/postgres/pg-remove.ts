/**
 * Deleting a tape from the PostgreSQL store: under the writer's advisory lock (a tape being recorded, here or on any
 * machine, is refused), its rows gone in one statement, followers told, and then the large bodies no tape refers to
 * any more collected.
 */
import type pg from 'pg';
import { TapedeckError } from '../../../errors.js';
import { validateTapeName } from '../../paths.js';
import type { RemovedTape } from '../../store.js';
import { notFound, type PgStoreContext } from './pg-context.js';
import { lockHolderOf, NOTIFY_CHANNEL, notifyPayload, tapeLockKey } from './pg-writer.js';

export async function removeTape(ctx: PgStoreContext, name: string): Promise<RemovedTape> {
  validateTapeName(name);
  let client: pg.PoolClient;
  try {
    client = await ctx.pool.connect();
  } catch (err) {
    throw ctx.fail('delete', err);
  }
  let removed: { shas: string[] };
  try {
    removed = await deleteLocked(ctx, client, name);
  } catch (err) {
    throw err instanceof TapedeckError ? err : ctx.fail('delete', err);
  } finally {
    client.release();
  }
  // With the connection back in the pool: the clean-up is calls of its own, each with its deadline.
  await ctx.blobs.collect(removed.shas).catch((err: unknown) => {
    throw ctx.fail('delete', err);
  });
  return { name, path: ctx.where(name), sideFiles: removed.shas.length > 0 };
}

/** The tape's rows deleted while holding the writer's lock; resolves to the large bodies it referred to. */
async function deleteLocked(ctx: PgStoreContext, client: pg.PoolClient, name: string): Promise<{ shas: string[] }> {
  const key = tapeLockKey(ctx.ns, name);
  // The writer's lock, held for the deletion: a tape being recorded (here or on any machine) is refused.
  const locked = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS ok', [key]);
  if (locked.rows[0]?.ok !== true) {
    const who = await lockHolderOf(client, key);
    throw new TapedeckError('TAPE_LOCKED', `cannot delete tape "${name}": it is being written by ${who}. Stop that tapedeck first`, {
      status: 409,
      details: { tape: name, store: ctx.loc.display, holder: who },
    });
  }
  try {
    const gone = await client.query<{ id: string; shas: string[] }>(
      `DELETE FROM tapedeck_tapes t WHERE t.namespace = $1 AND t.name = $2
        RETURNING t.id, ARRAY(SELECT r.sha256 FROM tapedeck_blob_refs r WHERE r.tape_id = t.id) AS shas`,
      [ctx.ns, name],
    );
    const row = gone.rows[0];
    if (row === undefined) throw await notFound(ctx, name);
    await client.query('SELECT pg_notify($1, $2)', [NOTIFY_CHANNEL, notifyPayload(ctx.ns, name)]);
    return row;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]).catch(() => undefined);
  }
}
