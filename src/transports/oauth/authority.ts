/**
 * The authorization server in replay, played from the recorded shapes (`tape-flows.ts`) with the real one gone. A fresh
 * client completes the flow offline, and everything that differs every run is handled as a real server would:
 * - registration (RFC 7591): the recorded answer, with what this client asked for echoed, and a fresh value wherever
 *   the recording has a redacted secret (its client secret, its registration access token);
 * - authorization: a fresh code for this client's PKCE challenge, redirect URI and state, sent back to its redirect
 *   URI as the recorded answer was (with `iss`, RFC 9207, when the recording had it);
 * - token: the code must be one this replay issued, for the same redirect URI, and the verifier must match its
 *   challenge (S256); a refresh token must be one this replay issued; the answer is the recorded one of that grant
 *   (the Nth request of a grant gets the Nth answer, the last again once they run out), with fresh tokens where the
 *   recording has markers. What fails gets the error a real server sends (`invalid_grant`, `invalid_request`, ...).
 * Each answer says which recording it came from. The tokens are opaque: in replay the MCP route takes any well-formed
 * bearer token.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { OAuthEndpoint } from '../../providers/oauth.js';
import { bodyJson, bodyText } from '../../tape/body.js';
import type { Exchange, HeaderMap } from '../../tape/schema.js';
import { answersKey, type RouteFlows } from './tape-flows.js';

/** An answer of the authorization server, and the recording it was played from. */
export interface AuthorityAnswer {
  status: number;
  headers: HeaderMap;
  /** A JSON body, or text. */
  json?: unknown;
  text?: string;
  source?: Exchange;
  /** Why it answered so (the replay tape's `match.reason`). */
  reason: string;
  /** A refusal the real server would give (the replay tape records it as such, not as a miss). */
  refused?: boolean;
}

/** A request to the authorization server, as the responder read it. */
export interface AuthorityRequest {
  method: string;
  headers: HeaderMap;
  /** Query and form parameters, together. */
  params: URLSearchParams;
  /** A JSON body (registration). */
  json?: unknown;
}

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  scope: string | undefined;
}

const MARKER = /^\[REDACTED(?::\d+)?\]$/;

/** A fresh secret for a replay (opaque, well-formed as a bearer token). */
function fresh(kind: string): string {
  return `tapedeck-replay-${kind}-${randomBytes(16).toString('hex')}`;
}

/** The recorded shape with a fresh value for every redacted one (`[REDACTED:N]`), named by its field. */
function withFreshSecrets(value: unknown, field = 'secret'): unknown {
  if (typeof value === 'string') return MARKER.test(value) ? fresh(field.replace(/[^a-z]/gi, '').slice(0, 12) || 'secret') : value;
  if (Array.isArray(value)) return value.map((v) => withFreshSecrets(v, field));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withFreshSecrets(v, k)]));
}

const oauthError = (status: number, error: string, description: string): AuthorityAnswer => ({
  status,
  headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
  json: { error, error_description: description },
  reason: `refused as the authorization server would: ${error} (${description})`,
  refused: true,
});

function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

export class Authority {
  private readonly codes = new Map<string, IssuedCode>();
  private readonly refreshTokens = new Set<string>();
  /** How many requests of each endpoint (and grant) were answered: the Nth gets the Nth recording. */
  private readonly served = new Map<string, number>();

  constructor(
    private readonly flows: RouteFlows,
    /** The issuer as the client knows it (tapedeck's URL for the authorization server). */
    private readonly clientIssuer: () => string,
  ) {}

  /** The next recorded answer of an endpoint (and grant): the Nth request gets the Nth, the last once they run out. */
  private recorded(role: OAuthEndpoint, grant?: string): Exchange | undefined {
    const key = answersKey(role, grant);
    const list = this.flows.answers.get(key) ?? [];
    const n = this.served.get(key) ?? 0;
    this.served.set(key, n + 1);
    return list[Math.min(n, list.length - 1)];
  }

  answer(role: OAuthEndpoint, req: AuthorityRequest): AuthorityAnswer | undefined {
    if (role === 'register') return this.register(req);
    if (role === 'authorize') return this.authorize(req);
    if (role === 'token') return this.token(req);
    return undefined;
  }

  private register(req: AuthorityRequest): AuthorityAnswer {
    const source = this.recorded('register');
    const recorded = bodyJson(source?.response?.body);
    if (source === undefined || recorded === null || typeof recorded !== 'object')
      return oauthError(400, 'invalid_client_metadata', 'the tape has no client registration to replay');
    const asked = req.json !== null && typeof req.json === 'object' ? (req.json as Record<string, unknown>) : {};
    const minted = withFreshSecrets(recorded) as Record<string, unknown>;
    // What the client asked for is echoed; what the server assigns (its id, its credentials) comes from the recording.
    const json = { ...minted, ...asked };
    for (const k of ['client_id', 'client_secret', 'registration_access_token', 'client_id_issued_at', 'client_secret_expires_at'])
      if (k in minted) json[k] = minted[k];
    return {
      status: source.response?.status ?? 201,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
      json,
      source,
      reason: `client registration #${source.id} replayed for this client's metadata, with fresh credentials`,
    };
  }

  private authorize(req: AuthorityRequest): AuthorityAnswer {
    const p = req.params;
    const source = this.recorded('authorize');
    const clientId = p.get('client_id');
    const redirectUri = p.get('redirect_uri');
    if (clientId === null || redirectUri === null || !URL.canParse(redirectUri))
      return oauthError(400, 'invalid_request', 'client_id and a valid redirect_uri are required');
    const location = new URL(redirectUri);
    const recordedLocation = source?.response?.headers.location;
    const fail = (error: string, description: string): AuthorityAnswer => {
      location.searchParams.set('error', error);
      location.searchParams.set('error_description', description);
      const state = p.get('state');
      if (state !== null) location.searchParams.set('state', state);
      return { status: 302, headers: { location: location.toString() }, reason: `refused: ${error} (${description})`, refused: true };
    };
    if (p.get('response_type') !== 'code') return fail('unsupported_response_type', 'only the authorization code flow is replayed');
    const challenge = p.get('code_challenge');
    if (challenge === null || p.get('code_challenge_method') !== 'S256') return fail('invalid_request', 'PKCE with S256 is required');
    if (source === undefined || recordedLocation === undefined)
      return fail('server_error', 'the tape has no authorization answer (a redirect) to replay');
    const code = fresh('code');
    this.codes.set(code, { clientId, redirectUri, challenge, scope: p.get('scope') ?? undefined });
    location.searchParams.set('code', code);
    const state = p.get('state');
    if (state !== null) location.searchParams.set('state', state);
    if (new URL(recordedLocation, 'http://x.invalid/').searchParams.has('iss')) location.searchParams.set('iss', this.clientIssuer());
    return {
      status: source.response?.status ?? 302,
      headers: { location: location.toString(), 'cache-control': 'no-store' },
      source,
      reason: `authorization #${source.id} replayed: a fresh code for this client's PKCE challenge, sent to its redirect URI`,
    };
  }

  private token(req: AuthorityRequest): AuthorityAnswer {
    const p = req.params;
    const grant = p.get('grant_type') ?? '';
    if (grant === 'authorization_code') {
      const code = p.get('code') ?? '';
      const issued = this.codes.get(code);
      if (issued === undefined) return oauthError(400, 'invalid_grant', 'unknown or used authorization code');
      this.codes.delete(code);
      const redirect = p.get('redirect_uri');
      if (redirect !== null && redirect !== issued.redirectUri)
        return oauthError(400, 'invalid_grant', 'redirect_uri differs from the authorization request');
      const verifier = p.get('code_verifier');
      if (verifier === null || s256(verifier) !== issued.challenge)
        return oauthError(400, 'invalid_grant', 'code_verifier does not match the code challenge');
    } else if (grant === 'refresh_token') {
      if (!this.refreshTokens.has(p.get('refresh_token') ?? '')) return oauthError(400, 'invalid_grant', 'unknown refresh token');
    }
    const source = this.recorded('token', grant) ?? (grant === 'refresh_token' ? this.recorded('token', 'authorization_code') : undefined);
    const recorded = bodyJson(source?.response?.body);
    if (source === undefined || recorded === null || typeof recorded !== 'object')
      return oauthError(400, 'unsupported_grant_type', `the tape has no ${grant || 'token'} answer to replay`);
    const json = withFreshSecrets(recorded) as Record<string, unknown>;
    if (typeof json.refresh_token === 'string') this.refreshTokens.add(json.refresh_token);
    return {
      status: source.response?.status ?? 200,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
      json,
      source,
      reason: `token answer #${source.id} (${grant}) replayed with fresh tokens`,
    };
  }
}

/** A recorded answer served as it was (a document, or an endpoint the replay does not play), its body as recorded. */
export function asRecorded(ex: Exchange, reason: string): AuthorityAnswer {
  const res = ex.response;
  const headers: HeaderMap = {};
  for (const [k, v] of Object.entries(res?.headers ?? {}))
    if (!['content-length', 'transfer-encoding', 'set-cookie', 'date', 'etag', 'connection', 'keep-alive'].includes(k)) headers[k] = v;
  const json = bodyJson(res?.body);
  const out: AuthorityAnswer = { status: res?.status ?? 502, headers, source: ex, reason };
  if (json !== undefined) out.json = json;
  else {
    const text = bodyText(res?.body);
    if (text !== undefined) out.text = text;
  }
  return out;
}
