import type { Route } from '../tape/schema.js';

export interface ResolvedRoute {
  route: Route;
  /** Path below the prefix (always starts with `/`). */
  path: string;
}

/** Longest-prefix route lookup; a prefix matches whole path segments only (`/openai` matches `/openai/v1`, not `/openaix`). */
export function createRouteTable(routes: readonly Route[]): {
  resolve(pathname: string): ResolvedRoute | undefined;
  routes: readonly Route[];
} {
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
