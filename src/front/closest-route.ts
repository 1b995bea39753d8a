/**
 * What a request that matched no route was most likely meant for, so the no-route error can say "did you mean ...".
 * Three cases, tried in order: an LLM API path sent without its prefix (`/v1/chat/completions` -> `/openai/v1/...`),
 * a path that is the start of a route or has a route's segments in another order (`/mcp` or `/mcp/everything` for the
 * route `/everything/mcp`: MCP clients such as the MCP Inspector replace a path that does not end in `/mcp` with
 * `/mcp`), and a misspelt prefix (edit distance). The no-route error itself, which names it and how to add a route,
 * is made here too.
 */
import { detectLlmApi } from '../providers/detect.js';
import { providerInfo } from '../providers/registry.js';
import { editDistance } from '../edit-distance.js';
import { TapedeckError } from '../errors.js';
import type { Route } from '../tape/schema.js';
import { redactUrlCredentials } from '../tape/redaction/url-credentials.js';

export { editDistance };

export interface RouteSuggestion {
  /** The path to use instead (the route's prefix plus the rest of the asked path). */
  path: string;
  /** The route's prefix. */
  prefix: string;
}

const segments = (p: string): string[] => p.split('/').filter((s) => s !== '');

/** The closest configured route for `pathname` (which matched none), or undefined when none is close. */
export function closestRoute(pathname: string, method: string, routes: readonly Route[]): RouteSuggestion | undefined {
  const named = routes.filter((r) => r.prefix !== '/');
  const asked = segments(pathname);

  // An LLM API path without its prefix: the provider's default route, or the route whose name or upstream names the
  // provider (its adapter's `ProviderInfo`; without a route an OpenAI path is only `openai-compatible`, an alias).
  const api = detectLlmApi('', pathname, method);
  if (api !== undefined) {
    const info = providerInfo(api.provider);
    const provider = (info?.name ?? api.provider).toLowerCase();
    const host = info?.route === undefined ? undefined : new URL(info.route.upstream).host.toLowerCase();
    const route =
      named.find((r) => info?.route !== undefined && r.prefix.toLowerCase() === info.route.prefix.toLowerCase()) ??
      named.find((r) => host !== undefined && r.upstream.toLowerCase().includes(host)) ??
      named.find((r) => segments(r.prefix).some((s) => s.toLowerCase() === provider)) ??
      named.find((r) => r.upstream.toLowerCase().includes(provider));
    if (route !== undefined) return { prefix: route.prefix, path: route.prefix + pathname };
  }

  let best: { route: Route; rest: string[]; cost: number } | undefined;
  const consider = (route: Route, rest: string[], cost: number): void => {
    if (best === undefined || cost < best.cost || (cost === best.cost && route.prefix.length > best.route.prefix.length))
      best = { route, rest, cost };
  };
  for (const route of named) {
    const want = segments(route.prefix);
    const head = asked.slice(0, want.length);
    const rest = asked.slice(want.length);
    // The asked path is the start of the route (`/mcp` for `/mcp/everything`), or its last segments
    // (`/mcp` for `/everything/mcp`).
    if (asked.length > 0 && asked.length < want.length) {
      const start = want.slice(0, asked.length).join('/') === asked.join('/');
      const end = want.slice(-asked.length).join('/') === asked.join('/');
      // A client that rewrote its path keeps the start of the route's name most often.
      if (start) consider(route, [], 0.5);
      else if (end) consider(route, [], 0.6);
    }
    // The same segments in another order (`/mcp/everything` for `/everything/mcp`).
    if (head.length === want.length && [...head].sort().join('/') === [...want].sort().join('/')) consider(route, rest, 0.5);
    // A misspelt prefix: close enough for its length.
    const d = editDistance(head.join('/').toLowerCase(), want.join('/').toLowerCase());
    if (head.length === want.length && d <= Math.max(2, Math.floor(want.join('/').length / 3))) consider(route, rest, d);
  }
  if (best === undefined) return undefined;
  const b: { route: Route; rest: string[] } = best;
  return { prefix: b.route.prefix, path: [b.route.prefix, ...b.rest].join('/') };
}

/** How to add a route, as every no-route answer says it: the flag of record, replay and serve, or the config. */
export const ADD_ROUTE = 'Add one with --route PREFIX=URL (or under routes: in the config).';

/** No route matched: say so, with the closest configured route when one is close, and every route there is. */
export function noRouteError(pathname: string, method: string, routes: readonly Route[]): TapedeckError {
  const known = routes.map((r) => `${r.prefix} -> ${redactUrlCredentials(r.upstream)}`).join(', ');
  const hint = closestRoute(pathname, method, routes);
  let message = `tapedeck: no route for ${pathname}`;
  if (hint !== undefined) message += `; did you mean ${hint.path}?`;
  // MCP clients such as the MCP Inspector replace a URL path that does not end in /mcp with /mcp.
  if (hint !== undefined && /(^|\/)mcp$/.test(pathname) && !hint.prefix.endsWith('/mcp'))
    message += ` (some MCP clients replace a path that does not end in /mcp with /mcp: name MCP routes NAME/mcp, e.g. /everything/mcp)`;
  message += `; routes: ${known || '(none)'}. ${ADD_ROUTE}`;
  return new TapedeckError('NO_ROUTE', message, {
    details: { path: pathname, ...(hint ? { suggestion: hint.path } : {}), routes: routes.map((r) => r.prefix) },
  });
}
