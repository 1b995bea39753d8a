/**
 * Live view: while a page has a tape open, the hub follows it through its store (`watch`: a poll of the file in a
 * folder store, LISTEN/NOTIFY in PostgreSQL, so a tape recorded on another machine is followed too). When it
 * changed, the tape is read again and every page watching it is told the new version, total and span, and fetches
 * what it shows. Changes that arrive during a read are folded into one more read, never one each; a slow read (a
 * huge tape) waits twice its own time before the next.
 */
import type { Logger } from '../log.js';
import type { OpenTapes } from './open-tapes.js';

export interface LiveUpdate {
  version: number;
  total: number;
  spanMs: number;
}

export interface LiveHub {
  /** Call `send` each time the tape changes, until the returned function is called. */
  subscribe(name: string, send: (u: LiveUpdate) => void): () => void;
  /** Stop following every tape (the server is stopping). */
  close(): void;
}

export interface LiveHubOptions {
  tapes: OpenTapes;
  log: Logger;
  /** The shortest time between two reads of one tape (ms). Default 250. */
  intervalMs?: number;
}

interface Watched {
  subscribers: Set<(u: LiveUpdate) => void>;
  stop: () => void;
  reading: boolean;
  again: boolean;
  lastVersion?: number;
  timer?: NodeJS.Timeout;
}

export function createLiveHub(opts: LiveHubOptions): LiveHub {
  const interval = opts.intervalMs ?? 250;
  const watched = new Map<string, Watched>();
  let closed = false;

  const read = async (name: string, w: Watched): Promise<void> => {
    if (w.reading) {
      w.again = true;
      return;
    }
    w.reading = true;
    let wait = interval;
    try {
      const open = await opts.tapes.open(name);
      wait = Math.max(interval, open.loadMs * 2);
      if (open.version !== w.lastVersion) {
        w.lastVersion = open.version;
        const update = { version: open.version, total: open.items.length, spanMs: open.spanMs };
        for (const send of w.subscribers) send(update);
      }
    } catch (err) {
      opts.log.warn({ tape: name, err: (err as Error).message }, 'live view: could not read the tape');
    }
    w.timer = setTimeout(() => {
      w.reading = false;
      if (w.again && watched.get(name) === w && !closed) {
        w.again = false;
        void read(name, w);
      }
    }, wait);
    w.timer.unref();
  };

  return {
    subscribe(name, send) {
      let w = watched.get(name);
      if (!w) {
        const entry: Watched = { subscribers: new Set(), stop: () => undefined, reading: false, again: false };
        watched.set(name, entry);
        // The store calls back at once and after each change: a page that read an older version catches up at once.
        entry.stop = opts.tapes.store.watch(name, () => {
          if (watched.get(name) === entry && !closed) void read(name, entry);
        });
        w = entry;
      }
      w.subscribers.add(send);
      return () => {
        const cur = watched.get(name);
        if (!cur) return;
        cur.subscribers.delete(send);
        if (cur.subscribers.size === 0) {
          cur.stop();
          clearTimeout(cur.timer);
          watched.delete(name);
        }
      };
    },
    close() {
      closed = true;
      for (const w of watched.values()) {
        w.stop();
        clearTimeout(w.timer);
      }
      watched.clear();
    },
  };
}
