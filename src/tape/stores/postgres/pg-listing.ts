/**
 * Finding tapes in the PostgreSQL store by indexed queries: the filtered, paged listing, the source that answers
 * tape references (`latest`, a name's prefix) and the replays of a tape. Rows are input like tape lines: one that is
 * not what tapedeck writes is listed as unreadable, never trusted.
 */
import type { TapeHeader } from '../../schema.js';
import type { TapeListEntry, TapePage, TapeProblem, TapeQuery, TapeStore } from '../../store.js';
import { parseHeader } from '../../tape-reader.js';
import type { LatestKind, ResolveSource } from '../resolve.js';
import { tapeNames, type PgStoreContext } from './pg-context.js';
import { isTapeName, rowStats } from './rows.js';

/** The characters of a tape name (`validateTapeName`), as a PostgreSQL regular expression: picks rows in SQL. */
const NAME_PATTERN = '^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$';

interface ListRow {
  name: string;
  header: string;
  stats: unknown;
  modified_at: Date;
}

export async function listTapes(ctx: PgStoreContext, q: TapeQuery = {}): Promise<TapePage> {
  const params: unknown[] = [ctx.ns];
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
  if (q.tool !== undefined) add((p) => `t.id IN (SELECT e.tape_id FROM tapedeck_exchanges e WHERE e.tools @> ARRAY[${p}]::text[])`, q.tool);
  const limit = q.limit;
  if (limit !== undefined) params.push(limit + 1);
  const r = await ctx.query<ListRow>(
    'list',
    `SELECT t.name, t.header, t.stats, t.modified_at FROM tapedeck_tapes t WHERE ${conds.join(' AND ')}
      ORDER BY t.name${limit !== undefined ? ` LIMIT $${params.length}` : ''}`,
    params,
  );
  const rows = limit !== undefined ? r.rows.slice(0, limit) : r.rows;
  const tapes = rows.map((row) => listEntry(ctx, row));
  return limit !== undefined && r.rows.length > limit ? { tapes, next: (rows[rows.length - 1] as { name: string }).name } : { tapes };
}

/**
 * A row is input like a tape line (anyone with access to the database may have written it): one that is not what
 * tapedeck writes is listed as unreadable, with why, and the listing goes on.
 */
function listEntry(ctx: PgStoreContext, row: ListRow): TapeListEntry {
  const problems: TapeProblem[] = [];
  const modifiedAt = row.modified_at.toISOString();
  if (!isTapeName(row.name))
    return { ok: false, name: row.name, error: 'not a tape name tapedeck writes: written by something else?', modifiedAt };
  const stats = rowStats(row.stats);
  if (!stats.ok) return { ok: false, name: row.name, error: stats.error, modifiedAt };
  try {
    const header: TapeHeader = parseHeader(ctx.where(row.name), JSON.parse(row.header));
    return { ok: true, name: row.name, header, stats: stats.stats, problems, modifiedAt };
  } catch (err) {
    return { ok: false, name: row.name, error: (err as Error).message, modifiedAt };
  }
}

/** What tape references are resolved against: the latest tape and names by prefix, each one query. */
export function pgResolveSource(ctx: PgStoreContext, store: TapeStore): ResolveSource {
  return {
    store,
    names: () => tapeNames(ctx),
    async latest(kind: LatestKind) {
      const r = await ctx.query<{ name: string }>(
        'read',
        `SELECT name FROM tapedeck_tapes WHERE namespace = $1 AND ($2::text IS NULL OR mode = $2) AND name ~ '${NAME_PATTERN}'
          ORDER BY created_at DESC, name DESC LIMIT 1`,
        [ctx.ns, kind === 'any' ? null : kind],
      );
      return r.rows[0]?.name;
    },
    async withPrefix(prefix, limit) {
      const r = await ctx.query<{ name: string }>(
        'read',
        `SELECT name FROM tapedeck_tapes WHERE namespace = $1 AND name LIKE $2 ESCAPE '\\' ORDER BY name LIMIT $3`,
        [ctx.ns, `${likeEscape(prefix)}%`, limit],
      );
      return r.rows.map((x) => x.name).filter(isTapeName);
    },
  };
}

export async function replaysOf(ctx: PgStoreContext, name: string): Promise<string[]> {
  const r = await ctx.query<{ name: string }>(
    'read',
    'SELECT name FROM tapedeck_tapes WHERE namespace = $1 AND replay_of = $2 ORDER BY name',
    [ctx.ns, name],
  );
  return r.rows.map((x) => x.name).filter(isTapeName);
}

function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}
