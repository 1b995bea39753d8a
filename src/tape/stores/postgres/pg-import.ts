/**
 * A whole tape written into PostgreSQL as it is (push): the header and records exactly as the source holds them,
 * large bodies into the blob tables, in one transaction (all or nothing), under the tape's advisory lock so no
 * recorder writes it meanwhile.
 */
import { hostname } from 'node:os';
import pg from 'pg';
import { TapedeckError } from '../../../errors.js';
import { addToStats, emptyStats } from '../../stats.js';
import type { ImportOptions, TapeImport } from '../../store.js';
import { CLOSE_GRACE_MS, clientConfig, storeError, type PgLocation } from './connection.js';
import { bounded, endWithin } from './deadline.js';
import type { PgBlobs } from './pg-blobs.js';
import { pgJson } from './pg-text.js';
import {
  blobShas,
  insertParts,
  INSERT_ROWS,
  lockHolderOf,
  NOTIFY_CHANNEL,
  notifyPayload,
  partExchange,
  partsJson,
  rowsJson,
  tapeLockKey,
  type ExchangeRow,
  type PartRow,
} from './pg-writer.js';

const BATCH = 500;

export async function importIntoPg(loc: PgLocation, blobs: PgBlobs, tape: TapeImport, opts: ImportOptions = {}): Promise<number> {
  const { name } = tape;
  const client = new pg.Client(clientConfig(loc, `tapedeck writer pid ${process.pid} on ${hostname()}`));
  try {
    await client.connect();
  } catch (err) {
    throw storeError(loc, `write tape "${name}"`, err);
  }
  client.on('error', () => undefined);
  // Every call with its deadline (`deadline.ts`): a database that stops answering fails the copy, never holds it.
  const db = bounded(client, loc.timeoutMs);
  const key = tapeLockKey(loc.namespace, name);
  try {
    const locked = await db.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS ok', [key]);
    if (locked.rows[0]?.ok !== true)
      throw new TapedeckError('TAPE_LOCKED', `tape "${name}" is locked by ${await lockHolderOf(db, key)}: another tapedeck is writing it`, {
        status: 409,
        details: { tape: name, store: loc.display },
      });
    await db.query('BEGIN');
    const found = await db.query<{ id: string }>('SELECT id FROM tapedeck_tapes WHERE namespace = $1 AND name = $2', [loc.namespace, name]);
    if (found.rows[0] !== undefined) {
      if (opts.overwrite !== true)
        throw new TapedeckError('TAPE_EXISTS', `tape "${name}" already exists in ${loc.display}`, {
          details: { tape: name, store: loc.display },
        });
      await db.query('DELETE FROM tapedeck_tapes WHERE id = $1', [found.rows[0].id]);
    }
    const h = tape.header;
    const created = await db.query<{ id: string }>(
      `INSERT INTO tapedeck_tapes (namespace, name, created_at, mode, replay_of, header, stats)
       VALUES ($1, $2, $3, $4, $5, $6::json, $7::jsonb) RETURNING id`,
      [loc.namespace, name, h.createdAt, h.mode, h.replayOf?.tape ?? null, tape.headerLine, JSON.stringify(emptyStats())],
    );
    const tapeId = (created.rows[0] as { id: string }).id;
    const stats = emptyStats();
    let count = 0;
    let nextSeq = 0;
    let pos = 0;
    let rows: ExchangeRow[] = [];
    let parts: PartRow[] = [];
    const flush = async (): Promise<void> => {
      if (rows.length === 0 && parts.length === 0) return;
      await db.query(`WITH ${INSERT_ROWS}, ${insertParts('$4')} SELECT (SELECT count(*) FROM ins), (SELECT count(*) FROM parts)`, [
        tapeId,
        rowsJson(rows),
        [...new Set([...blobShas(rows), ...parts.flatMap((p) => p.shas)])],
        partsJson(parts),
      ]);
      rows = [];
      parts = [];
    };
    for await (const { ex, line, stored } of tape.records) {
      for (const body of stored) await blobs.put(name, await tape.readBlob(body), body.encoding);
      if (ex === undefined) {
        parts.push({ exchange: partExchange(line), line, pos: pos++, shas: stored.map((b) => b.sha256) });
      } else {
        rows.push({ ex, line, key: opts.indexKey?.(ex), pos: pos++ });
        addToStats(stats, ex);
        nextSeq = Math.max(nextSeq, ex.seq + 1);
        count++;
      }
      if (rows.length + parts.length >= BATCH) await flush();
    }
    await flush();
    await db.query(
      'UPDATE tapedeck_tapes SET stats = $2::jsonb, exchanges = $3, next_seq = $4, next_pos = $5, version = version + 1 WHERE id = $1',
      [tapeId, pgJson(JSON.stringify(stats)), count, nextSeq, pos],
    );
    await db.query('SELECT pg_notify($1, $2)', [NOTIFY_CHANNEL, notifyPayload(loc.namespace, name)]);
    await db.query('COMMIT');
    return count;
  } catch (err) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw err instanceof TapedeckError ? err : storeError(loc, `write tape "${name}"`, err);
  } finally {
    await db.query('SELECT pg_advisory_unlock($1::bigint)', [key]).catch(() => undefined);
    await endWithin(client, CLOSE_GRACE_MS);
  }
}
