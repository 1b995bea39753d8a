/**
 * On-miss live over Streamable HTTP, for a safe request the tape cannot answer: forward it to the real server. A
 * session-dialect server needs its own session, opened once per replay session with the client's own initialize;
 * its session id never reaches the client (the client keeps its replay session id).
 */
import { TapedeckError } from '../../errors.js';
import { rpcErrorMessage } from '../../providers/errors.js';
import { requestId, type Message } from '../../providers/mcp.js';
import { upstreamUrl } from '../../tape/routes.js';
import type { MatchInfo } from '../../tape/schema.js';
import { redactUrlCredentials } from '../../tape/redaction/url-credentials.js';
import { matchHeaders } from '../../http/headers.js';
import { httpCall } from '../../http/http-call.js';
import type { ResponseSink } from '../../http/sink.js';
import type { ProxyRequest, ReplayContext } from '../../http/types.js';
import { sendReply, servedFirst, type Reply } from './http-reply.js';

export const SESSION_HEADER = 'mcp-session-id';

/** A replay session's hold on the real server's session, when a miss went live. */
export interface LiveSession {
  /** The replay session id the client knows. */
  id: string;
  /** The client's initialize request (what opens the real server's session). */
  initialize?: Message | undefined;
  /** The real server's session id, once a miss going live opened one. */
  liveSessionId?: Promise<string | undefined>;
}

/**
 * Forward `req` (one message: `msg`) to the real server, its answer streaming to `sink` as it comes; the replay
 * context records it. Without a real session to forward in, a JSON-RPC error saying so, recorded as a miss.
 */
export async function forwardLive(
  req: ProxyRequest,
  ctx: ReplayContext,
  session: LiveSession | undefined,
  msg: Message,
  sink: ResponseSink,
  /** Why it goes live, for the replay tape (default: a safe request missing from the tape). */
  reason?: string,
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
      const how = { match, onTapeFailure: ctx.onTapeFailure };
      return servedFirst(ctx.out, httpCall(req), reply, how, sink, () => sendReply(sink, reply, ctx.timing));
    }
    headers = { ...req.headers, [SESSION_HEADER]: live };
  }
  await ctx.settle({ ...req, headers }, sink, {
    live: {
      notes: { reason: 'safe request missing from the tape, forwarded live (on-miss live)' },
      ...(reason !== undefined ? { reason } : {}),
      ...(session !== undefined ? { headers: { [SESSION_HEADER]: session.id } } : {}),
    },
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
