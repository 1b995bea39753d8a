/**
 * OAuth in replay: with the MCP server and its authorization server both gone, tapedeck is both, from what the tape
 * holds (`tape-flows.ts`), on the URLs it showed while recording (`http/oauth-mount.ts`). Asked before the MCP
 * responder, it answers:
 * - a request to a protected route without a well-formed bearer token: the recorded challenge (401, its
 *   `resource_metadata` naming tapedeck's metadata for the route). A request with one passes on: in replay any
 *   well-formed token is accepted, and what the recording answered a token (a 403 asking for more scope, a 401 for an
 *   expired one) is replayed in order by the MCP replay;
 * - the protected-resource metadata and the authorization server's metadata documents, as recorded, their URLs
 *   tapedeck's;
 * - registration, authorization and token requests, as the authorization server would (`authority.ts`).
 * Each answer goes on the replay tape with where it came from.
 */
import type { OAuthEndpoint } from '../../providers/oauth.js';
import { parseJson } from '../../tape/json-depth.js';
import type { HeaderMap, MatchInfo } from '../../tape/schema.js';
import type { LoadedTape } from '../../tape/tape-reader.js';
import { matchHeaders } from '../../http/headers.js';
import { clientOrigin, OAuthMount, type OAuthTarget } from '../../http/oauth-mount.js';
import type { ProxyRequest, ReplayResponder, ResponderDecision } from '../../http/types.js';
import { asRecorded, Authority, type AuthorityAnswer, type AuthorityRequest } from './authority.js';
import { indexFlows, type RouteFlows } from './tape-flows.js';

/** A bearer token as RFC 6750 writes it (`Bearer <token68>`): any such token is accepted in replay. */
const BEARER = /^Bearer +[A-Za-z0-9\-._~+/]+=*$/i;

/** One route's flows in one replay, and the authorization server played for it. */
interface RouteReplay {
  flows: RouteFlows;
  authority: Authority;
  /** The origin the latest client reached tapedeck by (the issuer the authority names). */
  base: string;
}

export function createOAuthResponder(): ReplayResponder {
  // One per replay (the tape it replays), made on its first request.
  const replays = new WeakMap<LoadedTape, Map<string, RouteReplay>>();
  const routesOf = (tape: LoadedTape): Map<string, RouteReplay> => {
    let routes = replays.get(tape);
    if (routes === undefined) {
      routes = new Map();
      for (const [prefix, flows] of indexFlows(tape)) {
        const r: RouteReplay = { flows, base: '', authority: undefined as unknown as Authority };
        r.authority = new Authority(flows, () => new OAuthMount(flows.site, r.base).toClient(flows.site.issuer ?? ''));
        routes.set(prefix, r);
      }
      replays.set(tape, routes);
    }
    return routes;
  };

  return {
    name: 'oauth',
    decide(req, ctx) {
      // A forward proxy's route is an origin: the client talks to the real URLs, nothing is stood in for.
      if (!req.route.prefix.startsWith('/')) return Promise.resolve(undefined);
      const r = routesOf(ctx.tape).get(req.route.prefix);
      if (r === undefined) return Promise.resolve(undefined);
      r.base = clientOrigin(req.headers);
      const mount = new OAuthMount(r.flows.site, r.base);
      const target = mount.target(req.path);
      let answer: AuthorityAnswer;
      if (target !== undefined) answer = flowAnswer(r, target, req);
      else if (r.flows.challenge !== undefined && !BEARER.test(req.headers.authorization ?? ''))
        answer = asRecorded(r.flows.challenge, 'no bearer token: the protected resource answers with its recorded challenge');
      else return Promise.resolve(undefined);
      return Promise.resolve(decided(shownToClient(answer, mount)));
    },
  };
}

/** The answer to a request of the flow: a recorded document, or the authorization server's answer. */
function flowAnswer(r: RouteReplay, target: OAuthTarget, req: ProxyRequest): AuthorityAnswer {
  const { flows } = r;
  if (target.kind === 'resource-metadata')
    return flows.resourceMetadata ? asRecorded(flows.resourceMetadata, 'the recorded protected-resource metadata') : notRecorded(target);
  const recorded = flows.serverPaths.get(`${req.method} ${target.path.split('?')[0] ?? ''}`);
  if (target.kind === 'server-metadata')
    return recorded ? asRecorded(recorded, "the authorization server's recorded metadata") : notRecorded(target);
  const role = [...flows.endpoints].find(([, path]) => path === target.path.split('?')[0])?.[0];
  const played = role === undefined ? undefined : r.authority.answer(role, authorityRequest(req));
  if (played !== undefined) return played;
  return recorded
    ? asRecorded(recorded, `recorded answer of the authorization server's ${role ?? target.path}`)
    : notRecorded(target, role);
}

function notRecorded(target: OAuthTarget, role?: OAuthEndpoint): AuthorityAnswer {
  return {
    status: 404,
    headers: { 'content-type': 'application/json' },
    json: { error: 'not_found', error_description: `tapedeck: the tape has no recording of ${role ?? target.path} on this server` },
    reason: `the tape has no recording of ${target.path} on ${target.kind === 'resource-metadata' ? 'the protected resource' : 'the authorization server'}`,
    refused: true,
  };
}

/** The request's parameters (query and form) and JSON body, as the authorization server reads them. */
function authorityRequest(req: ProxyRequest): AuthorityRequest {
  const params = new URLSearchParams(req.query);
  const type = req.headers['content-type'] ?? '';
  const text = req.body.toString('utf8');
  if (type.startsWith('application/x-www-form-urlencoded')) for (const [k, v] of new URLSearchParams(text)) params.append(k, v);
  const out: AuthorityRequest = { method: req.method, headers: req.headers, params };
  if (type.includes('json') && text !== '') {
    try {
      out.json = parseJson(text);
    } catch {
      // not JSON: the server reads what it can
    }
  }
  return out;
}

/** An answer with the flow's URLs shown as tapedeck's: JSON documents, a redirect, a challenge. */
function shownToClient(a: AuthorityAnswer, mount: OAuthMount): AuthorityAnswer {
  const headers = { ...a.headers };
  if (headers.location !== undefined) headers.location = mount.toClient(headers.location);
  if (headers['www-authenticate'] !== undefined) headers['www-authenticate'] = mount.challengeToClient(headers['www-authenticate']);
  return { ...a, headers, ...(a.json !== undefined ? { json: mount.jsonToClient(a.json) } : {}) };
}

/** The answer as a decision: served and recorded by the engine, with where it came from. */
function decided(a: AuthorityAnswer): ResponderDecision {
  const match: MatchInfo = {
    kind: a.source === undefined && a.refused !== true ? 'miss' : 'exact',
    stage: 'oauth',
    reason: a.reason,
    ...(a.source ? { source: a.source.id } : {}),
  };
  const headers: HeaderMap = { ...a.headers, ...matchHeaders(match) };
  if (a.json !== undefined) return { answer: { status: a.status, headers, json: a.json }, match, reason: a.reason };
  const text = a.text ?? '';
  return { answer: { status: a.status, headers, ...(text !== '' ? { body: text } : {}) }, match, reason: a.reason };
}
