/**
 * How tapedeck stands in for an OAuth-protected MCP server and its authorization server on one route. A client that
 * connects to `http://127.0.0.1:8787/remote/mcp` must find, in every URL the flow shows it, tapedeck in place of the
 * real servers: the SDK clients check that the protected-resource metadata's `resource` is the URL they connected to,
 * and fetch everything else from the URLs the metadata names. So, for a route `/remote/mcp` and a client that reached
 * tapedeck as `http://127.0.0.1:8787`:
 *
 *   real                                                         the client sees
 *   the resource (`https://mcp.example.com/mcp`)                  http://127.0.0.1:8787/remote/mcp
 *   its metadata (`.../.well-known/oauth-protected-resource/mcp`)  http://127.0.0.1:8787/.well-known/oauth-protected-resource/remote/mcp
 *   the authorization server (`https://auth.example.com/t1`)      http://127.0.0.1:8787/remote/mcp/.oauth/t1
 *   anything else on its origin (`https://auth.example.com/x`)    http://127.0.0.1:8787/remote/mcp/.oauth/x
 *   its metadata (`.../.well-known/oauth-authorization-server/t1`) http://127.0.0.1:8787/.well-known/oauth-authorization-server/remote/mcp/.oauth/t1
 *
 * `toClient` maps a real URL to what the client sees, `toUpstream` back (the `resource` parameter the client sends,
 * RFC 8707), and `target` says where a request below the route goes. The well-known documents sit at the root of an
 * origin (RFC 8615), so the listener maps `/.well-known/<kind>/remote/mcp/...` onto the route first
 * (`front/well-known.ts`): below the route such a request's path is `/.well-known/<kind>/...`.
 */
import { RESOURCE_METADATA, wellKnownOf, withResourceMetadata } from '../providers/oauth.js';
import type { HeaderMap, Route } from '../tape/schema.js';
import { upstreamUrl } from '../tape/routes.js';

/** The path below a route where its authorization server's origin is mounted. */
export const OAUTH_MOUNT = '/.oauth';

/** What is known of a route's OAuth: the real URLs the client is shown tapedeck's in place of. */
export interface OAuthSite {
  route: Route;
  /** The resource the protected-resource metadata names (RFC 9728 `resource`). */
  resource?: string | undefined;
  /** Where the protected-resource metadata is (the challenge's `resource_metadata`). */
  metadataUrl?: string | undefined;
  /** The authorization server (the metadata's first of `authorization_servers`, which the SDK clients use). */
  issuer?: string | undefined;
}

/** Where a request below a route goes: the origin (as the route's upstream) and the path on it. */
export interface OAuthTarget {
  origin: string;
  path: string;
  /** What it asks for: a well-known document, or an endpoint of the authorization server. */
  kind: 'resource-metadata' | 'server-metadata' | 'server';
}

/** The origin a client reached tapedeck by (its `Host`), for the URLs tapedeck shows it. */
export function clientOrigin(headers: HeaderMap): string {
  const host = headers.host ?? headers[':authority'] ?? '127.0.0.1';
  return `http://${host}`;
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** `url` below `base` (the same, or a path under it): the rest, from its `/` (or its `?`), else undefined. */
function below(url: string, base: string): string | undefined {
  const b = base.endsWith('/') ? base.slice(0, -1) : base;
  if (url === b) return '';
  const next = url.charAt(b.length);
  return url.startsWith(b) && (next === '/' || next === '?' || next === '#') ? url.slice(b.length) : undefined;
}

/** Two URLs that name the same resource (one trailing slash aside, as the SDKs compare them). */
function sameResource(a: string, b: string): boolean {
  const trim = (s: string): string => (s.endsWith('/') ? s.slice(0, -1) : s);
  return trim(a) === trim(b);
}

/** A `Bearer` challenge as a client of route `prefix` (that reached tapedeck as `base`) must see it. */
export function clientChallenge(header: string, base: string, prefix: string): string {
  return withResourceMetadata(header, () => `${base}/.well-known/${RESOURCE_METADATA}${prefix}`);
}

export class OAuthMount {
  /** The URL of the route as the client reached it: the resource it is shown. */
  readonly clientResource: string;
  private readonly serverOrigin: string | undefined;

  constructor(
    readonly site: OAuthSite,
    /** The origin the client reached tapedeck by (`clientOrigin`). */
    readonly base: string,
  ) {
    this.clientResource = `${base}${site.route.prefix}`;
    this.serverOrigin = site.issuer === undefined ? undefined : originOf(site.issuer);
  }

  /** The route's upstream, as the resource when the metadata named none. */
  get resource(): string {
    return this.site.resource ?? this.site.route.upstream;
  }

  /** The protected-resource metadata's URL: the one the server's challenge named, else its well-known place. */
  get metadataUrl(): string {
    if (this.site.metadataUrl !== undefined) return this.site.metadataUrl;
    const u = new URL(this.resource);
    const path = u.pathname === '/' ? '' : u.pathname.replace(/\/$/, '');
    return `${u.origin}/.well-known/${RESOURCE_METADATA}${path}`;
  }

  /** A real URL as the client must see it (unchanged when it is none of the flow's). */
  toClient(url: string): string {
    const { prefix } = this.site.route;
    if (this.site.resource !== undefined && sameResource(url, this.site.resource)) return this.clientResource;
    if (url === this.metadataUrl) return `${this.base}/.well-known/${RESOURCE_METADATA}${prefix}`;
    const underRoute = below(url, this.site.route.upstream);
    if (underRoute !== undefined) return `${this.clientResource}${underRoute}`;
    if (this.serverOrigin !== undefined) {
      const rest = below(url, this.serverOrigin);
      if (rest !== undefined) {
        const known = wellKnownOf(rest.split(/[?#]/)[0] ?? '');
        if (known !== undefined && known.kind !== RESOURCE_METADATA && rest.startsWith('/.well-known/'))
          return `${this.base}/.well-known/${known.kind}${prefix}${OAUTH_MOUNT}${known.for}`;
        return `${this.clientResource}${OAUTH_MOUNT}${rest}`;
      }
    }
    return url;
  }

  /** A JSON document with every absolute URL of the flow shown as tapedeck's (the same object where nothing changed). */
  jsonToClient(value: unknown): unknown {
    return withUrls(value, (url) => this.toClient(url));
  }

  /** A `Bearer` challenge whose `resource_metadata` names tapedeck's protected-resource metadata for the route. */
  challengeToClient(header: string): string {
    return clientChallenge(header, this.base, this.site.route.prefix);
  }

  /** A URL the client was shown, as the real servers know it (unchanged when it is none of tapedeck's). */
  toUpstream(url: string): string {
    const rest = below(url, this.clientResource);
    if (rest === undefined) return url;
    if (rest === '' || rest === '/') return this.resource;
    if (this.serverOrigin !== undefined) {
      const mounted = below(rest, OAUTH_MOUNT);
      if (mounted !== undefined) return `${this.serverOrigin}${mounted}`;
    }
    return upstreamUrl(this.site.route, rest, []);
  }

  /**
   * Where a request to `path` below the route goes, when it is part of the flow: the protected-resource metadata, the
   * authorization server's metadata (`/.well-known/<kind>/.oauth/...`, mapped onto the route by the listener), or
   * anything on the authorization server's origin (`/.oauth/...`). Undefined: an ordinary request of the route.
   */
  target(path: string): OAuthTarget | undefined {
    const known = wellKnownOf(path);
    if (known !== undefined && path.startsWith('/.well-known/')) {
      if (known.kind === RESOURCE_METADATA) {
        if (known.for !== '') return undefined;
        const u = new URL(this.metadataUrl);
        return { origin: u.origin, path: u.pathname + u.search, kind: 'resource-metadata' };
      }
      const on = below(known.for, OAUTH_MOUNT);
      if (on === undefined || this.serverOrigin === undefined) return undefined;
      return { origin: this.serverOrigin, path: `/.well-known/${known.kind}${on}`, kind: 'server-metadata' };
    }
    const rest = below(path, OAUTH_MOUNT);
    if (rest === undefined || this.serverOrigin === undefined) return undefined;
    const kind = wellKnownOf(rest) === undefined ? 'server' : 'server-metadata';
    return { origin: this.serverOrigin, path: rest === '' ? '/' : rest, kind };
  }
}

/** Every absolute http(s) URL in a JSON value, mapped (the same object where nothing changed). */
function withUrls(value: unknown, map: (url: string) => string): unknown {
  if (typeof value === 'string') return /^https?:\/\//i.test(value) ? map(value) : value;
  if (Array.isArray(value)) {
    const out = value.map((v) => withUrls(v, map));
    return out.some((v, i) => v !== value[i]) ? out : value;
  }
  if (value === null || typeof value !== 'object') return value;
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value)) {
    const nv = withUrls(v, map);
    if (nv !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = nv;
  }
  return out ?? value;
}
