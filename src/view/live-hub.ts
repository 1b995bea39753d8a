/**
 * Live view: while a page has a tape open, its file is polled (size and mtime); when it changed, the tape is read
 * again and every page watching it is told the new version, total and span, and fetches what it shows. Polling,
 * not fs.watch: it behaves the same on every file system (network mounts, containers), and a stat every 250 ms
 * costs nothing. A slow read (a huge tape) stretches the interval to twice the read time.
 */
import type { Logger } from '../log.js';
import type { TapeStore } from './tape-store.js';

export interface LiveUpdate {
  version: number;
  total: number;
  spanMs: number;
}

export interface LiveHub {
  /** Call `send` each time the tape changes, until the returned function is called. */
  subscribe(name: string, send: (u: LiveUpdate) => void): () => void;
  /** Stop every poll (the server is stopping). */
  close(): void;
}

export interface LiveHubOptions {
  store: TapeStore;
  log: Logger;
  intervalMs?: number;
}

export function createLiveHub(opts: LiveHubOptions): LiveHub {
  const interval = opts.intervalMs ?? 250;
  const watched = new Map<string, { subscribers: Set<(u: LiveUpdate) => void>; timer?: NodeJS.Timeout; fp?: string }>();
  let closed = false;

  const poll = async (name: string): Promise<void> => {
    const w = watched.get(name);
    if (!w || closed) return;
    let wait = interval;
    try {
      const fp = await opts.store.fingerprint(name);
      if (fp !== undefined && fp !== w.fp) {
        w.fp = fp;
        const open = await opts.store.open(name);
        wait = Math.max(interval, open.loadMs * 2);
        const update = { version: open.version, total: open.items.length, spanMs: open.spanMs };
        for (const send of w.subscribers) send(update);
      }
    } catch (err) {
      opts.log.warn({ tape: name, err: (err as Error).message }, 'live view: could not read the tape');
    }
    if (watched.get(name) === w && !closed) {
      w.timer = setTimeout(() => void poll(name), wait);
      w.timer.unref();
    }
  };

  return {
    subscribe(name, send) {
      let w = watched.get(name);
      if (!w) {
        w = { subscribers: new Set() };
        watched.set(name, w);
        // The first poll always sends the version on disk: a page that read an older one catches up at once.
        void poll(name);
      }
      w.subscribers.add(send);
      return () => {
        const cur = watched.get(name);
        if (!cur) return;
        cur.subscribers.delete(send);
        if (cur.subscribers.size === 0) {
          clearTimeout(cur.timer);
          watched.delete(name);
        }
      };
    },
    close() {
      closed = true;
      for (const w of watched.values()) clearTimeout(w.timer);
      watched.clear();
    },
  };
}
