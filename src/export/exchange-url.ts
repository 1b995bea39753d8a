/**
 * The address an exchange really went to: its route's upstream joined with the path and query it was sent with
 * (the same join the proxy makes: an upstream with a path keeps it, and a request to the route itself goes to
 * that path). stdio exchanges have no URL: they get `tapedeck-stdio:SERVER`. Credentials never appear (the tape
 * redacts them, and the origin is rebuilt without user info).
 */
import type { Exchange } from '../tape/schema.js';

export const STDIO_SCHEME = 'tapedeck-stdio:';

export function exchangeUrl(ex: Exchange): string {
  if (ex.transport === 'stdio') return `${STDIO_SCHEME}${encodeURIComponent(ex.route.replace(/^stdio:/, ''))}`;
  let base: URL;
  try {
    base = new URL(ex.upstream ?? '');
  } catch {
    base = new URL(`http://upstream.invalid${ex.route}`);
  }
  const basePath = base.pathname.endsWith('/') ? base.pathname.slice(0, -1) : base.pathname;
  const path = ex.request.path === '/' && basePath !== '' ? basePath : basePath + ex.request.path;
  const query = new URLSearchParams([...base.searchParams, ...ex.request.query]).toString();
  return `${base.protocol}//${base.host}${path}${query === '' ? '' : `?${query}`}`;
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
