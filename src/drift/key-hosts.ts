/**
 * Where drift may send a key. A tape is data anyone can edit in a pull request: its upstreams, routes and paths say
 * where a call went, not where a real key may go. A key drift fills goes only to
 * - the provider's own API, over HTTPS on its default port (`https://api.openai.com` for `OPENAI_API_KEY`: the host of
 *   the provider's default route, `ProviderInfo.route`), or
 * - a route given for this run (`--route PREFIX=URL`, or the routes of a `--config FILE`), at that route's origin, or
 * - a host the user allows by name (`--allow-host HOST`, or `HOST:PORT`).
 * What is checked is the URL the call would go to, parsed, after the tape's path is joined to its upstream, so neither
 * `https://api.openai.com@other-host/` nor a path such as `.other-host/v1/...` gets a key past it. A call to any other
 * host is sent without its keys, and the preflight and the report say so.
 */
import { adapterFor } from '../providers/registry.js';
import type { ApiCredential } from '../providers/types.js';
import { upstreamUrl } from '../tape/routes.js';
import type { Exchange, Route } from '../tape/schema.js';

export interface KeyDestinations {
  /** Routes given for this run: prefix -> upstream. */
  given: ReadonlyMap<string, string>;
  /** `--allow-host`: host names (any port) or `host:port`, lower case. */
  allowed: readonly string[];
}

/** A call's destination, judged: where its keys may go (`origin`), or why none may (`refused`). */
export type KeyVerdict = { ok: true; origin: string } | { ok: false; host: string; reason: string };

/** Whether the keys of `ex`, sent on `route` (its upstream resolved), may go where the call goes. */
export function keyDestination(ex: Exchange, route: Route, way: ApiCredential | undefined, d: KeyDestinations): KeyVerdict {
  let target: URL;
  try {
    target = new URL(upstreamUrl(route, ex.request.path, ex.request.query));
  } catch {
    return { ok: false, host: route.upstream, reason: 'its URL does not parse' };
  }
  const host = target.host;
  const userinfo = target.username !== '' || target.password !== '';
  const given = d.given.get(ex.route);
  if (given !== undefined && sameOrigin(target, given)) return { ok: true, origin: target.origin };
  if (!userinfo && d.allowed.some((a) => a === host.toLowerCase() || a === target.hostname.toLowerCase()))
    return { ok: true, origin: target.origin };
  const provider = adapterFor(ex.llm?.api)?.provider;
  const own = way?.elsewhere === true ? undefined : ownHost(provider?.route?.upstream);
  if (own !== undefined && !userinfo && target.protocol === 'https:' && target.port === '' && target.hostname === own)
    return { ok: true, origin: target.origin };
  const whose = own !== undefined ? `the provider's own API (https://${own})` : 'a host the key belongs to';
  const routed = given !== undefined ? `the route given for ${ex.route}` : 'a route given for this run';
  return { ok: false, host, reason: `not ${whose} nor ${routed}` };
}

/** The host name of a provider's own API, when it is served over HTTPS. */
function ownHost(upstream: string | undefined): string | undefined {
  if (upstream === undefined) return undefined;
  try {
    const u = new URL(upstream);
    return u.protocol === 'https:' ? u.hostname : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `target` is on the origin of `upstream`, with the same credentials in its URL (none, usually). */
function sameOrigin(target: URL, upstream: string): boolean {
  try {
    const u = new URL(upstream);
    return u.origin === target.origin && u.username === target.username && u.password === target.password;
  } catch {
    return false;
  }
}

/** `--allow-host HOST`: a host name or `host:port`, nothing else (no scheme, path or credentials). */
export function parseAllowedHost(text: string): string | undefined {
  const t = text.trim().toLowerCase();
  if (!/^(?:\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/.test(t)) return undefined;
  return t;
}
