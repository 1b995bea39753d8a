/**
 * OAuth as the MCP authorization spec deploys it, as the tape sees it: the protected resource's challenge
 * (`WWW-Authenticate: Bearer resource_metadata="..."`, RFC 6750 / RFC 9728), its protected-resource metadata (RFC
 * 9728), the authorization server's metadata (RFC 8414, or OpenID Connect discovery), and the server's endpoints
 * (registration RFC 7591, `/authorize` and `/token` with PKCE, RFC 7636). What an exchange of the flow is, read from
 * the exchange alone; how tapedeck stands in for the servers is `http/oauth-mount.ts` (record) and
 * `transports/oauth/` (replay).
 */
import { bodyJson } from '../tape/body.js';
import type { Exchange, HeaderMap } from '../tape/schema.js';
import { isObj } from './json.js';

/** The well-known documents of the flow (`/.well-known/<kind>`, RFC 8615). */
export const RESOURCE_METADATA = 'oauth-protected-resource';
export const SERVER_METADATA = 'oauth-authorization-server';
export const OPENID_CONFIGURATION = 'openid-configuration';
export const WELL_KNOWN_KINDS: readonly string[] = [RESOURCE_METADATA, SERVER_METADATA, OPENID_CONFIGURATION];

/** The parameters of a `Bearer` challenge (`error`, `error_description`, `scope`, `resource_metadata`, ...). */
export function bearerChallenge(header: string | undefined): Record<string, string> | undefined {
  if (header === undefined || !/^\s*bearer\b/i.test(header)) return undefined;
  const params: Record<string, string> = {};
  for (const m of header.matchAll(/([A-Za-z_][\w-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g))
    params[(m[1] as string).toLowerCase()] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] as string);
  return params;
}

/** The challenge with its `resource_metadata` URL replaced (the rest of the header as it was). */
export function withResourceMetadata(header: string, url: (recorded: string) => string): string {
  return header.replace(/(resource_metadata\s*=\s*)(?:"([^"]*)"|([^\s,]+))/i, (_m, lead: string, quoted?: string, bare?: string) => {
    return `${lead}"${url(quoted ?? bare ?? '')}"`;
  });
}

/** The response's `Bearer` challenge, when it is one (a 401, or a 403 asking for more scope). */
export function challengeOf(response: { status: number; headers: HeaderMap } | undefined): Record<string, string> | undefined {
  if (response === undefined || (response.status !== 401 && response.status !== 403)) return undefined;
  return bearerChallenge(response.headers['www-authenticate']);
}

/** A bearer token was sent (the header itself is redacted on a tape, which still says it was there). */
export function hasBearer(headers: HeaderMap): boolean {
  const auth = headers.authorization;
  return auth !== undefined && auth !== '';
}

/**
 * A request turned away for carrying no token: the protected resource's first answer to a client that has not
 * authorized yet. Replay answers such requests itself; a recording of one never answers a request that carries a token.
 */
export function isTokenChallenge(ex: Pick<Exchange, 'request' | 'response'>): boolean {
  return ex.response?.status === 401 && !hasBearer(ex.request.headers) && challengeOf(ex.response) !== undefined;
}

/**
 * An answer that is a step of the OAuth flow rather than a failure: a protected resource's challenge (naming its
 * metadata, or asking for more scope), a discovery document the server does not have (clients try several places),
 * or an answer replay's authorization server gave (its refusals are the ones a real server gives).
 */
export function isOAuthStep(ex: Pick<Exchange, 'request' | 'response' | 'match'>): boolean {
  if (ex.match?.stage === 'oauth') return true;
  const challenge = challengeOf(ex.response);
  if (challenge !== undefined && (challenge.resource_metadata !== undefined || challenge.error === 'insufficient_scope')) return true;
  return ex.response?.status === 404 && wellKnownOf(ex.request.path) !== undefined;
}

/** Which well-known document a path below an origin asks for, and the path it is for (`/.well-known/<kind><for>`). */
export function wellKnownOf(path: string): { kind: string; for: string } | undefined {
  const m = /^\/\.well-known\/([a-z-]+)(\/.*)?$/.exec(path) ?? /^(\/.*)?\/\.well-known\/(openid-configuration)$/.exec(path);
  if (m === null) return undefined;
  if (path.startsWith('/.well-known/')) {
    const kind = m[1] as string;
    return WELL_KNOWN_KINDS.includes(kind) ? { kind, for: m[2] ?? '' } : undefined;
  }
  return { kind: OPENID_CONFIGURATION, for: m[1] ?? '' };
}

/** Protected-resource metadata (RFC 9728) as the flow reads it. */
export interface ResourceMetadata {
  resource?: string;
  authorizationServers: string[];
}

export function resourceMetadataOf(ex: Pick<Exchange, 'response'>): ResourceMetadata | undefined {
  const json = bodyJson(ex.response?.body);
  if (!isObj(json)) return undefined;
  const servers = Array.isArray(json.authorization_servers) ? json.authorization_servers.filter((s) => typeof s === 'string') : [];
  return { ...(typeof json.resource === 'string' ? { resource: json.resource } : {}), authorizationServers: servers };
}

/** The endpoints of an authorization server's metadata (RFC 8414), by their metadata names. */
export const ENDPOINTS = [
  'authorization_endpoint',
  'token_endpoint',
  'registration_endpoint',
  'revocation_endpoint',
  'introspection_endpoint',
];

export type OAuthEndpoint = 'authorize' | 'token' | 'register' | 'revoke' | 'introspect';
const ROLE: Record<string, OAuthEndpoint> = {
  authorization_endpoint: 'authorize',
  token_endpoint: 'token',
  registration_endpoint: 'register',
  revocation_endpoint: 'revoke',
  introspection_endpoint: 'introspect',
};

/** The endpoints an authorization server's metadata names, by role, as absolute URLs. */
export function serverEndpointsOf(ex: Pick<Exchange, 'response'>): Map<OAuthEndpoint, string> {
  const json = bodyJson(ex.response?.body);
  const out = new Map<OAuthEndpoint, string>();
  if (!isObj(json)) return out;
  for (const name of ENDPOINTS) {
    const url = json[name];
    if (typeof url === 'string') out.set(ROLE[name] as OAuthEndpoint, url);
  }
  return out;
}

/** Parameters of a form body (`application/x-www-form-urlencoded`), or of a query. */
export function formParams(text: string): URLSearchParams {
  return new URLSearchParams(text);
}
