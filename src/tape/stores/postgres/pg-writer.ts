/**
 * Recording into PostgreSQL with the promises of the folder store:
 * - one writer per tape across machines: the writer's own connection holds an advisory lock on the tape, so a
 *   second recorder anywhere is refused (naming the holder), and a crashed recorder's claim goes with its connection;
 * - an exchange is committed before `append` resolves (the proxy sends the client's last byte after it), so a
 *   `kill -9` of the recorder loses nothing a client received;
 * - the exchanges of one event-loop turn go in one statement, one round trip (group commit): the rows, the tape's
 *   running totals and the NOTIFY that live viewers follow;
 * - the database going away is loud, like a full disk: the first failure is reported once with the count of what is
 *   committed, and every later append rejects with it (the recorder answers 503 from then on); so is a database that
 *   stops answering (every call has a deadline, `deadline.ts`), and a stop never waits on it past its own time;
 * - a record holding U+0000 (which PostgreSQL text and jsonb cannot hold) is stored all the same (`pg-text.ts`).
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import { TapedeckError } from '../../../errors.js';
import { newTapeHeader } from '../../exchange-encoder.js';
import { createTapeWriterCore, settlesBy, type ClaimedTape, type WriterSink } from '../writer-core.js';
import { validateTapeName } from '../../paths.js';
import type { Body, Exchange } from '../../schema.js';
import { highestMarker } from '../../redaction/secrets.js';
import { addToStats, emptyStats, type TapeStats } from '../../stats.js';
import type { TapeWriter, WriterOptions } from '../../store.js';
import { parseHeader } from '../../tape-reader.js';
import { CLOSE_GRACE_MS, clientConfig, storeError, type PgLocation } from './connection.js';
import { bounded, cut, endWithin, type Db } from './deadline.js';
import type { PgBlobs } from './pg-blobs.js';
import { docField, DOC_OF_ROW, pgJson } from './pg-text.js';
import { rowStats } from './rows.js';

export const NOTIFY_CHANNEL = 'tapedeck_tapes';

/** The NOTIFY payload that names a tape. */
export function notifyPayload(namespace: string, name: string): string {
  return `${namespace}\n${name}`;
}

/** The advisory lock key of a tape: 64 bits of sha256(namespace, name), as the bigint text `pg` sends. */
export function tapeLockKey(namespace: string, name: string): string {
  return createHash('sha256').update(`tapedeck\0${namespace}\0${name}`).digest().readBigInt64BE(0).toString();
}

/** Who holds a tape's advisory lock (the application_name tapedeck writers set, where the server shows it). */
export async function lockHolderOf(db: Db, key: string): Promise<string> {
  try {
    return (await lockHeldBy(db, key)) ?? 'another tapedeck';
  } catch {
    return 'another tapedeck';
  }
}

/** Who holds a tape's advisory lock, undefined when nobody does (a failed query throws). */
export async function lockHeldBy(db: Db, key: string): Promise<string | undefined> {
  const k = BigInt(key);
  const classid = ((k >> 32n) & 0xffffffffn).toString();
  const objid = (k & 0xffffffffn).toString();
  const r = await db.query<{ application_name: string | null; client_addr: string | null; backend_start: Date | null }>(
    `SELECT a.application_name, a.client_addr::text AS client_addr, a.backend_start
       FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::oid AND l.objid = $2::oid AND l.objsubid = 1
      LIMIT 1`,
    [classid, objid],
  );
  const row = r.rows[0];
  if (row === undefined) return undefined;
  if (row.application_name?.startsWith('tapedeck') === true)
    return `${row.application_name.replace(/^tapedeck writer /, '')}${row.backend_start ? ` (since ${row.backend_start.toISOString()})` : ''}`;
  return row.client_addr ? `a connection from ${row.client_addr}` : 'another tapedeck';
}

export interface PgWriterContext {
  loc: PgLocation;
  blobs: PgBlobs;
  /** Where a tape is, for messages. */
  where(name: string): string;
}

/** An exchange ready for its row: the record, its text, its exact-match key, its position among the tape's records. */
export interface ExchangeRow {
  ex: Exchange;
  line: string;
  key: string | undefined;
  pos: number;
}

/** A continuation record (a session's `frames` or `end`): its text, the exchange it continues, its position. */
export interface PartRow {
  exchange: string;
  line: string;
  pos: number;
  /** The large bodies it refers to (session messages stored apart). */
  shas: string[];
}

export async function openPgWriter(ctx: PgWriterContext, opts: WriterOptions): Promise<TapeWriter> {
  const { loc } = ctx;
  const name = validateTapeName(opts.name);
  const where = ctx.where(name);
  const client = new pg.Client(clientConfig(loc, `tapedeck writer pid ${process.pid} on ${hostname()}`));
  // The connection can drop between commits (the server stopped) or go silent (cut, `deadline.ts`): the tape fails.
  // Not once the writer lets it go (closing cuts a connection whose server does not say goodbye).
  let letGo = false;
  // The writer core's failure latch, once it is made (a connection error before that fails the open itself).
  const core: { fail?: (err: unknown) => void } = {};
  client.on('error', (err) => {
    if (!letGo) core.fail?.(err);
  });
  try {
    await client.connect();
  } catch (err) {
    throw storeError(loc, `open tape "${name}"`, err);
  }
  const db = bounded(client, loc.timeoutMs);
  const key = tapeLockKey(loc.namespace, name);
  let opened: Opened;
  try {
    opened = await claim(db, ctx, opts, name, key);
  } catch (err) {
    await endWithin(client, CLOSE_GRACE_MS);
    throw err instanceof TapedeckError ? err : storeError(loc, `open tape "${name}"`, err);
  }
  const { tapeId, stats } = opened;
  const payload = notifyPayload(loc.namespace, name);
  let nextSeq = opened.seq;
  let nextPos = opened.pos;
  // The format the stored header takes with the next commit (a session: 2; a stream stored apart: 3), if it changes.
  let markFormatNext: number | undefined;

  // The sink of the writer core: each commit is one statement, one round trip (rows, parts, the tape's row, NOTIFY).
  const sink: WriterSink = {
    path: where,
    putBlob: (bytes, encoding) => ctx.blobs.put(name, bytes, encoding),
    async persist(records) {
      const rows: ExchangeRow[] = [];
      const parts: PartRow[] = [];
      for (const r of records) {
        nextPos = Math.max(nextPos, r.pos + 1);
        if (r.kind === 'exchange' && r.ex !== undefined) {
          rows.push({ ex: r.ex, line: r.line, key: opts.indexKey?.(r.ex), pos: r.pos });
          nextSeq = Math.max(nextSeq, r.ex.seq + 1);
        } else parts.push({ exchange: partExchange(r.line), line: r.line, pos: r.pos, shas: partShas(r.line) });
      }
      // Updated in place: a commit that fails fails the writer for good, so there is no earlier state to go back to.
      for (const r of rows) addToStats(stats, r.ex);
      const marking = markFormatNext;
      // A named statement: parsed and planned once per writer's connection, not once per commit.
      await db.query({
        name: 'tapedeck-append',
        text: APPEND,
        values: [
          tapeId,
          rowsJson(rows),
          [...new Set([...blobShas(rows), ...parts.flatMap((p) => p.shas)])],
          pgJson(JSON.stringify(stats)),
          rows.length,
          nextSeq,
          NOTIFY_CHANNEL,
          payload,
          partsJson(parts),
          nextPos,
          marking ?? null,
        ],
      });
      if (marking !== undefined && markFormatNext === marking) markFormatNext = undefined;
    },
    markFormat(format) {
      markFormatNext = format;
    },
    failure(err, stored) {
      const why = storeError(loc, 'write', err).message.replace(/^write: /, '');
      return new TapedeckError(
        'TAPE_WRITE_FAILED',
        `cannot write tape "${name}" (${where}): ${why}. It holds the ${stored} exchange(s) committed before this; nothing more will be written`,
        { status: 503, cause: err, details: { tape: name, onDisk: stored, store: loc.display } },
      );
    },
    async release({ discard, abandon, failed, until }) {
      letGo = true;
      // The store did not confirm in time: the connection is cut (the tape's lock goes with it).
      if (abandon) return cut(client);
      if (!failed) {
        const tidy = (async () => {
          if (discard) {
            await db.query('DELETE FROM tapedeck_tapes WHERE id = $1', [tapeId]);
            await db.query('SELECT pg_notify($1, $2)', [NOTIFY_CHANNEL, payload]);
          }
          await db.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
        })().catch(() => undefined); // the connection is going away: the lock goes with it
        if (!(await settlesBy(tidy, until))) return cut(client);
      }
      await endWithin(client, CLOSE_GRACE_MS);
    },
  };
  const { writer, fail } = createTapeWriterCore(opts, opened, sink);
  core.fail = fail;
  return writer;
}

/** A tape claimed for writing, with its row's id and running totals. */
interface Opened extends ClaimedTape {
  tapeId: string;
  stats: TapeStats;
}

/** Take the tape's lock on this connection, then create, replace or reopen the tape per `ifExists`. */
async function claim(client: Db, ctx: PgWriterContext, opts: WriterOptions, name: string, key: string): Promise<Opened> {
  const { loc } = ctx;
  const locked = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS ok', [key]);
  if (locked.rows[0]?.ok !== true) {
    const who = await lockHolderOf(client, key);
    throw new TapedeckError(
      'TAPE_LOCKED',
      `tape "${name}" is locked by ${who}: another tapedeck is writing it (in ${loc.display}). Stop that one first, or write another tape`,
      { status: 409, details: { tape: name, store: loc.display, holder: who } },
    );
  }
  const ifExists = opts.ifExists ?? 'fail';
  const found = await client.query<{ id: string; header: string; next_seq: number; next_pos: number; exchanges: number; stats: unknown }>(
    'SELECT id, header, next_seq, next_pos, exchanges, stats FROM tapedeck_tapes WHERE namespace = $1 AND name = $2',
    [loc.namespace, name],
  );
  const row = found.rows[0];
  if (row !== undefined && ifExists === 'fail') {
    await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
    throw new TapedeckError('TAPE_EXISTS', `tape "${name}" already exists in ${loc.display}`, {
      details: { tape: name, store: loc.display },
    });
  }
  if (row !== undefined && ifExists === 'append') {
    const header = parseHeader(ctx.where(name), JSON.parse(row.header));
    // The totals go on from what the row holds: a row another writer broke is refused, not added to.
    const stats = rowStats(row.stats);
    if (!stats.ok) {
      await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
      throw new TapedeckError('TAPE_CORRUPT', `cannot append to tape "${name}" (${ctx.where(name)}): ${stats.error}`, {
        details: { tape: name, store: loc.display },
      });
    }
    const marked = await client.query<{ doc: string }>(
      `SELECT doc FROM tapedeck_exchanges WHERE tape_id = $1 AND doc::text LIKE '%[REDACTED:%'
     UNION ALL SELECT doc FROM tapedeck_parts WHERE tape_id = $1 AND doc::text LIKE '%[REDACTED:%'`,
      [row.id],
    );
    return {
      tapeId: row.id,
      header,
      seq: row.next_seq,
      pos: row.next_pos,
      count: row.exchanges,
      stats: stats.stats,
      firstMarker: highestMarker(marked.rows.map((r) => r.doc).join('\n')) + 1,
      append: true,
    };
  }
  const header = newTapeHeader(name, opts.header, opts.redact);
  await client.query('BEGIN');
  try {
    if (row !== undefined) await client.query('DELETE FROM tapedeck_tapes WHERE id = $1', [row.id]);
    const created = await client.query<{ id: string }>(
      `INSERT INTO tapedeck_tapes (namespace, name, created_at, mode, replay_of, header, stats)
       VALUES ($1, $2, $3, $4, $5, $6::json, $7::jsonb) RETURNING id`,
      [
        loc.namespace,
        name,
        header.createdAt,
        header.mode,
        header.replayOf?.tape ?? null,
        JSON.stringify(header),
        JSON.stringify(emptyStats()),
      ],
    );
    await client.query('COMMIT');
    return {
      tapeId: (created.rows[0] as { id: string }).id,
      header,
      seq: 0,
      pos: 0,
      count: 0,
      stats: emptyStats(),
      firstMarker: 1,
      append: false,
    };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/**
 * The CTEs that insert a batch of exchange rows ($1 the tape's id, $2 `rowsJson`) and their blob references
 * ($3 `blobShas`): one statement, one round trip.
 */
export const INSERT_ROWS = `ins AS (
   INSERT INTO tapedeck_exchanges
     (tape_id, seq, pos, started_at, route, method, path, exact_key, provider, model, tool_name, tools, match_kind, doc)
   SELECT $1, r.seq, r.pos, r.started_at, r.route, r.method, r.path, r.exact_key, r.provider, r.model, r.tool_name,
          ARRAY(SELECT json_array_elements_text(r.tools)), r.match_kind, ${DOC_OF_ROW}
     FROM json_to_recordset($2::json) AS r(seq integer, pos integer, started_at timestamptz, route text, method text, path text,
          exact_key text, provider text, model text, tool_name text, tools json, match_kind text, doc json, doc64 text)
   RETURNING 1),
 refs AS (
   INSERT INTO tapedeck_blob_refs (tape_id, sha256) SELECT $1, unnest($3::text[]) ON CONFLICT DO NOTHING RETURNING 1)`;

/** The CTE that inserts a batch of continuation records ($1 the tape's id; `partsParam` holds `partsJson`). */
export function insertParts(partsParam: string): string {
  return `parts AS (
   INSERT INTO tapedeck_parts (tape_id, pos, exchange, doc)
   SELECT $1, r.pos, r.exchange, ${DOC_OF_ROW}
     FROM json_to_recordset(${partsParam}::json) AS r(pos integer, exchange text, doc json, doc64 text)
   RETURNING 1)`;
}

/** One commit: the batch's exchanges, continuation records and blob references, the tape's row, and a NOTIFY. */
const APPEND = `WITH ${INSERT_ROWS}, ${insertParts('$9')},
         upd AS (
           UPDATE tapedeck_tapes SET stats = $4::jsonb, exchanges = exchanges + $5, next_seq = GREATEST(next_seq, $6),
                  next_pos = GREATEST(next_pos, $10), modified_at = now(), version = version + 1,
                  header = CASE WHEN $11::int IS NULL THEN header ELSE regexp_replace(header::text, '"format":[0-9]+,', '"format":' || $11::int || ',')::json END
            WHERE id = $1 RETURNING version)
         SELECT (SELECT count(*) FROM ins) AS n, (SELECT count(*) FROM parts) AS p, (SELECT version FROM upd) AS version, pg_notify($7, $8)`;

/** Continuation records as one JSON array, their `doc` fields their own text. */
export function partsJson(parts: readonly PartRow[]): string {
  return `[${parts.map((p) => `{"pos":${p.pos},"exchange":${pgJson(JSON.stringify(p.exchange))},${docField(p.line)}}`).join(',')}]`;
}

/** The exchange a continuation record continues (its `exchange` field, read without parsing the record). */
export function partExchange(line: string): string {
  const m = /^\{"type":"(?:frames|end)","exchange":"([^"]+)"/.exec(line);
  if (m) return m[1] as string;
  return String((JSON.parse(line) as { exchange?: unknown }).exchange);
}

/** The large bodies a continuation record refers to (session messages stored apart). */
export function partShas(line: string): string[] {
  if (!line.includes('"kind":"file"')) return [];
  const frames = (JSON.parse(line) as { frames?: { data?: { kind?: string; sha256?: string } }[] }).frames ?? [];
  return frames.flatMap((f) => (f.data?.kind === 'file' && typeof f.data.sha256 === 'string' ? [f.data.sha256] : []));
}

/** The sha256 of every large body a batch refers to. */
export function blobShas(rows: readonly ExchangeRow[]): string[] {
  return [...new Set(rows.flatMap((r) => storedShas(r.ex)))];
}

/**
 * The batch as one JSON array whose `doc` fields are the records' own text (no second encoding; a record holding
 * U+0000 goes as base64, `pg-text.ts`).
 */
export function rowsJson(rows: readonly ExchangeRow[]): string {
  let out = '[';
  for (let i = 0; i < rows.length; i++) {
    const { ex, line, key } = rows[i] as ExchangeRow;
    const tools = [...(ex.mcp?.toolName !== undefined ? [ex.mcp.toolName] : []), ...(ex.llm?.toolCalls ?? []).map((c) => c.name)];
    const cols = {
      seq: ex.seq,
      pos: rows[i]!.pos,
      started_at: ex.startedAt,
      route: ex.route,
      method: ex.request.method,
      path: ex.request.path,
      exact_key: key ?? null,
      provider: ex.llm?.provider ?? null,
      model: ex.llm?.model ?? null,
      tool_name: ex.mcp?.toolName ?? null,
      tools,
      match_kind: ex.match?.kind ?? null,
    };
    const head = pgJson(JSON.stringify(cols));
    out += `${i > 0 ? ',' : ''}${head.slice(0, -1)},${docField(line)}}`;
  }
  return out + ']';
}

function storedShas(ex: Exchange): string[] {
  const out: string[] = [];
  const add = (b: Body | undefined): void => {
    if (b?.kind === 'file') out.push(b.sha256);
  };
  add(ex.request.body);
  add(ex.response?.body);
  add(ex.response?.eventsFile);
  for (const f of ex.websocket?.frames ?? []) add(f.data);
  return out;
}
