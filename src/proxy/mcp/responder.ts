/**
 * In replay, tapedeck *is* the MCP server (Streamable HTTP, and the legacy HTTP+SSE transport): it answers
 * `initialize` with a fresh session id, every request from the tape with the incoming JSON-RPC id and progress
 * token, notifications with 202, and the transport's own errors the way the protocol prescribes (400 malformed,
 * 400 missing session, 404 unknown session, 405 GET). The real server is contacted only for a safe request the tape
 * cannot answer when misses go live; an unrecorded side effect is blocked whatever the miss policy says.
 */
import { TapedeckError } from '../../errors.js';
import { rpcErrorMessage, rpcHttpError } from '../../providers/errors.js';
import { upstreamUrl } from '../../tape/routes.js';
import type { ProxyRequest, ReplayContext, ReplayResponder } from '../types.js';
import { policyForTape, type SideEffectPolicy, type SideEffectsFile } from '../../replay/side-effects.js';
import type { LoadedTape } from '../../tape/tape-reader.js';
import type { NewExchange } from '../../tape/tape-writer.js';
import type { Mocks } from '../../replay/mocks.js';
import { matchHeaders } from '../headers.js';
import { httpCall, toIncoming, withBody } from '../http-call.js';
import { sendReply, servedExchange, type Reply } from './http-reply.js';
import { BufferSink, type ResponseSink } from '../sink.js';
import { sendBody, sendErrorAnswer } from '../sink-send.js';
import { looksLikeRpc, requestId, requestSideMcp, STREAM_METHOD, type Message, type RequestId } from '../../providers/mcp.js';
import { isRequestMessage, parseRpcBody } from '../../providers/mcp-batch.js';
import type { Exchange, MatchInfo } from '../../tape/schema.js';
import { batchSse, liveMessages, sendBatch, type BatchPart } from './batch-reply.js';
import { commit, decideAll, type Decision, type McpContext } from './engine.js';
import { handleLegacy } from './legacy-sse.js';
import { mcpRoutes } from './route-index.js';
import { SessionStore, type ReplaySession } from './session.js';
import { JsonTooDeepError, parseJson } from '../../tape/json-depth.js';
import { redactUrlCredentials } from '../../tape/url-credentials.js';

export interface McpResponderOptions {
  /** A reviewed side-effects file (from `loadSideEffects`); the tape's recorded annotations fill in the rest. */
  sideEffects?: SideEffectsFile;
  /** A ready-made policy (takes precedence over `sideEffects`). */
  policy?: SideEffectPolicy;
  /** Mocked tool results (`--mock`), asked before the tape. */
  mocks?: Mocks;
}

const SESSION_HEADER = 'mcp-session-id';
const JSONRPC_MARKER = Buffer.from('"jsonrpc"');

export function createMcpResponder(opts: McpResponderOptions = {}): ReplayResponder {
  const sessions = new SessionStore();
  const policies = new WeakMap<LoadedTape, SideEffectPolicy>();
  const policyOf = (tape: LoadedTape): SideEffectPolicy => {
    if (opts.policy) return opts.policy;
    let p = policies.get(tape);
    if (p === undefined) {
      p = policyForTape(tape.exchanges, opts.sideEffects);
      policies.set(tape, p);
    }
    return p;
  };

  return {
    name: 'mcp',
    async handle(req, ctx, sink) {
      const route = mcpRoutes(ctx.tape).get(req.route.prefix);
      // The hot path for LLM traffic: a route the tape never saw MCP on, with no JSON-RPC marker, is not ours.
      if (route === undefined && !req.body.includes(JSONRPC_MARKER)) return false;
      const text = req.body.byteLength > 0 ? req.body.toString('utf8') : '';
      let json: unknown;
      let tooDeep = false;
      try {
        json = text === '' ? undefined : parseJson(text);
      } catch (err) {
        json = undefined;
        tooDeep = err instanceof JsonTooDeepError;
      }
      // MCP is decided per request: a JSON-RPC body, or any request on a path the tape saw MCP on (GET, DELETE, a
      // malformed message); a route may carry an LLM API on its other paths. A JSON-RPC body too deep to read is
      // refused here, never passed on (it could be a tool call no policy has looked at).
      if (!looksLikeRpc(json) && !tooDeep && !(route?.paths.has(req.path) ?? false) && route?.legacy === undefined) return false;
      if (route?.legacy && (await handleLegacy(req, ctx, route.legacy, sessions, policyOf(ctx.tape), sink))) return true;
      const write = (ex: NewExchange): void => ctx.out.write(ex);
      // The transport's own errors (no session, wrong method, not JSON-RPC): a JSON-RPC error with an HTTP status.
      const refuse = (err: TapedeckError, reason = err.message, extra: Partial<NewExchange> = {}): true => {
        const answer = rpcHttpError(err);
        write({ ...servedExchange(httpCall(req), answer, { kind: 'miss', reason }), ...extra });
        sendErrorAnswer(sink, answer);
        return true;
      };
      const sessionful = route?.sessionful ?? false;
      const sid = req.headers[SESSION_HEADER];
      const session = sid === undefined ? undefined : sessions.get(sid, req.route.prefix);
      const checkSession = (): true | undefined => {
        if (!sessionful) return undefined;
        if (sid === undefined)
          return refuse(new TapedeckError('SESSION_REQUIRED', 'Bad Request: Mcp-Session-Id header is required'), 'no session id');
        if (session === undefined) return refuse(new TapedeckError('SESSION_NOT_FOUND', 'Session not found'), `unknown session ${sid}`);
        return undefined;
      };

      if (req.method === 'GET') {
        // No standalone server-to-client stream in replay: the protocol lets a server answer 405.
        const refused = new TapedeckError('METHOD_NOT_ALLOWED', 'Method not allowed: tapedeck replay offers no standalone SSE stream', {
          headers: { allow: 'POST, DELETE' },
        });
        // A client's standing stream declined as the protocol allows is how replay works, not a miss: a perfect replay
        // looks perfect on the replay tape.
        const declined: Partial<NewExchange> = {
          match: { kind: 'exact', stage: 'mcp-transport', reason: 'no standalone stream in replay: 405, as the MCP transport allows' },
          mcp: {
            direction: 'server-to-client',
            method: STREAM_METHOD,
            notifications: [],
            transport: 'streamable-http',
            ...(sid ? { sessionId: sid } : {}),
          },
        };
        return checkSession() ?? refuse(refused, 'GET stream not offered in replay', declined);
      }
      if (req.method === 'DELETE') {
        const bad = checkSession();
        if (bad) return bad;
        if (sid !== undefined) sessions.delete(sid);
        write(servedExchange(httpCall(req), { status: 200, headers: {} }, { kind: 'exact', reason: 'session ended' }));
        sendBody(sink, 200, {});
        return true;
      }
      if (req.method !== 'POST') {
        const refused = new TapedeckError('METHOD_NOT_ALLOWED', `Method not allowed: ${req.method}`, {
          headers: { allow: 'GET, POST, DELETE' },
        });
        return refuse(refused, `method ${req.method}`);
      }

      const parsed = parseRpcBody(text);
      if (!parsed.ok) return refuse(parsed.error);
      const messages = parsed.messages as Message[];
      const init = messages.find((m) => m.method === 'initialize' && isRequestMessage(m));
      if (parsed.batch && init !== undefined)
        return refuse(new TapedeckError('BAD_REQUEST', 'Invalid Request: initialize must not be part of a JSON-RPC batch'));
      let current = session;
      if (init !== undefined) {
        if (sessionful) {
          current = sessions.create(req.route.prefix);
          current.initialize = init;
        }
      } else {
        const bad = checkSession();
        if (bad) return bad;
      }
      const sessionHeaders: Record<string, string> = current ? { [SESSION_HEADER]: current.id } : {};
      const acceptsSse = (req.headers.accept ?? '').includes('text/event-stream');
      // The request a message of a batch is recorded as: the batch's own, with that message for body.
      const one = (msg: Message): ProxyRequest => (parsed.batch ? withBody(req, Buffer.from(JSON.stringify(msg))) : req);
      const mcp: McpContext = {
        answer: {
          matcher: ctx.matcher,
          policy: policyOf(ctx.tape),
          onMiss: ctx.onMiss,
          tapeName: ctx.tape.name,
          exchanges: ctx.tape.exchanges,
          mocks: opts.mocks,
        },
        out: ctx.out,
        log: ctx.log,
        incoming: (msg) => ({ ...toIncoming(one(msg)), mcp: requestSideMcp(msg, 'streamable-http') }),
        // The live answer is recorded as the server sent it; one message gets it streamed through unread.
        live: async (msg) => {
          if (!parsed.batch) {
            await forwardLive(one(msg), ctx, current, msg, sink);
            return { messages: [], recorded: true, sent: true };
          }
          // A message of a batch: its live answer is read whole, to go into the batch's one answer.
          const res = new BufferSink();
          await forwardLive(one(msg), ctx, current, msg, res);
          const sse = (res.headers['content-type'] ?? '').startsWith('text/event-stream');
          return { messages: liveMessages(res, msg.id as RequestId), recorded: true, sse };
        },
      };
      const decisions = await decideAll(messages, mcp);
      const accepted = (d: Decision): NewExchange =>
        servedExchange(httpCall(one(d.message)), { status: 202, headers: sessionHeaders }, d.match);

      if (parsed.batch) {
        const answered = decisions.filter((d) => d.kind !== 'accepted');
        const parts: BatchPart[] = answered.map((d) => ({ messages: d.messages, sse: d.forwarded?.sse ?? recordedAsSse(d.source) }));
        // The replay tape gets the messages in batch order, once the batch's framing (JSON or SSE) is known.
        const sse = batchSse(parts, acceptsSse);
        for (const d of decisions) {
          const reply: Reply = { status: 200, headers: sessionHeaders, messages: d.messages, sse };
          commit(d, d.kind === 'accepted' ? accepted(d) : servedExchange(httpCall(one(d.message)), reply, d.match), mcp);
        }
        await sendBatch(sink, parts, sse, sessionHeaders, ctx.timing);
        return true;
      }

      const d = decisions[0] as Decision;
      if (d.kind === 'accepted') {
        commit(d, accepted(d), mcp);
        sendBody(sink, 202, sessionHeaders);
        return true;
      }
      // Live: the server's answer streamed through as it came (the live forward recorded it).
      if (d.forwarded?.sent === true) return true;
      // The recorded status too (a JSON-RPC error may have come with a 4xx); tapedeck's own answers are 200.
      const recordedStatus = d.source?.response?.status;
      const status = recordedStatus !== undefined && recordedStatus !== 202 && d.messages.length > 0 ? recordedStatus : 200;
      const reply: Reply = {
        status,
        headers: { ...sessionHeaders, ...matchHeaders(d.match) },
        messages: d.messages,
        sse: acceptsSse && (recordedAsSse(d.source) || d.messages.length > 1),
      };
      commit(d, servedExchange(httpCall(req), reply, d.match), mcp);
      await sendReply(sink, reply, ctx.timing);
      return true;
    },
  };
}

/** Whether a recorded answer came as an SSE stream. */
function recordedAsSse(source: Exchange | undefined): boolean {
  return source?.response?.headers['content-type']?.startsWith('text/event-stream') ?? false;
}

/**
 * On-miss live, for a safe request: forward it to the real server. A session-dialect server needs its own
 * session, opened once per replay session with the client's own initialize; its session id never reaches the client.
 */
async function forwardLive(
  req: ProxyRequest,
  ctx: ReplayContext,
  session: ReplaySession | undefined,
  msg: Message,
  sink: ResponseSink,
): Promise<void> {
  let headers = req.headers;
  if (session !== undefined) {
    session.liveSessionId ??= openLiveSession(req, session.initialize);
    const live = await session.liveSessionId.catch(() => undefined);
    if (live === undefined) {
      // A JSON-RPC error to a valid request travels in a 200, like any answer.
      const err = new TapedeckError(
        'LIVE_UNAVAILABLE',
        `tapedeck: live forwarding could not open a session with ${redactUrlCredentials(req.route.upstream)}`,
      );
      const match: MatchInfo = { kind: 'miss', reason: err.message };
      const reply: Reply = {
        status: 200,
        headers: matchHeaders(match),
        messages: [{ offsetMs: 0, message: rpcErrorMessage(err, requestId(msg) ?? null) }],
        sse: false,
      };
      ctx.out.write(servedExchange(httpCall(req), reply, match));
      return sendReply(sink, reply, ctx.timing);
    }
    headers = { ...req.headers, [SESSION_HEADER]: live };
  }
  // The client keeps its replay session id, whatever the real server's is.
  await ctx.forwardLive({ ...req, headers }, sink, {
    notes: { reason: 'safe request missing from the tape, forwarded live (on-miss live)' },
    ...(session !== undefined ? { headers: { [SESSION_HEADER]: session.id } } : {}),
  });
}

async function openLiveSession(req: ProxyRequest, initialize: Message | undefined): Promise<string | undefined> {
  if (initialize === undefined) return undefined;
  const url = upstreamUrl(req.route, req.path, req.query, req.rawQuery);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(url, { method: 'POST', headers, body: JSON.stringify(initialize) });
  const sid = init.headers.get(SESSION_HEADER) ?? undefined;
  await init.arrayBuffer();
  if (!init.ok || sid === undefined) return undefined;
  const version = req.headers['mcp-protocol-version'];
  const done = await fetch(url, {
    method: 'POST',
    headers: { ...headers, [SESSION_HEADER]: sid, ...(version ? { 'mcp-protocol-version': version } : {}) },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  await done.arrayBuffer();
  return sid;
}
