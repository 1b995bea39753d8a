/**
 * `startViewer`: the viewer app on 127.0.0.1 (never another address: the tapes hold prompts and answers), with
 * live updates, until `close()`.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { TapedeckError } from '../errors.js';
import type { Logger } from '../log.js';
import { createLiveHub } from './live-hub.js';
import { costFnFor, usageCostFnFor } from './model.js';
import { createOpenTapes } from './open-tapes.js';
import { storeOf } from '../tape/stores/open-store.js';
import type { TapeStore } from '../tape/store.js';
import type { Config } from '../config/config.js';
import { createViewApp } from './view-app.js';

export const VIEW_HOST = '127.0.0.1';

export interface ViewerOptions {
  /** The tapes: a store, or a tape folder (`dir`). */
  store?: TapeStore;
  dir?: string;
  /** 0 takes any free port. */
  port: number;
  /** The config's price table (`prices`): built-in prices merged with these. */
  prices?: Config['prices'];
  log: Logger;
  /** The shortest time between two reads of an open tape that changes (default 250 ms). */
  pollMs?: number;
}

export interface RunningViewer {
  /** `http://127.0.0.1:PORT/` */
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startViewer(opts: ViewerOptions): Promise<RunningViewer> {
  const store = storeOf(opts, { fallbackDir: './tapes', pollMs: opts.pollMs });
  const tapes = createOpenTapes({ store, usageCost: usageCostFnFor(opts.prices) });
  const live = createLiveHub({ tapes, log: opts.log, ...(opts.pollMs === undefined ? {} : { intervalMs: opts.pollMs }) });
  let port = opts.port;
  const costOf = costFnFor(opts.prices);
  const view = createViewApp({ tapes, costOf, log: opts.log, port: () => port, boundAddress: VIEW_HOST, live });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: view.app.fetch, port: opts.port, hostname: VIEW_HOST, overrideGlobalObjects: false }, (info: AddressInfo) => {
      port = info.port;
      resolve(s as Server);
    }) as Server;
    s.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new TapedeckError('PORT_IN_USE', `port ${opts.port} on ${VIEW_HOST} is in use`, {
              details: { port: opts.port, host: VIEW_HOST },
            })
          : err,
      ),
    );
  });
  return {
    url: `http://${VIEW_HOST}:${port}/`,
    port,
    async close() {
      live.close();
      view.closeStreams();
      // A store the viewer opened itself (from `dir`) is its own to close.
      if (opts.store === undefined) await store.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
