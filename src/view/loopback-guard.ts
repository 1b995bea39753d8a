/**
 * DNS-rebinding and cross-site protection for the viewer, a server on loopback: the shared check (`host-guard.ts`)
 * with the viewer's port in `Host` and its own origin in `Origin` / `Sec-Fetch-Site`.
 */
import type { MiddlewareHandler } from 'hono';
import { hostRefusal } from '../host-guard.js';
import { ownHosts } from '../own-hosts.js';
import { errorResponse, httpError } from '../providers/errors.js';

export interface LoopbackGuardOptions {
  /** The listening port (a function: with port 0 it is known only once the server listens). */
  port: () => number;
  /** The address the server is bound to, allowed as a Host name besides the loopback names. */
  boundAddress?: string;
}

export function loopbackGuard(opts: LoopbackGuardOptions): MiddlewareHandler {
  const own = ownHosts({ bound: opts.boundAddress });
  return async (c, next) => {
    const refused = hostRefusal(
      { host: c.req.header('host'), origin: c.req.header('origin'), 'sec-fetch-site': c.req.header('sec-fetch-site') },
      { own, who: 'this viewer', port: opts.port(), sameOrigin: true },
    );
    if (refused !== undefined) return errorResponse(httpError(refused));
    await next();
  };
}
