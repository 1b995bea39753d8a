/** Where a route sends a request: the one join of a route's upstream with a path and query, for the proxy and for exports. */
import type { Route } from './schema.js';

/** An upstream base split once: origin, path without a trailing slash, and its own query. */
interface UpstreamBase {
  origin: string;
  path: string;
  search: string;
}
const bases = new Map<string, UpstreamBase>();

function upstreamBase(upstream: string): UpstreamBase {
  let base = bases.get(upstream);
  if (base === undefined) {
    const u = new URL(upstream);
    const auth = u.username === '' && u.password === '' ? '' : `${u.username}${u.password === '' ? '' : `:${u.password}`}@`;
    base = {
      origin: `${u.protocol}//${auth}${u.host}`,
      path: u.pathname.endsWith('/') ? u.pathname.slice(0, -1) : u.pathname,
      search: u.search.slice(1),
    };
    if (bases.size < 1024) bases.set(upstream, base);
  }
  return base;
}

/**
 * The upstream URL for a path below a route; an upstream with a path keeps it (`/mcp=http://h/mcp`: `/mcp` -> `http://h/mcp`).
 * `rawQuery` is the query exactly as the client sent it (forwarded untouched, so signed or oddly encoded queries
 * survive); without it the `query` pairs are encoded.
 */
export function upstreamUrl(route: Route, path: string, query: readonly [string, string][], rawQuery?: string): string {
  const base = upstreamBase(route.upstream);
  // `/mcp=http://h:1/mcp`: a request to exactly `/mcp` goes to `http://h:1/mcp`, `/mcp/x` to `http://h:1/mcp/x`.
  const fullPath = path === '/' && base.path !== '' ? base.path : base.path + path;
  const own = rawQuery ?? (query.length === 0 ? '' : new URLSearchParams(query as [string, string][]).toString());
  const search = base.search === '' ? own : own === '' ? base.search : `${base.search}&${own}`;
  return base.origin + fullPath + (search === '' ? '' : `?${search}`);
}
