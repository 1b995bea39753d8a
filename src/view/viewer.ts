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
import type { CostFn } from './model.js';
import { createTapeStore } from './tape-store.js';
import { createViewApp } from './view-app.js';

export const VIEW_HOST = '127.0.0.1';

export interface ViewerOptions {
  dir: string;
  /** 0 takes any free port. */
  port: number;
  costOf: CostFn;
  log: Logger;
  /** How often an open tape's file is checked for new exchanges (default 250 ms). */
  pollMs?: number;
}

export interface RunningViewer {
  /** `http://127.0.0.1:PORT/` */
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startViewer(opts: ViewerOptions): Promise<RunningViewer> {
  const store = createTapeStore({ dir: opts.dir, costOf: opts.costOf });
  const live = createLiveHub({ store, log: opts.log, ...(opts.pollMs === undefined ? {} : { intervalMs: opts.pollMs }) });
  let port = opts.port;
  const view = createViewApp({ store, costOf: opts.costOf, log: opts.log, port: () => port, boundAddress: VIEW_HOST, live });
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
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
