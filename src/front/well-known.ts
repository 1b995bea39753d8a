/**
 * The well-known documents of OAuth sit at the root of an origin, with the path they are for after the kind (RFC 8615,
 * RFC 9728, RFC 8414): a client of `http://127.0.0.1:8787/remote/mcp` asks for
 * `/.well-known/oauth-protected-resource/remote/mcp`, and for its authorization server (shown as
 * `/remote/mcp/.oauth/...`) `/.well-known/oauth-authorization-server/remote/mcp/.oauth/...`. Such a path belongs to the
 * route it names: below it, the request's path is `/.well-known/<kind>` followed by the rest
 * (`http/oauth-mount.ts` says where it goes).
 */
import { WELL_KNOWN_KINDS } from '../providers/oauth.js';
import type { createRouteTable, ResolvedRoute } from './routes.js';

const WELL_KNOWN = /^\/\.well-known\/([a-z-]+)(\/.+)$/;

/** The route a root well-known path names, with its path below the route; undefined for any other path. */
export function wellKnownRoute(pathname: string, table: ReturnType<typeof createRouteTable>): ResolvedRoute | undefined {
  if (!pathname.startsWith('/.well-known/')) return undefined;
  const m = WELL_KNOWN.exec(pathname);
  if (m === null || !WELL_KNOWN_KINDS.includes(m[1] as string)) return undefined;
  const named = table.resolve(m[2] as string);
  if (named === undefined || named.route.prefix === '/') return undefined;
  return { route: named.route, path: `/.well-known/${m[1] as string}${named.path === '/' ? '' : named.path}` };
}
