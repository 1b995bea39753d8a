/**
 * The PostgreSQL tape store: tapes shared by a team, a fleet of recorders and many CI runners, in one database
 * (namespaces keep teams or branches apart). Same records as the folder store; the schema is in `schema.ts`, the
 * writer in `pg-writer.ts`, large bodies in `pg-blobs.ts`, listings and references in `pg-listing.ts`, deletion in
 * `pg-remove.ts`, following tapes in `pg-listener.ts`. A tape is read in one query, so a replay's memory grows with
 * the tape it replays, never with the store; listings and references are answered by indexed queries.
 */
import type pg from 'pg';
import { validateTapeName } from '../../paths.js';
import { resolveRef } from '../resolve.js';
import type { TapeHeader } from '../../schema.js';
import type { LoadedTape, ReadTapeOptions, TapeStore } from '../../store.js';
import { parseHeader, parseTapeRecords, type TapeRecord } from '../../tape-reader.js';
import { resolveStoredBodies } from '../../stored-bodies.js';
import { createPool, pgLocation, storeError, type PgLocation, type PgLocationOptions } from './connection.js';
import { createPgBlobs } from './pg-blobs.js';
import { notFound, pgStoreContext, tapeNames, tapeRow, type PgStoreContext } from './pg-context.js';
import { importIntoPg } from './pg-import.js';
import { createListener } from './pg-listener.js';
import { listTapes, pgResolveSource, replaysOf } from './pg-listing.js';
import { removeTape } from './pg-remove.js';
import { lockHeldBy, notifyPayload, openPgWriter, tapeLockKey } from './pg-writer.js';
import { migrate, SCHEMA_VERSION } from './schema.js';

export type PgStoreOptions = PgLocationOptions;

export async function createPgStore(url: string, opts: PgStoreOptions = {}): Promise<TapeStore> {
  const loc = pgLocation(url, opts);
  const { pool, end } = createPool(loc);
  try {
    await ensureSchema(pool, loc);
  } catch (err) {
    await end();
    throw storeError(loc, 'open', err);
  }
  const ctx = pgStoreContext(
    loc,
    pool,
    createPgBlobs(pool, (what, err) => storeError(loc, what, err)),
  );
  const { ns, blobs, where } = ctx;
  const listener = createListener(loc);
  const store: TapeStore = {
    kind: 'postgres',
    location: loc.display,
    where,
    openWriter: (w) => openPgWriter({ loc, blobs, where }, w),
    importTape: (tape, importOpts) => importIntoPg(loc, blobs, tape, importOpts),
    has: async (name) => (await tapeRow(ctx, name)) !== undefined,
    writing: (name) => writingTape(ctx, name),
    header: (name) => tapeHeader(ctx, name),
    load: (name, readOpts) => loadTape(ctx, name, readOpts),
    lines: (name) => records(ctx, name),
    names: () => tapeNames(ctx),
    list: (q) => listTapes(ctx, q),
    resolve: (ref, resolveOpts) => resolveRef(resolveSource, ref, resolveOpts),
    replaysOf: (name) => replaysOf(ctx, name),
    remove: (name) => removeTape(ctx, name),
    readBlob: (_name, body) => blobs.read(body),
    openBlob: (name, body) => blobs.stream(body, where(name)),
    blobSink: (name) => blobs.sink(name),
    watch: (name, onChange) => listener.watch(notifyPayload(ns, name), onChange),
    version: (name) => tapeVersion(ctx, name),
    async close() {
      await listener.close();
      await end();
    },
  };
  const resolveSource = pgResolveSource(ctx, store);
  return store;
}

/**
 * The tape's records (header first), in one query: a tape is read whole (replay holds it in memory anyway), which
 * keeps memory to the tape's size and costs one round trip, where paging by seq cost a sort per page.
 */
async function* records(ctx: PgStoreContext, name: string): AsyncGenerator<TapeRecord> {
  const row = await tapeRow(ctx, name);
  if (row === undefined) throw await notFound(ctx, name);
  yield { line: 1, text: row.header };
  const rows = await ctx.query<{ pos: number; doc: string }>(
    'read',
    `SELECT pos, doc FROM tapedeck_exchanges WHERE tape_id = $1
     UNION ALL SELECT pos, doc FROM tapedeck_parts WHERE tape_id = $1 ORDER BY pos`,
    [row.id],
  );
  // A record's position after the header is its line, as a folder store numbers them.
  for (const r of rows.rows) yield { line: r.pos + 2, text: r.doc };
}

async function writingTape(ctx: PgStoreContext, name: string): Promise<string | undefined> {
  const key = tapeLockKey(ctx.ns, validateTapeName(name));
  try {
    return await lockHeldBy(ctx.pool, key);
  } catch (err) {
    throw ctx.fail('read', err);
  }
}

async function tapeHeader(ctx: PgStoreContext, name: string): Promise<TapeHeader> {
  const row = await tapeRow(ctx, name);
  if (row === undefined) throw await notFound(ctx, name);
  return parseHeader(ctx.where(name), JSON.parse(row.header));
}

async function loadTape(ctx: PgStoreContext, name: string, readOpts: ReadTapeOptions | undefined): Promise<LoadedTape> {
  const { blobs, where } = ctx;
  const all: TapeRecord[] = [];
  for await (const r of records(ctx, name)) all.push(r);
  const parsed = parseTapeRecords(where(name), all);
  const exchanges =
    readOpts?.resolveFiles === false
      ? parsed.exchanges
      : await resolveStoredBodies(
          parsed.exchanges,
          parsed.problems,
          { read: (b) => blobs.read(b), open: (b) => blobs.stream(b, where(name)), check: (b) => blobs.check(b) },
          readOpts,
        );
  return { path: where(name), name: validateTapeName(name), header: parsed.header, exchanges, problems: parsed.problems };
}

async function tapeVersion(ctx: PgStoreContext, name: string): Promise<string | undefined> {
  const r = await ctx.query<{ id: string; version: string }>(
    'read',
    'SELECT id, version FROM tapedeck_tapes WHERE namespace = $1 AND name = $2',
    [ctx.ns, validateTapeName(name)],
  );
  const row = r.rows[0];
  return row === undefined ? undefined : `${row.id}:${row.version}`;
}

/** Create or migrate the schema once; a database already at this version costs one query. */
async function ensureSchema(pool: pg.Pool, loc: PgLocation): Promise<void> {
  try {
    const r = await pool.query<{ version: number }>('SELECT max(version) AS version FROM tapedeck_schema');
    if (r.rows[0]?.version === SCHEMA_VERSION) return;
  } catch {
    // no schema table yet: create it
  }
  const client = await pool.connect();
  try {
    await migrate(client, loc.display);
  } finally {
    client.release();
  }
}
