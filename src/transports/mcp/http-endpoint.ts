/**
 * The Streamable HTTP endpoint in replay: what the protocol asks of the server before a message is decided. It reads
 * a POST's body once (`mcp-post.ts`), answers `initialize` with a fresh session id (never the recorded one), and
 * answers the transport's own errors the way the protocol prescribes (400 malformed, 400 missing session, 404 unknown
 * session, 405 GET: no standalone stream in replay), each on the replay tape (through its tee, before the client has
 * it: `servedFirst`); a GET with `Last-Event-ID` resumes a stream
 * the session sent (`resumable.ts`). A POST it accepts goes to its session's
 * transport (`streamable-http.ts`), or to a transport of its own for a server without sessions.
 */
import { randomUUID } from 'node:crypto';
import { TapedeckError } from '../../errors.js';
import { rpcHttpError } from '../../providers/errors.js';
import { STREAM_METHOD, type Message } from '../../providers/mcp.js';
import { isRequestMessage } from '../../providers/mcp-batch.js';
import type { Exchange, MatchInfo } from '../../tape/schema.js';
import { httpCall } from '../../http/http-call.js';
import type { ResponseSink } from '../../http/sink.js';
import { sendBody, sendErrorAnswer } from '../../http/sink-send.js';
import type { ProxyRequest, ReplayContext } from '../../http/types.js';
import { SESSION_HEADER } from './http-live.js';
import { servedFirst, type OwnAnswer } from './http-reply.js';
import type { McpPost } from './mcp-post.js';
import type { McpReplayServer } from './server.js';
import { StreamableHttpTransport } from './streamable-http.js';
import { LAST_EVENT_ID, sendEvents, type RecordedResumptions } from './resumable.js';

export class StreamableHttpEndpoint {
  /** Open replay sessions by id, with the route they were opened on. */
  private readonly sessions = new Map<string, { route: string; transport: StreamableHttpTransport }>();

  constructor(
    private readonly ctx: ReplayContext,
    private readonly server: McpReplayServer,
    /** The tape's answers recorded over resumable streams (`resumable.ts`). */
    private readonly resumptions?: RecordedResumptions,
  ) {}

  /** Answer one request to a Streamable HTTP MCP route; `sessionful`: the recorded server used sessions. */
  async handle(req: ProxyRequest, post: McpPost, sessionful: boolean, sink: ResponseSink): Promise<void> {
    const sid = req.headers[SESSION_HEADER];
    const found = sid === undefined ? undefined : this.sessions.get(sid);
    const session = found?.route === req.route.prefix ? found.transport : undefined;
    const refuse = (err: TapedeckError, reason = err.message, as: Pick<Exchange, 'match' | 'mcp'> = {}): Promise<void> => {
      const answer = rpcHttpError(err);
      const how = { match: as.match ?? { kind: 'miss' as const, reason }, meaningOf: as.mcp && { mcp: as.mcp } };
      return this.served(req, answer, how, sink, () => sendErrorAnswer(sink, answer));
    };
    /** A session-dialect request without a known session is refused (its refusal; undefined when it is not refused). */
    const badSession = (): Promise<void> | undefined => {
      if (!sessionful) return undefined;
      if (sid === undefined)
        return refuse(new TapedeckError('SESSION_REQUIRED', 'Bad Request: Mcp-Session-Id header is required'), 'no session id');
      if (session === undefined) return refuse(new TapedeckError('SESSION_NOT_FOUND', 'Session not found'), `unknown session ${sid}`);
      return undefined;
    };

    if (req.method === 'GET') {
      const bad = badSession();
      if (bad !== undefined) return bad;
      const last = req.headers[LAST_EVENT_ID];
      if (last !== undefined && session !== undefined) return this.resume(req, session, last, sink, refuse);
      // No standalone server-to-client stream in replay: the protocol lets a server answer 405. A client's standing
      // stream declined as the protocol allows is how replay works, not a miss: a perfect replay looks perfect.
      const refused = new TapedeckError('METHOD_NOT_ALLOWED', 'Method not allowed: tapedeck replay offers no standalone SSE stream', {
        headers: { allow: 'POST, DELETE' },
      });
      return refuse(refused, 'GET stream not offered in replay', {
        match: { kind: 'exact', stage: 'mcp-transport', reason: 'no standalone stream in replay: 405, as the MCP transport allows' },
        mcp: {
          direction: 'server-to-client',
          method: STREAM_METHOD,
          notifications: [],
          transport: 'streamable-http',
          ...(sid ? { sessionId: sid } : {}),
        },
      });
    }
    if (req.method === 'DELETE') {
      const bad = badSession();
      if (bad !== undefined) return bad;
      if (sid !== undefined) this.sessions.delete(sid);
      const ended = { match: { kind: 'exact' as const, reason: 'session ended' } };
      return this.served(req, { status: 200, headers: {} }, ended, sink, () => sendBody(sink, 200, {}));
    }
    if (req.method !== 'POST') {
      const refused = new TapedeckError('METHOD_NOT_ALLOWED', `Method not allowed: ${req.method}`, {
        headers: { allow: 'GET, POST, DELETE' },
      });
      return refuse(refused, `method ${req.method}`);
    }

    const parsed = post.rpc();
    if (!parsed.ok) return refuse(parsed.error);
    const messages = parsed.messages as Message[];
    const init = messages.find((m) => m.method === 'initialize' && isRequestMessage(m));
    if (parsed.batch && init !== undefined)
      return refuse(new TapedeckError('BAD_REQUEST', 'Invalid Request: initialize must not be part of a JSON-RPC batch'));
    let transport = session;
    if (init !== undefined && sessionful) transport = this.open(req.route.prefix, init);
    else if (init === undefined) {
      const bad = badSession();
      if (bad !== undefined) return bad;
    }
    if (transport === undefined) {
      // A server without sessions: each POST is a transport of its own.
      transport = new StreamableHttpTransport(this.ctx);
      await this.server.connect(transport);
    }
    await transport.handlePost(req, sink, messages, parsed.batch);
  }

  /**
   * A client resuming a stream (a GET with `Last-Event-ID`): the events after that id, of an answer this session sent
   * over a resumable stream (`resumable.ts`), from the tape. An id the session never sent is refused (400).
   */
  private resume(
    req: ProxyRequest,
    session: StreamableHttpTransport,
    last: string,
    sink: ResponseSink,
    refuse: (err: TapedeckError, reason?: string) => Promise<void>,
  ): Promise<void> {
    const events = session.resumeAfter(last);
    if (events === undefined)
      return refuse(
        new TapedeckError('BAD_REQUEST', `Bad Request: no event with id ${last} was sent in this session`),
        `unknown Last-Event-ID ${last}`,
      );
    const headers = session.streamHeaders;
    const match = { kind: 'exact' as const, stage: 'mcp-resume', reason: `the events after ${last}, from the tape` };
    const response = { status: 200, headers: { 'content-type': 'text/event-stream', ...headers }, events };
    // Its meaning is described from its events (the messages it carries, the session it resumes).
    return this.served(req, { response, timing: { durationMs: 0 } }, { match }, sink, () =>
      sendEvents(sink, 200, headers, events, this.ctx.timing),
    );
  }

  /** An answer of the transport's own: on the replay tape (through its tee), then sent. */
  private served(
    req: ProxyRequest,
    answer: OwnAnswer,
    how: { match: MatchInfo; meaningOf?: Pick<Exchange, 'mcp'> | undefined },
    sink: ResponseSink,
    send: () => void | Promise<void>,
  ): Promise<void> {
    return servedFirst(this.ctx.out, httpCall(req), answer, { ...how, onTapeFailure: this.ctx.onTapeFailure }, sink, send);
  }

  /** A new replay session, opened by the client's initialize. */
  private open(route: string, initialize: Message): StreamableHttpTransport {
    const transport = new StreamableHttpTransport(this.ctx, { id: randomUUID(), initialize }, this.resumptions);
    const id = (transport.session as { id: string }).id;
    this.sessions.set(id, { route, transport });
    transport.onclose = () => void this.sessions.delete(id);
    void this.server.connect(transport);
    return transport;
  }
}
