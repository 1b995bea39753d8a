/**
 * The address an exchange really went to: its route's upstream joined with the path and query it was sent with
 * (the same join the proxy makes: an upstream with a path keeps it, and a request to the route itself goes to
 * that path). stdio exchanges have no URL: they get `tapedeck-stdio:SERVER`. Credentials never appear (the tape
 * redacts them, and the origin is rebuilt without user info).
 */
import { upstreamUrl } from '../tape/routes.js';
import type { Exchange } from '../tape/schema.js';

export const STDIO_SCHEME = 'tapedeck-stdio:';

export function exchangeUrl(ex: Exchange): string {
  if (ex.transport === 'stdio') return `${STDIO_SCHEME}${encodeURIComponent(ex.route.replace(/^stdio:/, ''))}`;
  let url: URL;
  try {
    url = new URL(upstreamUrl({ prefix: ex.route, upstream: ex.upstream ?? '' }, ex.request.path, ex.request.query));
  } catch {
    url = new URL(`http://upstream.invalid${ex.route}${ex.request.path}`);
  }
  url.username = '';
  url.password = '';
  return url.toString();
}

/** Host and port of an exchange's upstream (for `server.address` / `server.port`); undefined for stdio. */
export function serverOf(ex: Exchange): { address: string; port: number } | undefined {
  if (ex.transport === 'stdio' || ex.upstream === undefined) return undefined;
  try {
    const u = new URL(ex.upstream);
    const port = u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
    return { address: u.hostname.replace(/^\[|\]$/g, ''), port };
  } catch {
    return undefined;
  }
}
