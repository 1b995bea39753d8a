/**
 * Every call to the database has a deadline. A server that stops answering without closing (a frozen process, a
 * network that drops packets silently, a failover that leaves the socket open) would otherwise hold a request, a
 * commit or a shutdown forever: TCP keepalive does not see it, and PostgreSQL's `statement_timeout` runs on the
 * server that is not answering. So, on tapedeck's side: while a call waits on a connection, the connection going
 * silent for longer than the store's timeout cuts it (the call fails with `STORE_SILENT`, and a writer on it fails
 * for good, as when the server is killed). Silence is what is measured, not a call's total time: a large tape that
 * keeps arriving is never cut, and an idle connection (a writer between commits, a listener) is never cut either.
 * Connecting is bounded by pg's `connectionTimeoutMillis`; closing waits for the server's goodbye a short while,
 * then cuts the connection, so a stop never waits on a server that will not answer.
 */
import type { Socket } from 'node:net';
import type pg from 'pg';

/** The error a connection is cut with when the server said nothing for too long while a call waited. */
export class StoreSilentError extends Error {
  readonly code = 'STORE_SILENT';
  constructor(readonly ms: number) {
    super(`no answer for ${ms / 1000} s`);
  }
}

/** What the store's code queries through: a pool, or one connection with its deadline. */
export interface Db {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(q: string | pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

const waiting = new WeakMap<pg.ClientBase, number>();
const watched = new WeakSet<object>();

function socketOf(client: pg.ClientBase): Socket | undefined {
  return (client as pg.Client).connection?.stream as Socket | undefined;
}

/** Mark `client` as waiting for its server until the returned function is called; silence past `ms` meanwhile cuts it. */
export function waitOn(client: pg.ClientBase, ms: number): () => void {
  const socket = socketOf(client);
  if (socket === undefined || typeof socket.setTimeout !== 'function') return () => undefined;
  const n = (waiting.get(client) ?? 0) + 1;
  waiting.set(client, n);
  if (!watched.has(socket)) {
    watched.add(socket);
    socket.on('timeout', () => {
      if ((waiting.get(client) ?? 0) > 0) socket.destroy(new StoreSilentError(ms));
    });
  }
  // (Re)started from now: the call's own write counts as activity too.
  if (n === 1) socket.setTimeout(ms);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const left = (waiting.get(client) ?? 1) - 1;
    waiting.set(client, left);
    if (left === 0) socket.setTimeout(0);
  };
}

/** One connection's queries, each with the deadline. */
export function bounded(client: pg.Client, ms: number): Db {
  return {
    async query<R extends pg.QueryResultRow>(q: string | pg.QueryConfig, values?: unknown[]) {
      const release = waitOn(client, ms);
      try {
        return await (values === undefined ? client.query<R>(q) : client.query<R>(q as string, values));
      } finally {
        release();
      }
    },
  };
}

/** End a connection: gracefully when the server says goodbye within `graceMs`, cut otherwise. */
export async function endWithin(client: pg.Client, graceMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const ended = client.end().then(
    () => true,
    () => true,
  );
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)));
  const inTime = await Promise.race([ended, late]);
  clearTimeout(timer);
  if (!inTime) socketOf(client)?.destroy();
}

/** Cut a connection now (the calls waiting on it fail): a writer stopping before its server answered. */
export function cut(client: pg.ClientBase, err?: Error): void {
  socketOf(client)?.destroy(err);
}

/**
 * Watch a pool: every client checked out is waiting on its server (a pool query, or a transaction of the store's
 * own) until released; a client that errors while checked out is dropped by the pool, never crashes the process.
 * Resolves `end` within `graceMs`, cutting what the server does not close by then.
 */
export function watchPool(pool: pg.Pool, ms: number): { end(graceMs: number): Promise<void> } {
  const clients = new Set<pg.PoolClient>();
  const releases = new WeakMap<pg.PoolClient, () => void>();
  let allGone: (() => void) | undefined;
  pool.on('connect', (client) => {
    clients.add(client);
    // A connection cut while checked out: the call on it fails; the error event itself has nowhere to go.
    client.on('error', () => undefined);
  });
  // Emitted once the connection is closed (the server said goodbye).
  pool.on('remove', (client) => {
    clients.delete(client);
    releases.get(client)?.();
    if (clients.size === 0) allGone?.();
  });
  pool.on('acquire', (client) => releases.set(client, waitOn(client, ms)));
  pool.on('release', (_err, client) => releases.get(client)?.());
  return {
    async end(graceMs) {
      let timer: NodeJS.Timeout | undefined;
      const closed = new Promise<void>((resolve) => {
        allGone = resolve;
        void pool.end().then(
          () => clients.size === 0 && resolve(),
          () => undefined,
        );
      });
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
      await Promise.race([closed, late]);
      clearTimeout(timer);
      for (const c of clients) socketOf(c)?.destroy();
    },
  };
}
