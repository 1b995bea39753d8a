/**
 * The PostgreSQL store's schema, created on first use and migrated by version. `tapedeck_schema` holds the version
 * the database is at; each migration moves it one step, in a transaction, under an advisory lock so that several
 * tapedecks starting at once migrate once. A database at a newer version than this tapedeck knows is refused with
 * an "upgrade tapedeck" line, like a tape in a newer format.
 *
 * What is where:
 * - `tapedeck_tapes`: one row per tape and namespace: the header (as written), the running totals `stats` (what
 *   `list` prints and filters on), the count, the next seq, and a version bumped on every commit (the viewer's cache
 *   key and what LISTEN/NOTIFY announces).
 * - `tapedeck_exchanges`: one row per exchange: the record exactly as the folder store writes its line (`json`, not
 *   `jsonb`: jsonb reorders object keys, and replay serves recorded bodies byte for byte from these records), and
 *   indexed columns for what people filter on: started_at, route, method, path, the exact-match key (sha256),
 *   provider, model, tool names, match kind. `doc::jsonb` works in ad-hoc queries.
 * - `tapedeck_parts`: the continuation records of exchanges that grow while open (a WebSocket session's `frames`
 *   and `end` records). Every record of a tape, exchange or part, has a position `pos` in the order it was written,
 *   so a tape reads back (and `pull` writes it) line for line as a folder store holds it.
 * - `tapedeck_blobs` + `tapedeck_blob_chunks`: large bodies by sha256, in 1 MiB chunks (written as they stream),
 *   shared by every tape that holds the same bytes; `tapedeck_blob_refs` says which tape holds which, so removing
 *   the last tape that refers to a blob removes the blob.
 */
import type pg from 'pg';
import { TapedeckError } from '../../../errors.js';
import { VERSION } from '../../../version.js';

export const SCHEMA_VERSION = 1;

/** Migration N takes the database from version N-1 to N. */
const MIGRATIONS: Record<number, string[]> = {
  1: [
    `CREATE TABLE tapedeck_tapes (
      id bigserial PRIMARY KEY,
      namespace text NOT NULL,
      name text COLLATE "C" NOT NULL,
      created_at timestamptz NOT NULL,
      mode text NOT NULL,
      replay_of text,
      header json NOT NULL,
      stats jsonb NOT NULL,
      exchanges integer NOT NULL DEFAULT 0,
      next_seq integer NOT NULL DEFAULT 0,
      next_pos integer NOT NULL DEFAULT 0,
      modified_at timestamptz NOT NULL DEFAULT now(),
      version bigint NOT NULL DEFAULT 0,
      UNIQUE (namespace, name)
    )`,
    `CREATE INDEX tapedeck_tapes_created ON tapedeck_tapes (namespace, created_at DESC, name DESC)`,
    `CREATE INDEX tapedeck_tapes_replay_of ON tapedeck_tapes (namespace, replay_of) WHERE replay_of IS NOT NULL`,
    `CREATE TABLE tapedeck_exchanges (
      tape_id bigint NOT NULL REFERENCES tapedeck_tapes (id) ON DELETE CASCADE,
      seq integer NOT NULL,
      pos integer NOT NULL,
      started_at timestamptz,
      route text NOT NULL,
      method text NOT NULL,
      path text NOT NULL,
      exact_key text,
      provider text,
      model text,
      tool_name text,
      tools text[] NOT NULL DEFAULT '{}',
      match_kind text,
      doc json NOT NULL,
      PRIMARY KEY (tape_id, seq)
    )`,
    `CREATE INDEX tapedeck_exchanges_started ON tapedeck_exchanges (started_at)`,
    `CREATE INDEX tapedeck_exchanges_model ON tapedeck_exchanges (model, tape_id) WHERE model IS NOT NULL`,
    `CREATE INDEX tapedeck_exchanges_provider ON tapedeck_exchanges (provider, tape_id) WHERE provider IS NOT NULL`,
    `CREATE INDEX tapedeck_exchanges_tools ON tapedeck_exchanges USING gin (tools)`,
    `CREATE INDEX tapedeck_exchanges_tool ON tapedeck_exchanges (tool_name, tape_id) WHERE tool_name IS NOT NULL`,
    `CREATE INDEX tapedeck_exchanges_key ON tapedeck_exchanges (exact_key) WHERE exact_key IS NOT NULL`,
    `CREATE INDEX tapedeck_exchanges_route ON tapedeck_exchanges (route, method, path)`,
    `CREATE INDEX tapedeck_exchanges_match ON tapedeck_exchanges (match_kind, tape_id) WHERE match_kind IS NOT NULL`,
    `CREATE TABLE tapedeck_parts (
      tape_id bigint NOT NULL REFERENCES tapedeck_tapes (id) ON DELETE CASCADE,
      pos integer NOT NULL,
      exchange text NOT NULL,
      doc json NOT NULL,
      PRIMARY KEY (tape_id, pos)
    )`,
    `CREATE TABLE tapedeck_blobs (
      sha256 text PRIMARY KEY,
      bytes bigint NOT NULL,
      chunks integer NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE TABLE tapedeck_blob_chunks (
      blob text NOT NULL,
      n integer NOT NULL,
      data bytea NOT NULL,
      PRIMARY KEY (blob, n)
    )`,
    `CREATE TABLE tapedeck_blob_refs (
      tape_id bigint NOT NULL REFERENCES tapedeck_tapes (id) ON DELETE CASCADE,
      sha256 text NOT NULL,
      PRIMARY KEY (tape_id, sha256)
    )`,
    `CREATE INDEX tapedeck_blob_refs_sha ON tapedeck_blob_refs (sha256)`,
  ],
};

/** Any advisory lock key tapedeck takes for its schema work (tape locks use keys derived from names). */
const MIGRATION_LOCK = 7_390_417_233_601;

/** Bring the database to `SCHEMA_VERSION` (creating everything on first use); refuse a newer one. */
export async function migrate(client: pg.ClientBase, display: string): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS tapedeck_schema (version integer NOT NULL, migrated_at timestamptz NOT NULL DEFAULT now())',
    );
    const found = await client.query<{ version: number }>('SELECT max(version) AS version FROM tapedeck_schema');
    const at = found.rows[0]?.version ?? 0;
    if (at > SCHEMA_VERSION)
      throw new TapedeckError(
        'STORE_SCHEMA_UNSUPPORTED',
        `the tape store ${display} is at schema version ${at}, written by a newer tapedeck; this tapedeck (${VERSION}) knows ` +
          `version ${SCHEMA_VERSION}: upgrade tapedeck`,
        { details: { schema: at, knows: SCHEMA_VERSION } },
      );
    for (let v = at + 1; v <= SCHEMA_VERSION; v++) {
      for (const sql of MIGRATIONS[v] ?? []) await client.query(sql);
      await client.query('INSERT INTO tapedeck_schema (version) VALUES ($1)', [v]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
