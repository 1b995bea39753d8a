/**
 * What a tape holds of the OAuth flows through its routes, worked out once when its replay starts: for each route,
 * the protected resource's challenge to a client without a token, its protected-resource metadata, the authorization
 * server's metadata documents and endpoints, and the recorded answers of each endpoint (registration, authorization,
 * token by grant type). Replay plays the servers from these shapes (`authority.ts`); nothing here is a secret (the
 * tape's tokens, codes and client secrets are markers).
 */
import {
  challengeOf,
  isTokenChallenge,
  RESOURCE_METADATA,
  resourceMetadataOf,
  serverEndpointsOf,
  SERVER_METADATA,
  OPENID_CONFIGURATION,
  wellKnownOf,
  type OAuthEndpoint,
} from '../../providers/oauth.js';
import type { OAuthSite } from '../../http/oauth-mount.js';
import { bodyText } from '../../tape/body.js';
import type { Exchange, Route } from '../../tape/schema.js';
import type { LoadedTape } from '../../tape/tape-reader.js';

/** The flows of one route. */
export interface RouteFlows {
  site: OAuthSite;
  /** The first recorded answer to a request without a token (a 401 with a Bearer challenge). */
  challenge?: Exchange;
  /** The recorded protected-resource metadata. */
  resourceMetadata?: Exchange;
  /** The authorization server's recorded documents and answers, by path on its origin (the last of each). */
  serverPaths: Map<string, Exchange>;
  /** Its endpoints' paths, by role (from its metadata). */
  endpoints: Map<OAuthEndpoint, string>;
  /** The recorded answers of each endpoint, in order (token answers by grant type). */
  answers: Map<string, Exchange[]>;
}

function originOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** The grant type a token request asked for (`authorization_code`, `refresh_token`, ...). */
export function grantOf(ex: Pick<Exchange, 'request'>): string {
  return new URLSearchParams(bodyText(ex.request.body) ?? '').get('grant_type') ?? 'unknown';
}

/** The key of an endpoint's recorded answers: its role, and for the token endpoint the grant type. */
export function answersKey(role: OAuthEndpoint, grant?: string): string {
  return role === 'token' ? `token:${grant ?? 'unknown'}` : role;
}

/** The OAuth flows of a tape, by route prefix (routes the tape saw no flow on are absent). */
export function indexFlows(tape: LoadedTape): Map<string, RouteFlows> {
  const byRoute = new Map<string, Exchange[]>();
  for (const ex of tape.exchanges) {
    if (ex.transport !== 'http' || !ex.route.startsWith('/')) continue;
    const list = byRoute.get(ex.route) ?? [];
    list.push(ex);
    byRoute.set(ex.route, list);
  }
  const out = new Map<string, RouteFlows>();
  for (const [prefix, list] of byRoute) {
    const route: Route = tape.header.routes.find((r) => r.prefix === prefix) ?? { prefix, upstream: list[0]?.upstream ?? '' };
    const flows = routeFlows(route, list);
    if (flows !== undefined) out.set(prefix, flows);
  }
  return out;
}

function routeFlows(route: Route, list: readonly Exchange[]): RouteFlows | undefined {
  const challenge = list.find((ex) => isTokenChallenge(ex));
  const resourceMetadata = list.findLast(
    (ex) => ex.request.method === 'GET' && ex.response?.status === 200 && wellKnownOf(ex.request.path)?.kind === RESOURCE_METADATA,
  );
  if (challenge === undefined && resourceMetadata === undefined) return undefined;
  const meta = resourceMetadata === undefined ? undefined : resourceMetadataOf(resourceMetadata);
  const recordedChallenge = challengeOf(challenge?.response)?.resource_metadata;
  const site: OAuthSite = {
    route,
    resource: meta?.resource,
    metadataUrl: recordedChallenge ?? (resourceMetadata ? `${resourceMetadata.upstream ?? ''}${resourceMetadata.request.path}` : undefined),
    issuer: meta?.authorizationServers[0],
  };
  const serverOrigin = originOf(site.issuer);
  const onServer = list.filter((ex) => serverOrigin !== undefined && originOf(ex.upstream) === serverOrigin);
  const serverPaths = new Map<string, Exchange>();
  for (const ex of onServer) serverPaths.set(`${ex.request.method} ${ex.request.path}`, ex);
  const metadata = onServer.findLast((ex) => {
    const kind = wellKnownOf(ex.request.path)?.kind;
    return ex.response?.status === 200 && (kind === SERVER_METADATA || kind === OPENID_CONFIGURATION);
  });
  const endpoints = new Map<OAuthEndpoint, string>();
  for (const [role, url] of metadata ? serverEndpointsOf(metadata) : []) {
    if (originOf(url) === serverOrigin) endpoints.set(role, new URL(url).pathname);
  }
  const answers = new Map<string, Exchange[]>();
  for (const ex of onServer) {
    const role = [...endpoints].find(([, path]) => path === ex.request.path)?.[0];
    if (role === undefined) continue;
    const key = answersKey(role, role === 'token' ? grantOf(ex) : undefined);
    answers.set(key, [...(answers.get(key) ?? []), ex]);
  }
  return { site, ...(challenge ? { challenge } : {}), ...(resourceMetadata ? { resourceMetadata } : {}), serverPaths, endpoints, answers };
}
