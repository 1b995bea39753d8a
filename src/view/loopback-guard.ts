/**
 * DNS-rebinding and cross-site protection for a server on loopback. A page on another site can make the browser
 * send requests to 127.0.0.1 (or to its own name, rebound to 127.0.0.1), so every request must show that it is
 * addressed to this server by name (`Host`: a loopback name or the bound address, with our port) and, when the
 * browser says where it comes from (`Origin`, `Sec-Fetch-Site`), that it comes from this server's own pages.
 * A refusal is a 403 that says which header was wrong and why.
 */
import type { MiddlewareHandler } from 'hono';

export interface LoopbackGuardOptions {
  /** The listening port (a function: with port 0 it is known only once the server listens). */
  port: () => number;
  /** The address the server is bound to, allowed as a Host name besides the loopback names. */
  boundAddress?: string;
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

export function loopbackGuard(opts: LoopbackGuardOptions): MiddlewareHandler {
  const names = new Set(LOOPBACK_NAMES);
  if (opts.boundAddress !== undefined) names.add(opts.boundAddress.includes(':') ? `[${opts.boundAddress}]` : opts.boundAddress);
  let cached: { port: number; hosts: Set<string> } | undefined;
  const allowed = (): Set<string> => {
    const port = opts.port();
    if (cached?.port !== port) cached = { port, hosts: new Set([...names].map((n) => `${n}:${port}`)) };
    return cached.hosts;
  };

  return async (c, next) => {
    const why = refusal(allowed(), c.req.header('host'), c.req.header('origin'), c.req.header('sec-fetch-site'));
    if (why !== undefined) return c.json({ error: { code: 'FORBIDDEN', message: why } }, 403);
    await next();
  };
}

/** Why a request is refused, or undefined when it is addressed to this server from its own pages. */
export function refusal(hosts: Set<string>, hostHeader?: string, origin?: string, site?: string): string | undefined {
  const host = (hostHeader ?? '').toLowerCase();
  if (!hosts.has(host))
    return (
      `Host "${host}" is not this viewer (expected ${[...hosts].join(', ')}): ` +
      'refused to protect the local tapes from DNS rebinding. Open the URL tapedeck view printed.'
    );
  if (origin !== undefined && origin !== `http://${host}`)
    return `Origin "${origin}" is not this viewer (http://${host}): cross-origin requests are refused.`;
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    return `Sec-Fetch-Site "${site}": requests from other sites are refused; open the viewer's URL directly.`;
  return undefined;
}
