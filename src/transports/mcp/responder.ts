/**
 * In replay, tapedeck *is* the MCP server over HTTP (Streamable HTTP, and the legacy HTTP+SSE transport): this
 * responder picks out the MCP requests and hands them to the endpoint of their transport (`http-endpoint.ts`,
 * `legacy-sse.ts`), whose transports feed one replay server (`server.ts`) per tape. What it knows of a tape (its MCP
 * routes, legacy POSTs paired with their answers, the side-effect policy) is worked out once, when the tape's first
 * request comes, and kept here with that replay. The real server is contacted only for a safe request the tape cannot
 * answer when misses go live; an unrecorded side effect is blocked whatever the miss policy says.
 */
import type { ReplayContext, ReplayResponder } from '../../http/types.js';
import { policyForTape, type SideEffectPolicy, type SideEffectsFile } from '../../replay/side-effects.js';
import type { Mocks } from '../../replay/mocks.js';
import type { AnswerOptions } from '../../replay/mcp-answer.js';
import { StreamableHttpEndpoint } from './http-endpoint.js';
import { LegacySseEndpoint } from './legacy-sse.js';
import { McpPost } from './mcp-post.js';
import { indexMcpRoutes, type McpRoute } from './route-index.js';
import { McpReplayServer } from './server.js';
import type { FaultPlan } from '../../engine/settle.js';
import { indexClientReplies } from '../../replay/mcp-replies.js';
import { recordedMessages } from '../../providers/mcp.js';
import { indexResumptions } from './resumable.js';

export interface McpResponderOptions {
  /** A reviewed side-effects file (from `loadSideEffects`); the tape's recorded annotations fill in the rest. */
  sideEffects?: SideEffectsFile;
  /** A ready-made policy (takes precedence over `sideEffects`). */
  policy?: SideEffectPolicy;
  /** Mocked tool results (`--mock`), asked before the tape. */
  mocks?: Mocks;
  /** Faults injected into the run (`--faults`): tool errors and JSON-RPC errors instead of recorded answers. */
  faults?: FaultPlan;
}

const JSONRPC_MARKER = Buffer.from('"jsonrpc"');

/** One replay's MCP side: what the tape says of its routes, and an endpoint per transport. */
interface McpReplay {
  routes: Map<string, McpRoute>;
  http: StreamableHttpEndpoint;
  legacy: Map<string, LegacySseEndpoint>;
  servers: McpReplayServer[];
}

export function createMcpResponder(opts: McpResponderOptions = {}): ReplayResponder {
  // One per replay (the tape it replays), made on its first request: its sessions live as long as the replay.
  const replays = new WeakMap<ReplayContext['tape'], McpReplay>();
  // Every replay server made, so shutdown can end the conversations still waiting on a client.
  const servers = new Set<McpReplayServer>();
  const replayOf = (ctx: ReplayContext): McpReplay => {
    let r = replays.get(ctx.tape);
    if (r === undefined) {
      r = setUp(ctx, opts);
      for (const s of r.servers) servers.add(s);
      replays.set(ctx.tape, r);
    }
    return r;
  };

  return {
    name: 'mcp',
    decide(req, ctx) {
      const replay = replayOf(ctx);
      const route = replay.routes.get(req.route.prefix);
      // The hot path for LLM traffic: a route the tape never saw MCP on, with no JSON-RPC marker, is not ours.
      if (route === undefined && !req.body.includes(JSONRPC_MARKER)) return NOT_OURS;
      let body: McpPost | undefined;
      const post = (): McpPost => (body ??= new McpPost(req));
      const legacy = replay.legacy.get(req.route.prefix);
      if (legacy !== undefined) {
        if (legacy.handles(req)) return Promise.resolve({ protocol: (sink) => legacy.handle(req, post, sink) });
      } else if (!(route?.paths.has(req.path) ?? false) && !post().looksLikeRpc && !post().tooDeep) {
        // MCP is decided per request: a JSON-RPC body, or any request on a path the tape saw MCP on (GET, DELETE, a
        // malformed message); a route may carry an LLM API on its other paths. A JSON-RPC body too deep to read is
        // refused, never passed on (it could be a tool call no policy has looked at).
        return NOT_OURS;
      }
      return Promise.resolve({ protocol: (sink) => replay.http.handle(req, post(), route?.sessionful ?? false, sink) });
    },
    async drain() {
      await Promise.all([...servers].map((s) => s.drain()));
    },
  };
}

const NOT_OURS: Promise<undefined> = Promise.resolve(undefined);

function setUp(ctx: ReplayContext, opts: McpResponderOptions): McpReplay {
  const routes = indexMcpRoutes(ctx.tape);
  const answer: AnswerOptions = {
    matcher: ctx.matcher,
    policy: opts.policy ?? policyForTape(ctx.tape.exchanges, opts.sideEffects),
    onMiss: ctx.onMiss,
    tapeName: ctx.tape.name,
    exchanges: ctx.tape.exchanges,
    mocks: opts.mocks,
  };
  const replies = indexClientReplies(ctx.tape.exchanges);
  // An answer recorded over a resumable stream is the POST's messages and those of the GETs that resumed it.
  const resumptions = indexResumptions(ctx.tape.exchanges);
  answer.messagesOf = (ex) => resumptions.of(ex)?.messages ?? recordedMessages(ex);
  const tape = { out: ctx.out, log: ctx.log, faults: opts.faults, onTapeFailure: ctx.onTapeFailure, replies };
  const main = new McpReplayServer({ answer, ...tape });
  const servers = [main];
  const http = new StreamableHttpEndpoint(ctx, main, resumptions);
  const legacy = new Map<string, LegacySseEndpoint>();
  for (const [prefix, route] of routes) {
    const l = route.legacy;
    if (l === undefined) continue;
    // Legacy POSTs are matched without the per-run session id, and answered with what came back on their stream.
    const server = new McpReplayServer({
      answer: { ...answer, matcher: l.matcher, messagesOf: (ex) => l.answers.get(ex.id) ?? [], mocks: undefined },
      ...tape,
    });
    servers.push(server);
    legacy.set(prefix, new LegacySseEndpoint(ctx, l, server));
  }
  return { routes, http, legacy, servers };
}
