/**
 * Replay of the legacy HTTP+SSE transport (2024-11-05): a GET opens a stream whose first event is `endpoint` (the
 * URL to POST to, with a fresh session id and the route prefix, so the client's POSTs come back through tapedeck);
 * each POST is answered 202 and its answer travels on the stream, as the real server did.
 */
import { TapedeckError } from '../../errors.js';
import { rpcErrorMessage, rpcHttpError } from '../../providers/errors.js';
import { scaledDelay } from '../../replay/modes.js';
import type { ProxyRequest, ReplayContext } from '../types.js';
import type { SideEffectPolicy } from '../../replay/side-effects.js';
import { round } from '../../tape/sse.js';
import type { ResponseSink } from '../sink.js';
import { openSse, sendBody, sendErrorAnswer, sseEvent } from '../sink-send.js';
import type { SseEvent } from '../../tape/schema.js';
import type { NewExchange } from '../../tape/tape-writer.js';
import { commit, decideAll, type McpContext } from './engine.js';
import { httpCall, toIncoming, withBody } from '../http-call.js';
import { servedExchange } from './http-reply.js';
import { requestSideMcp, type Message, type TimedMessage } from '../../providers/mcp.js';
import { parseRpcBody } from '../../providers/mcp-batch.js';
import type { LegacyRoute } from './route-index.js';
import type { SessionStore } from './session.js';

export async function handleLegacy(
  req: ProxyRequest,
  ctx: ReplayContext,
  legacy: LegacyRoute,
  sessions: SessionStore,
  policy: SideEffectPolicy,
  sink: ResponseSink,
): Promise<boolean> {
  const write = (ex: NewExchange): void => ctx.out.write(ex);

  if (req.method === 'GET' && req.path === legacy.ssePath) {
    const session = sessions.create(req.route.prefix);
    const events: SseEvent[] = [];
    let ended!: () => void;
    ctx.out.track(new Promise<void>((r) => (ended = r)));
    // The stream stays open until the client leaves (or tapedeck stops): then the session ends and the tape gets it.
    const stream = openSse(sink, 200, { 'x-tapedeck-match': 'exact' }, () => {
      sessions.delete(session.id);
      write({
        ...servedExchange(
          httpCall(req),
          { status: 200, headers: { 'content-type': 'text/event-stream' } },
          { kind: 'exact', reason: 'legacy SSE stream served by tapedeck' },
        ),
        response: { status: 200, headers: { 'content-type': 'text/event-stream' }, events },
      });
      ended();
    });
    session.push = (event, data) => {
      if (stream.gone) return Promise.resolve(false);
      events.push({ offsetMs: round(performance.now() - req.t0), event, data });
      return stream.write(sseEvent(event, data));
    };
    void session.push('endpoint', `${req.route.prefix}${legacy.postPath}?sessionId=${session.id}`);
    return true;
  }

  if (req.method !== 'POST' || req.path !== legacy.postPath) return false;
  const sid = req.query.find(([k]) => k === 'sessionId')?.[1];
  const session = sid === undefined ? undefined : sessions.get(sid, req.route.prefix);
  const refuse = (err: TapedeckError, reason = err.message): true => {
    const answer = rpcHttpError(err);
    write(servedExchange(httpCall(req), answer, { kind: 'miss', reason }));
    sendErrorAnswer(sink, answer);
    return true;
  };
  if (session?.push === undefined)
    return refuse(new TapedeckError('SESSION_NOT_FOUND', 'Session not found'), `unknown legacy SSE session ${sid ?? '(none)'}`);
  const parsed = parseRpcBody(req.body.toString('utf8'));
  if (!parsed.ok) {
    // The legacy transport answers on the stream too.
    void session.push('message', JSON.stringify(rpcErrorMessage(parsed.error, null)));
    return refuse(parsed.error);
  }
  // Each message, alone or in a batch, gets the decision a single message gets; answers travel on the stream.
  const one = (msg: Message): ProxyRequest => (parsed.batch ? withBody(req, Buffer.from(JSON.stringify(msg))) : req);
  const mcp: McpContext = {
    answer: {
      matcher: legacy.matcher,
      policy,
      onMiss: ctx.onMiss,
      tapeName: ctx.tape.name,
      exchanges: ctx.tape.exchanges,
      messagesOf: (ex) => legacy.answers.get(ex.id) ?? [],
    },
    out: ctx.out,
    log: ctx.log,
    incoming: (msg) => ({ ...toIncoming(one(msg)), mcp: requestSideMcp(msg, 'sse') }),
    noLive: 'live forwarding is not supported on the legacy HTTP+SSE transport; the tape has no answer for this request',
  };
  const decisions = await decideAll(parsed.messages as Message[], mcp);
  const messages: TimedMessage[] = [];
  const kinds: string[] = [];
  for (const d of decisions) {
    commit(d, servedExchange(httpCall(one(d.message)), { status: 202, headers: {} }, d.match), mcp);
    if (d.kind === 'accepted') continue;
    kinds.push(d.match.kind);
    const base = messages.at(-1)?.offsetMs ?? 0;
    for (const m of d.messages) messages.push({ offsetMs: base + m.offsetMs, message: m.message });
  }
  // One message per write, in order, with the recorded gaps under the timing mode (a macrotask apart when instant): the SDK
  // client handles a notification a tick later than a response, so a batch would lose the progress before an answer.
  const push = session.push;
  let last = 0;
  session.sending = (session.sending ?? Promise.resolve()).then(async () => {
    for (const m of messages) {
      const wait = scaledDelay(m.offsetMs - last, ctx.timing);
      last = m.offsetMs;
      await new Promise((r) => (wait > 0 ? setTimeout(r, wait) : setImmediate(r)));
      // At the client's pace: a client not reading holds the answers back here, not in a buffer.
      if (!(await push('message', JSON.stringify(m.message)))) return;
    }
  });
  const headers: Record<string, string> = { 'content-type': 'text/plain;charset=UTF-8' };
  if (kinds.length === 1) headers['x-tapedeck-match'] = kinds[0] as string;
  sendBody(sink, 202, headers, 'Accepted');
  return true;
}
