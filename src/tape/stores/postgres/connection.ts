/**
 * Connecting to the PostgreSQL store: the URL (libpq parameters such as `sslmode` honoured by `pg`, the PG*
 * environment variables too), tapedeck's own parameters (`?namespace=`, `?timeout=`, or the options), and the pool.
 * `json` columns come back as text: the store parses and checks each record itself, the way the folder store reads
 * lines.
 *
 * A store URL is read once, by pg's own parser (`pg-connection-string`): tapedeck accepts exactly what the driver
 * connects with, and hands the driver the parsed settings. It is printed only as tapedeck rebuilds it from them
 * (the password and any secret parameter as `***`); one the parser refuses is refused without being printed, since
 * what cannot be parsed cannot be told apart from its password.
 *
 * Why `pg` (node-postgres): the most used PostgreSQL client for Node, with a pool, LISTEN/NOTIFY on a client of
 * its own, Buffers as bytea, libpq-compatible connection strings and environment, and per-client type parsers; no
 * ORM and nothing else. Its `Client` gives the writer the one session its advisory lock lives on.
 */
import pg from 'pg';
import { parse as parseConnectionString, toClientConfig, type ConnectionOptions } from 'pg-connection-string';
import { TapedeckError } from '../../../errors.js';
import { watchPool } from './deadline.js';

export interface PgLocation {
  /** The connection settings for `pg`, as its parser read them (tapedeck's own parameters taken out). */
  config: pg.ClientConfig;
  /** The store fit to print (no password, no secret parameter). */
  display: string;
  namespace: string;
  /** Silence from the server this long while a call waits cuts the connection (`deadline.ts`); connecting too. */
  timeoutMs: number;
}

export interface PgLocationOptions {
  /** Over the URL's `?namespace=`. Default `default`. */
  namespace?: string | undefined;
  /** Over the URL's `?timeout=` (seconds). Default {@link DEFAULT_TIMEOUT_MS}. */
  timeoutMs?: number | undefined;
}

/** How long the database may stay silent while a call waits for it (and how long connecting may take). */
export const DEFAULT_TIMEOUT_MS = 10_000;

const NAMESPACE = /^[\w.-]{1,100}$/;
/** Parameters tapedeck reads and the driver never sees. */
const OWN_PARAMS = ['namespace', 'timeout'];
/** Fields the parser fills from the URL's parts (printed as parts, not parameters). */
const URL_PARTS = new Set(['user', 'password', 'host', 'port', 'database', 'client_encoding']);
/** Parameters whose values are never printed (`password`, `sslpassword`, ...). */
const SECRET_PARAM = /pass|secret|token|credential/i;

export function pgLocation(url: string, opts: PgLocationOptions = {}): PgLocation {
  let parsed: ConnectionOptions;
  let config: pg.ClientConfig;
  // The parser reads anything else as a URL relative to a dummy host (a keyword/value string would become a database name).
  if (!/^postgres(?:ql)?:\/\//i.test(url)) throw unreadable(url, undefined);
  try {
    parsed = parseConnectionString(url);
    config = toClientConfig(parsed) as pg.ClientConfig;
  } catch (err) {
    throw unreadable(url, err);
  }
  const fromUrl = typeof parsed.namespace === 'string' ? parsed.namespace : undefined;
  const ns = opts.namespace ?? fromUrl ?? 'default';
  if (!NAMESPACE.test(ns))
    throw new TapedeckError('BAD_ARGS', `namespace ${JSON.stringify(ns)}: use letters, digits, ".", "_" and "-" (at most 100)`, {
      status: 400,
    });
  const timeoutMs = opts.timeoutMs ?? timeoutOf(parsed.timeout);
  for (const p of OWN_PARAMS) delete (config as Record<string, unknown>)[p];
  const display = `${displayOf(parsed)}${ns === 'default' ? '' : ` (namespace ${ns})`}`;
  return { config, display, namespace: ns, timeoutMs };
}

/** A URL the driver's parser refuses, as one line that does not quote it. */
function unreadable(url: string, err: unknown): TapedeckError {
  const e = (err ?? {}) as NodeJS.ErrnoException;
  // A certificate or key file named by the URL (sslrootcert=...): the path is no secret.
  if (typeof e.path === 'string' && e.code !== undefined)
    return new TapedeckError('BAD_ARGS', `the tape store URL names a file that cannot be read: ${e.path} (${e.code})`);
  const why = /^\s*[a-z_]+\s*=/i.test(url)
    ? 'is a keyword/value connection string (host=... dbname=...): tapedeck takes a URL, postgres://USER:PASSWORD@HOST:PORT/DB'
    : 'cannot be read as a PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DB): percent-encode # / ? @ : and spaces in the ' +
      'user name and password (# as %23, / as %2F, ? as %3F, @ as %40, : as %3A)';
  return new TapedeckError('BAD_ARGS', `the tape store URL ${why}; it is not printed, as it may hold a password`);
}

function timeoutOf(value: unknown): number {
  if (value === undefined) return DEFAULT_TIMEOUT_MS;
  const s = typeof value === 'string' && /^\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
  if (!(s > 0 && s <= 3600))
    throw new TapedeckError('BAD_ARGS', 'timeout= in the tape store URL takes seconds, more than 0 and at most 3600 (e.g. timeout=10)');
  return s * 1000;
}

/** The store as printed: rebuilt from what the parser read, never the text given. */
function displayOf(p: ConnectionOptions): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(p)) {
    if (URL_PARTS.has(k) || OWN_PARAMS.includes(k) || v === undefined || v === null) continue;
    // `ssl` as the parser derives it (an object holding certificate contents) is not a parameter anyone typed.
    if (typeof v === 'object') continue;
    params.set(k, SECRET_PARAM.test(k) ? '***' : String(v));
  }
  const user = p.user ? encodeURIComponent(p.user) : '';
  const auth = user || p.password ? `${user}${p.password ? ':***' : ''}@` : '';
  const host = p.host ?? '';
  // A socket folder is a parameter, as libpq writes it; an IPv6 address goes in brackets.
  if (host.includes('/')) params.set('host', host);
  const hostPart = host.includes('/') ? '' : host.includes(':') ? `[${encodeURI(host)}]` : encodeURI(host);
  const port = p.port ? `:${encodeURIComponent(p.port)}` : '';
  const query = params.toString();
  return `postgres://${auth}${hostPart}${port}/${encodeURIComponent(p.database ?? '')}${query ? `?${query}` : ''}`;
}

/** `json` (114) as its text; everything else as `pg` parses it. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 114 ? (v: string) => v : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

export function clientConfig(loc: PgLocation, applicationName: string): pg.ClientConfig {
  return { ...loc.config, application_name: applicationName, types, connectionTimeoutMillis: loc.timeoutMs };
}

/** How long closing waits for the server's goodbye before cutting a connection. */
export const CLOSE_GRACE_MS = 1000;

export interface PgPool {
  pool: pg.Pool;
  /** Close every connection: within {@link CLOSE_GRACE_MS}, whatever the server does. */
  end(): Promise<void>;
}

export function createPool(loc: PgLocation): PgPool {
  const pool = new pg.Pool({ ...clientConfig(loc, `tapedeck ${process.pid}`), max: 8, idleTimeoutMillis: 10_000 });
  // An idle client that loses its server is dropped by the pool; the next query says what happened.
  pool.on('error', () => undefined);
  const watch = watchPool(pool, loc.timeoutMs);
  return { pool, end: () => watch.end(Math.min(CLOSE_GRACE_MS, loc.timeoutMs)) };
}

/** A database error as one line that names the store, never its password. */
export function storeError(loc: PgLocation, what: string, err: unknown): TapedeckError {
  if (err instanceof TapedeckError) return err;
  const e = err as { code?: string; message?: string };
  const why = e.message ?? String(err);
  return new TapedeckError('STORE_UNAVAILABLE', `${what}: the tape store ${loc.display} ${describePgError(e.code, why, loc)}`, {
    status: 503,
    cause: err,
    details: { store: loc.display, ...(e.code !== undefined ? { errno: e.code } : {}) },
  });
}

function describePgError(code: string | undefined, message: string, loc: PgLocation): string {
  if (code === 'ECONNREFUSED') return 'refused the connection (is PostgreSQL running there?)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'has a host name that does not resolve';
  if (code === '28P01' || code === '28000') return `refused the credentials (${message})`;
  if (code === '3D000') return `has no such database (${message})`;
  if (code === '42501') return `refused a privilege the store needs (${message})`;
  if (code === 'STORE_SILENT' || message === 'timeout expired' || message === 'Connection terminated due to connection timeout')
    return `did not answer for ${loc.timeoutMs / 1000} s, and the connection was cut (a server that is only slow: raise timeout=S in the store URL)`;
  if (code === 'STORE_STOPPED') return message;
  return `failed: ${message}`;
}
