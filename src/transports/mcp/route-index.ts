/**
 * What a tape says about each MCP route, computed once when its replay is set up (and kept by the responder that
 * replays it): whether the server used sessions, whether it spoke the legacy HTTP+SSE transport (and its GET and POST
 * paths), and for legacy POSTs the answers that came back on the GET stream (`legacy-pairing.ts`).
 */
import type { Matcher } from '../../replay/matcher.js';
import { createReplayMatcher } from '../../replay/pipeline.js';
import type { Exchange } from '../../tape/schema.js';
import type { LoadedTape } from '../../tape/tape-reader.js';
import { STREAM_METHOD, type TimedMessage } from '../../providers/mcp.js';
import { endpointBelowRoute } from '../../upstream/legacy-endpoint.js';
import { pairedMessages } from '../../providers/mcp-legacy-pairing.js';

export interface LegacyRoute {
  /** Path of the GET stream below the route prefix, e.g. `/sse`. */
  ssePath: string;
  /** Path the `endpoint` event points POSTs to, below the route prefix, e.g. `/message`. */
  postPath: string;
  /** Matcher over the recorded legacy POSTs with the per-run `sessionId` query left out of the key. */
  matcher: Matcher;
  /** Recorded POST exchange id -> the messages its request caused on the GET stream (notifications, then the answer). */
  answers: Map<string, TimedMessage[]>;
}

export interface McpRoute {
  sessionful: boolean;
  /** Paths below the prefix the tape saw MCP on (the route may carry other APIs on other paths). */
  paths: ReadonlySet<string>;
  legacy?: LegacyRoute;
}

/** The MCP routes of a tape, by route prefix. */
export function indexMcpRoutes(tape: LoadedTape): Map<string, McpRoute> {
  const out = new Map<string, McpRoute>();
  const byRoute = new Map<string, Exchange[]>();
  for (const ex of tape.exchanges) {
    if (ex.transport !== 'http' || ex.mcp === undefined) continue;
    const list = byRoute.get(ex.route) ?? [];
    list.push(ex);
    byRoute.set(ex.route, list);
  }
  for (const [prefix, list] of byRoute) {
    const sessionful = list.some((ex) => ex.response?.headers['mcp-session-id'] !== undefined);
    const route: McpRoute = { sessionful, paths: new Set(list.map((ex) => ex.request.path)) };
    const streams = list.filter((ex) => ex.mcp?.method === STREAM_METHOD && ex.mcp.transport === 'sse');
    const upstream = tape.header.routes.find((r) => r.prefix === prefix)?.upstream ?? list[0]?.upstream ?? 'http://localhost/';
    const first = streams[0];
    const endpoint = first?.response?.events?.find((e) => e.event === 'endpoint');
    if (first && endpoint) {
      const below = endpointBelowRoute(
        endpoint.data,
        { prefix, upstream },
        new URL(first.request.path.replace(/^\//, ''), upstream.endsWith('/') ? upstream : upstream + '/').toString(),
      );
      if (below) route.legacy = legacyIndex(first.request.path, below.path, streams, list);
    }
    out.set(prefix, route);
  }
  return out;
}

function legacyIndex(ssePath: string, postPath: string, streams: Exchange[], list: Exchange[]): LegacyRoute {
  const posts = list.filter((ex) => ex.request.method === 'POST' && ex.request.path === postPath);
  return {
    ssePath,
    postPath,
    answers: pairedMessages(streams, posts),
    matcher: createReplayMatcher(posts, { ignoreQuery: ['sessionId'] }),
  };
}
