/**
 * The PostgreSQL tape store: tapes shared by a team, a fleet of recorders and many CI runners, in one database
 * (namespaces keep teams or branches apart). Same records as the folder store; the schema is in `schema.ts`, the
 * writer in `pg-writer.ts`, large bodies in `pg-blobs.ts`. A tape is read in one query, so a replay's memory grows
 * with the tape it replays, never with the store; listings and references are answered by indexed queries.
 */
import { hostname } from 'node:os';
import pg from 'pg';
import { TapedeckError } from '../../../errors.js';
import { validateTapeName } from '../../paths.js';
import { resolveRef, tapeNotFound, type LatestKind, type ResolveSource } from '../resolve.js';
import type { TapeHeader } from '../../schema.js';
import type { TapeListEntry, TapeProblem, TapeStore } from '../../store.js';
import { parseHeader, parseTapeRecords, resolveStoredBodies, type TapeRecord } from '../../tape-reader.js';
import { CLOSE_GRACE_MS, clientConfig, createPool, pgLocation, storeError, type PgLocation, type PgLocationOptions } from './connection.js';
import { bounded, endWithin } from './deadline.js';
import { createPgBlobs } from './pg-blobs.js';
import { importIntoPg } from './pg-import.js';
import { lockHeldBy, lockHolderOf, NOTIFY_CHANNEL, notifyPayload, openPgWriter, tapeLockKey } from './pg-writer.js';
import { isTapeName, rowStats } from './rows.js';
import { migrate, SCHEMA_VERSION } from './schema.js';

export type PgStoreOptions = PgLocationOptions;

export async function createPgStore(url: string, opts: PgStoreOptions = {}): Promise<TapeStore> {
  const loc = pgLocation(url, opts);
  const { pool, end } = createPool(loc);
  const fail = (what: string, err: unknown): TapedeckError => storeError(loc, what, err);
  try {
    await ensureSchema(pool, loc);
  } catch (err) {
    await end();
    throw fail('open', err);
  }
  const blobs = createPgBlobs(pool, fail);
  const ns = loc.namespace;
  const where = (name: string): string => `${loc.display}#${name}`;
  const query = async <R extends pg.QueryResultRow>(what: string, sql: string, params: unknown[]): Promise<pg.QueryResult<R>> => {
    try {
      return await pool.query<R>(sql, params);
    } catch (err) {
      throw fail(what, err);
    }
  };
  const tapeRow = async (name: string): Promise<{ id: string; header: string } | undefined> =>
    (
      await query<{ id: string; header: string }>('read', 'SELECT id, header FROM tapedeck_tapes WHERE namespace = $1 AND name = $2', [
        ns,
        validateTapeName(name),
      ])
    ).rows[0];
  const notFound = async (name: string): Promise<TapedeckError> => tapeNotFound(name, loc.display, await store.names());

  /**
   * The tape's records (header first), in one query: a tape is read whole (replay holds it in memory anyway), which
   * keeps memory to the tape's size and costs one round trip, where paging by seq cost a sort per page.
   */
  async function* records(name: string): AsyncGenerator<TapeRecord> {
    const row = await tapeRow(name);
    if (row === undefined) throw await notFound(name);
    yield { line: 1, text: row.header };
    const rows = await query<{ pos: number; doc: string }>(
      'read',
      `SELECT pos, doc FROM tapedeck_exchanges WHERE tape_id = $1
       UNION ALL SELECT pos, doc FROM tapedeck_parts WHERE tape_id = $1 ORDER BY pos`,
      [row.id],
    );
    // A record's position after the header is its line, as a folder store numbers them.
    for (const r of rows.rows) yield { line: r.pos + 2, text: r.doc };
  }

  const listener = createListener(loc);

  const resolveSource: ResolveSource = {
    get store() {
      return store;
    },
    names: () => store.names(),
    async latest(kind: LatestKind) {
      const r = await query<{ name: string }>(
        'read',
        `SELECT name FROM tapedeck_tapes WHERE namespace = $1 AND ($2::text IS NULL OR mode = $2) AND name ~ '${NAME_PATTERN}'
          ORDER BY created_at DESC, name DESC LIMIT 1`,
        [ns, kind === 'any' ? null : kind],
      );
      return r.rows[0]?.name;
    },
    async withPrefix(prefix, limit) {
      const r = await query<{ name: string }>(
        'read',
        `SELECT name FROM tapedeck_tapes WHERE namespace = $1 AND name LIKE $2 ESCAPE '\\' ORDER BY name LIMIT $3`,
        [ns, `${likeEscape(prefix)}%`, limit],
      );
      return r.rows.map((x) => x.name).filter(isTapeName);
    },
  };

  const store: TapeStore = {
    kind: 'postgres',
    location: loc.display,
    where,
    openWriter(w) {
      return openPgWriter({ loc, blobs, where }, w);
    },
    importTape(tape, importOpts) {
      return importIntoPg(loc, blobs, tape, importOpts);
    },
    async has(name) {
      return (await tapeRow(name)) !== undefined;
    },
    async writing(name) {
      const key = tapeLockKey(ns, validateTapeName(name));
      try {
        return await lockHeldBy(pool, key);
      } catch (err) {
        throw fail('read', err);
      }
    },
    async header(name) {
      const row = await tapeRow(name);
      if (row === undefined) throw await notFound(name);
      return parseHeader(where(name), JSON.parse(row.header));
    },
    async load(name, readOpts) {
      const all: TapeRecord[] = [];
      for await (const r of records(name)) all.push(r);
      const parsed = parseTapeRecords(where(name), all);
      const exchanges =
        readOpts?.resolveFiles === false
          ? parsed.exchanges
          : await resolveStoredBodies(parsed.exchanges, parsed.problems, (b) => blobs.read(b), {
              above: readOpts?.inlineUpTo,
              open: (b) => blobs.stream(b, where(name)),
            });
      return { path: where(name), name: validateTapeName(name), header: parsed.header, exchanges, problems: parsed.problems };
    },
    lines: (name) => records(name),
    async names() {
      // Only names tapedeck would write: a row another writer gave a name with control characters is never offered.
      return (await query<{ name: string }>('read', 'SELECT name FROM tapedeck_tapes WHERE namespace = $1 ORDER BY name', [ns])).rows
        .map((r) => r.name)
        .filter(isTapeName);
    },
    async list(q = {}) {
      const params: unknown[] = [ns];
      const conds: string[] = ['t.namespace = $1'];
      const add = (sql: (p: string) => string, value: unknown): void => {
        params.push(value);
        conds.push(sql(`$${params.length}`));
      };
      if (q.prefix !== undefined) add((p) => `t.name LIKE ${p} ESCAPE '\\'`, `${likeEscape(q.prefix)}%`);
      if (q.after !== undefined) add((p) => `t.name > ${p}`, q.after);
      if (q.mode !== undefined) add((p) => `t.mode = ${p}`, q.mode);
      if (q.since !== undefined) add((p) => `t.created_at >= ${p}`, q.since);
      if (q.model !== undefined) add((p) => `t.id IN (SELECT e.tape_id FROM tapedeck_exchanges e WHERE e.model = ${p})`, q.model);
      if (q.tool !== undefined)
        add((p) => `t.id IN (SELECT e.tape_id FROM tapedeck_exchanges e WHERE e.tools @> ARRAY[${p}]::text[])`, q.tool);
      const limit = q.limit;
      if (limit !== undefined) params.push(limit + 1);
      const r = await query<{ name: string; header: string; stats: unknown; modified_at: Date }>(
        'list',
        `SELECT t.name, t.header, t.stats, t.modified_at FROM tapedeck_tapes t WHERE ${conds.join(' AND ')}
          ORDER BY t.name${limit !== undefined ? ` LIMIT $${params.length}` : ''}`,
        params,
      );
      const rows = limit !== undefined ? r.rows.slice(0, limit) : r.rows;
      // A row is input like a tape line (anyone with access to the database may have written it): one that is not
      // what tapedeck writes is listed as unreadable, with why, and the listing goes on.
      const tapes: TapeListEntry[] = rows.map((row) => {
        const problems: TapeProblem[] = [];
        const modifiedAt = row.modified_at.toISOString();
        if (!isTapeName(row.name))
          return { ok: false, name: row.name, error: 'not a tape name tapedeck writes: written by something else?', modifiedAt };
        const stats = rowStats(row.stats);
        if (!stats.ok) return { ok: false, name: row.name, error: stats.error, modifiedAt };
        try {
          const header: TapeHeader = parseHeader(where(row.name), JSON.parse(row.header));
          return { ok: true, name: row.name, header, stats: stats.stats, problems, modifiedAt };
        } catch (err) {
          return { ok: false, name: row.name, error: (err as Error).message, modifiedAt };
        }
      });
      return limit !== undefined && r.rows.length > limit ? { tapes, next: (rows[rows.length - 1] as { name: string }).name } : { tapes };
    },
    resolve(ref, resolveOpts) {
      return resolveRef(resolveSource, ref, resolveOpts);
    },
    async replaysOf(name) {
      const r = await query<{ name: string }>(
        'read',
        'SELECT name FROM tapedeck_tapes WHERE namespace = $1 AND replay_of = $2 ORDER BY name',
        [ns, name],
      );
      return r.rows.map((x) => x.name).filter(isTapeName);
    },
    async remove(name) {
      validateTapeName(name);
      const key = tapeLockKey(ns, name);
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw fail('delete', err);
      }
      let removed: { shas: string[] };
      try {
        // The writer's lock, held for the deletion: a tape being recorded (here or on any machine) is refused.
        const locked = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS ok', [key]);
        if (locked.rows[0]?.ok !== true) {
          const who = await lockHolderOf(client, key);
          throw new TapedeckError('TAPE_LOCKED', `cannot delete tape "${name}": it is being written by ${who}. Stop that tapedeck first`, {
            status: 409,
            details: { tape: name, store: loc.display, holder: who },
          });
        }
        try {
          const gone = await client.query<{ id: string; shas: string[] }>(
            `DELETE FROM tapedeck_tapes t WHERE t.namespace = $1 AND t.name = $2
              RETURNING t.id, ARRAY(SELECT r.sha256 FROM tapedeck_blob_refs r WHERE r.tape_id = t.id) AS shas`,
            [ns, name],
          );
          const row = gone.rows[0];
          if (row === undefined) throw await notFound(name);
          await client.query('SELECT pg_notify($1, $2)', [NOTIFY_CHANNEL, notifyPayload(ns, name)]);
          removed = row;
        } finally {
          await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]).catch(() => undefined);
        }
      } catch (err) {
        throw err instanceof TapedeckError ? err : fail('delete', err);
      } finally {
        client.release();
      }
      // With the connection back in the pool: the clean-up is calls of its own, each with its deadline.
      await blobs.collect(removed.shas).catch((err: unknown) => {
        throw fail('delete', err);
      });
      return { name, path: where(name), sideFiles: removed.shas.length > 0 };
    },
    readBlob(_name, body) {
      return blobs.read(body);
    },
    openBlob(name, body) {
      return blobs.stream(body, where(name));
    },
    blobSink(name) {
      return blobs.sink(name);
    },
    watch(name, onChange) {
      return listener.watch(notifyPayload(ns, name), onChange);
    },
    async version(name) {
      const r = await query<{ id: string; version: string }>(
        'read',
        'SELECT id, version FROM tapedeck_tapes WHERE namespace = $1 AND name = $2',
        [ns, validateTapeName(name)],
      );
      const row = r.rows[0];
      return row === undefined ? undefined : `${row.id}:${row.version}`;
    },
    async close() {
      await listener.close();
      await end();
    },
  };
  return store;
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

/** The characters of a tape name (`validateTapeName`), as a PostgreSQL regular expression: picks rows in SQL. */
const NAME_PATTERN = '^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$';

function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * LISTEN on one connection of its own for every tape this store follows; NOTIFY comes from every writer on any
 * machine. A lost connection is opened again while anything is followed (each follower is told once it is back,
 * since commits may have been missed meanwhile).
 */
function createListener(loc: PgLocation): { watch(key: string, fn: () => void): () => void; close(): Promise<void> } {
  const watchers = new Map<string, Set<() => void>>();
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const notifyAll = (): void => {
    for (const set of watchers.values()) for (const fn of set) fn();
  };
  const connect = (): Promise<void> => {
    connecting ??= (async () => {
      const c = new pg.Client(clientConfig(loc, `tapedeck listener pid ${process.pid} on ${hostname()}`));
      c.on('notification', (msg) => {
        if (msg.channel !== NOTIFY_CHANNEL || msg.payload === undefined) return;
        for (const fn of watchers.get(msg.payload) ?? []) fn();
      });
      const lost = (): void => {
        if (client !== c) return;
        client = undefined;
        connecting = undefined;
        void endWithin(c, CLOSE_GRACE_MS);
        if (!closed && watchers.size > 0) {
          retry = setTimeout(() => void connect().then(notifyAll, () => undefined), 1000);
          retry.unref();
        }
      };
      c.on('error', lost);
      c.on('end', lost);
      await c.connect();
      await bounded(c, loc.timeoutMs).query(`LISTEN ${NOTIFY_CHANNEL}`);
      client = c;
    })().catch((err: unknown) => {
      connecting = undefined;
      if (!closed && watchers.size > 0) {
        retry = setTimeout(() => void connect().then(notifyAll, () => undefined), 1000);
        retry.unref();
      }
      throw err;
    });
    return connecting;
  };

  return {
    watch(key, fn) {
      const set = watchers.get(key) ?? new Set();
      watchers.set(key, set);
      set.add(fn);
      // Listening first, then the state at subscription: no commit falls between the two.
      void connect().then(
        () => fn(),
        () => fn(),
      );
      return () => {
        set.delete(fn);
        if (set.size === 0) watchers.delete(key);
      };
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      watchers.clear();
      const c = client;
      client = undefined;
      if (c !== undefined) await endWithin(c, CLOSE_GRACE_MS);
    },
  };
}
