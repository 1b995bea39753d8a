/**
 * Following tapes in the PostgreSQL store: one LISTEN connection per store for every tape it follows, so `watch`
 * hears each commit from any writer on any machine; kept apart from the store because its reconnecting is a concern
 * of its own.
 */
import { hostname } from 'node:os';
import pg from 'pg';
import { CLOSE_GRACE_MS, clientConfig, type PgLocation } from './connection.js';
import { bounded, endWithin } from './deadline.js';
import { NOTIFY_CHANNEL } from './pg-writer.js';

export interface PgListener {
  watch(key: string, fn: () => void): () => void;
  close(): Promise<void>;
}

/**
 * LISTEN on one connection of its own for every tape this store follows; NOTIFY comes from every writer on any
 * machine. A lost connection is opened again while anything is followed (each follower is told once it is back,
 * since commits may have been missed meanwhile).
 */
export function createListener(loc: PgLocation): PgListener {
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
