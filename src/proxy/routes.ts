import type { Route } from '../tape/schema.js';

export interface ResolvedRoute {
  route: Route;
  /** Path below the prefix (always starts with `/`). */
  path: string;
}

/** Longest-prefix route lookup; a prefix matches whole path segments only (`/openai` matches `/openai/v1`, not `/openaix`). */
export function createRouteTable(routes: readonly Route[]): { resolve(pathname: string): ResolvedRoute | undefined; routes: readonly Route[] } {
  const sorted = [...routes].sort((a, b) => b.prefix.length - a.prefix.length);
  return {
    routes: sorted,
    resolve(pathname) {
      for (const route of sorted) {
        if (route.prefix === '/') return { route, path: pathname };
        if (pathname === route.prefix || pathname.startsWith(route.prefix + '/')) {
          return { route, path: pathname.slice(route.prefix.length) || '/' };
        }
      }
      return undefined;
    },
  };
}

/** The upstream URL for a path below a route; an upstream with a path keeps it (`/mcp=http://h/mcp`: `/mcp` -> `http://h/mcp`). */
export function upstreamUrl(route: Route, path: string, query: readonly [string, string][]): string {
  const base = new URL(route.upstream);
  const basePath = base.pathname.endsWith('/') ? base.pathname.slice(0, -1) : base.pathname;
  // `/mcp=http://h:1/mcp`: a request to exactly `/mcp` goes to `http://h:1/mcp`, `/mcp/x` to `http://h:1/mcp/x`.
  base.pathname = path === '/' && basePath !== '' ? basePath : basePath + path;
  const qs = new URLSearchParams(base.search);
  for (const [k, v] of query) qs.append(k, v);
  const search = qs.toString();
  base.search = search === '' ? '' : `?${search}`;
  return base.toString();
}
