import { Hono } from 'hono';
import { isTapedeckError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Route } from '../tape/schema.js';
import { createRouteTable } from './routes.js';
import type { ProxyRequest } from './types.js';

export type ProxyHandler = (req: ProxyRequest) => Promise<Response>;

export interface ProxyAppOptions {
  routes: readonly Route[];
  handle: ProxyHandler;
  /** Offset of "now" on the tape's timeline. */
  clock: () => number;
  log: Logger;
}

/** The Hono app: one catch-all that resolves the route and hands a `ProxyRequest` to the mode's handler. */
export function createProxyApp(opts: ProxyAppOptions): Hono {
  const table = createRouteTable(opts.routes);
  const app = new Hono();

  app.all('*', async (c) => {
    const t0 = performance.now();
    const offsetMs = opts.clock();
    const url = new URL(c.req.url);
    const resolved = table.resolve(url.pathname);
    if (resolved === undefined) {
      const known = table.routes.map((r) => `${r.prefix} -> ${r.upstream}`).join(', ');
      return c.json({ error: { type: 'tapedeck_no_route', message: `tapedeck: no route for ${url.pathname}; routes: ${known || '(none)'}. Add one with --route PREFIX=URL.` } }, 404);
    }
    const headers: Record<string, string> = {};
    c.req.raw.headers.forEach((v, k) => {
      headers[k] = v;
    });
    const body = c.req.method === 'GET' || c.req.method === 'HEAD' ? Buffer.alloc(0) : Buffer.from(await c.req.arrayBuffer());
    const req: ProxyRequest = {
      route: resolved.route,
      method: c.req.method,
      path: resolved.path,
      query: [...url.searchParams.entries()],
      headers,
      body,
      raw: c.req.raw,
      startedAt: new Date(),
      offsetMs,
      t0,
    };
    return opts.handle(req);
  });

  app.onError((err, c) => {
    if (isTapedeckError(err)) {
      return c.json({ error: { type: `tapedeck_${err.code.toLowerCase()}`, message: err.message, ...err.details } }, err.status as 400);
    }
    opts.log.error({ err: err.message, stack: err.stack }, 'unhandled proxy error');
    return c.json({ error: { type: 'tapedeck_internal_error', message: `tapedeck internal error: ${err.message}` } }, 500);
  });
  return app;
}
