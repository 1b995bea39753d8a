/**
 * Connecting to the PostgreSQL store: the URL (libpq parameters such as `sslmode` honoured by `pg`, the PG*
 * environment variables too), the namespace (`?namespace=` or the option), and the pool. `json` columns come back
 * as text: the store parses and checks each record itself, the way the folder store reads lines.
 *
 * Why `pg` (node-postgres): the most used PostgreSQL client for Node, with a pool, LISTEN/NOTIFY on a client of
 * its own, Buffers as bytea, libpq-compatible connection strings and environment, and per-client type parsers; no
 * ORM and nothing else. Its `Client` gives the writer the one session its advisory lock lives on.
 */
import pg from 'pg';
import { TapedeckError } from '../../errors.js';
import { redactStoreUrl } from '../url-credentials.js';

export interface PgLocation {
  /** The URL without `namespace`, for `pg`. */
  connectionString: string;
  /** The URL fit to print (no password). */
  display: string;
  namespace: string;
}

const NAMESPACE = /^[\w.-]{1,100}$/;

export function pgLocation(url: string, namespace?: string): PgLocation {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TapedeckError('BAD_ARGS', `--store: "${redactStoreUrl(url)}" is not a URL: use postgres://USER@HOST:PORT/DB`);
  }
  const fromUrl = parsed.searchParams.get('namespace') ?? undefined;
  parsed.searchParams.delete('namespace');
  const ns = namespace ?? fromUrl ?? 'default';
  if (!NAMESPACE.test(ns))
    throw new TapedeckError('BAD_ARGS', `namespace "${ns}": use letters, digits, ".", "_" and "-" (at most 100)`, { status: 400 });
  const connectionString = parsed.toString();
  const display = `${redactStoreUrl(connectionString)}${ns === 'default' ? '' : ` (namespace ${ns})`}`;
  return { connectionString, display, namespace: ns };
}

/** `json` (114) as its text; everything else as `pg` parses it. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 114 ? (v: string) => v : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

export function clientConfig(loc: PgLocation, applicationName: string): pg.ClientConfig {
  return { connectionString: loc.connectionString, application_name: applicationName, types, connectionTimeoutMillis: 10_000 };
}

export function createPool(loc: PgLocation): pg.Pool {
  const pool = new pg.Pool({ ...clientConfig(loc, `tapedeck ${process.pid}`), max: 8, idleTimeoutMillis: 10_000 });
  // An idle client that loses its server is dropped by the pool; the next query says what happened.
  pool.on('error', () => undefined);
  return pool;
}

/** A database error as one line that names the store, never its password. */
export function storeError(loc: PgLocation, what: string, err: unknown): TapedeckError {
  if (err instanceof TapedeckError) return err;
  const e = err as { code?: string; message?: string };
  const why = e.message ?? String(err);
  return new TapedeckError('STORE_UNAVAILABLE', `${what}: the tape store ${loc.display} ${describePgError(e.code, why)}`, {
    status: 503,
    cause: err,
    details: { store: loc.display, ...(e.code !== undefined ? { errno: e.code } : {}) },
  });
}

function describePgError(code: string | undefined, message: string): string {
  if (code === 'ECONNREFUSED') return 'refused the connection (is PostgreSQL running there?)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'has a host name that does not resolve';
  if (code === '28P01' || code === '28000') return `refused the credentials (${message})`;
  if (code === '3D000') return `has no such database (${message})`;
  if (code === '42501') return `refused a privilege the store needs (${message})`;
  return `failed: ${message}`;
}
