/**
 * What a tape says about each MCP route, computed once per tape: whether the server used sessions, whether it
 * spoke the legacy HTTP+SSE transport (and its GET and POST paths), and for legacy POSTs the answers that came back
 * on the GET stream.
 */
import type { Matcher } from '../../replay/matcher.js';
import { createReplayMatcher } from '../../replay/pipeline.js';
import type { Exchange } from '../../tape/schema.js';
import type { LoadedTape } from '../../tape/tape-reader.js';
import { progressToken, recordedMessages, RESPONSE_METHOD, STREAM_METHOD } from '../../providers/mcp.js';
import { endpointBelowRoute } from '../legacy-endpoint.js';

export interface LegacyRoute {
  /** Path of the GET stream below the route prefix, e.g. `/sse`. */
  ssePath: string;
  /** Path the `endpoint` event points POSTs to, below the route prefix, e.g. `/message`. */
  postPath: string;
  /** Matcher over the recorded legacy POSTs with the per-run `sessionId` query left out of the key. */
  matcher: Matcher;
  /** Recorded POST exchange id -> the messages its request caused on the GET stream (notifications, then the answer). */
  answers: Map<string, { offsetMs: number; message: Record<string, unknown> }[]>;
}

export interface McpRoute {
  sessionful: boolean;
  /** Paths below the prefix the tape saw MCP on (the route may carry other APIs on other paths). */
  paths: ReadonlySet<string>;
  legacy?: LegacyRoute;
}

const cache = new WeakMap<LoadedTape, Map<string, McpRoute>>();

export function mcpRoutes(tape: LoadedTape): Map<string, McpRoute> {
  let routes = cache.get(tape);
  if (routes === undefined) {
    routes = index(tape);
    cache.set(tape, routes);
  }
  return routes;
}

function index(tape: LoadedTape): Map<string, McpRoute> {
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
  const answers = new Map<string, { offsetMs: number; message: Record<string, unknown> }[]>();
  const posts = list.filter((ex) => ex.request.method === 'POST' && ex.request.path === postPath);
  for (const stream of streams) {
    const endpoint = stream.response?.events?.find((e) => e.event === 'endpoint');
    const sid = endpoint ? new URL(endpoint.data.trim(), 'http://x').searchParams.get('sessionId') : null;
    const messages = recordedMessages(stream).map((m) => ({ at: stream.offsetMs + m.offsetMs, message: m.message }));
    const mine = posts
      .filter((p) => p.request.query.some(([k, v]) => k === 'sessionId' && v === sid))
      .sort((a, b) => a.offsetMs - b.offsetMs);
    for (const post of mine) {
      const id = post.mcp?.jsonrpcId;
      if (id === undefined || post.mcp?.method === RESPONSE_METHOD) continue;
      const answer = messages.find((m) => m.at >= post.offsetMs - 1 && !('method' in m.message) && m.message.id === id);
      const until = answer?.at ?? Infinity;
      const token = progressToken(post.request.body.kind === 'json' ? post.request.body.json : undefined);
      const related = messages.filter((m) => {
        if (m.at < post.offsetMs - 1 || m.at > until || !('method' in m.message)) return false;
        const t = (m.message.params as { progressToken?: unknown } | undefined)?.progressToken;
        return t === undefined || t === token;
      });
      const out = related.map((m) => ({ offsetMs: Math.max(0, m.at - post.offsetMs), message: m.message }));
      if (answer) out.push({ offsetMs: Math.max(0, answer.at - post.offsetMs), message: answer.message });
      answers.set(post.id, out);
    }
  }
  return { ssePath, postPath, answers, matcher: createReplayMatcher(posts, { ignoreQuery: ['sessionId'] }) };
}
