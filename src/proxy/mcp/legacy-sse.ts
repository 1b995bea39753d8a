/**
 * Replay of the legacy HTTP+SSE transport (2024-11-05): a GET opens a stream whose first event is `endpoint` (the
 * URL to POST to, with a fresh session id and the route prefix, so the client's POSTs come back through tapedeck);
 * each POST is answered 202 and its answer travels on the stream, as the real server did.
 */
import { TapedeckError } from '../../errors.js';
import { errorResponse, rpcErrorMessage, rpcHttpError } from '../../providers/errors.js';
import { scaledDelay } from '../../replay/modes.js';
import { toIncoming } from '../replayer.js';
import type { ProxyRequest, ReplayContext } from '../types.js';
import type { SideEffectPolicy } from '../../replay/side-effects.js';
import { round, serializeSseFields } from '../../tape/sse.js';
import type { SseEvent } from '../../tape/schema.js';
import type { NewExchange } from '../../tape/tape-writer.js';
import { commit, decideAll, type McpContext } from './engine.js';
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
): Promise<Response | undefined> {
  const write = (ex: NewExchange): void => ctx.out.write(ex);

  if (req.method === 'GET' && req.path === legacy.ssePath) {
    const session = sessions.create(req.route.prefix);
    const enc = new TextEncoder();
    const events: SseEvent[] = [];
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let ended!: () => void;
    ctx.out.track(new Promise<void>((r) => (ended = r)));
    const push = (event: string, data: string): void => {
      events.push({ offsetMs: round(performance.now() - req.t0), event, data });
      try {
        controller.enqueue(enc.encode(serializeSseFields({ event, data })));
      } catch {
        // the client is gone; the session ends with the stream
      }
    };
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
      },
      cancel() {
        sessions.delete(session.id);
        write({
          ...servedExchange(
            req,
            { status: 200, headers: { 'content-type': 'text/event-stream' } },
            { kind: 'exact', reason: 'legacy SSE stream served by tapedeck' },
          ),
          response: { status: 200, headers: { 'content-type': 'text/event-stream' }, events },
        });
        ended();
      },
    });
    session.push = push;
    push('endpoint', `${req.route.prefix}${legacy.postPath}?sessionId=${session.id}`);
    return new Response(stream, {
      status: 200,
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', 'x-tapedeck-match': 'exact' },
    });
  }

  if (req.method !== 'POST' || req.path !== legacy.postPath) return undefined;
  const sid = req.query.find(([k]) => k === 'sessionId')?.[1];
  const session = sid === undefined ? undefined : sessions.get(sid, req.route.prefix);
  const refuse = (err: TapedeckError, reason = err.message): Response => {
    const answer = rpcHttpError(err);
    write(servedExchange(req, answer, { kind: 'miss', reason }));
    return errorResponse(answer);
  };
  if (session?.push === undefined)
    return refuse(new TapedeckError('SESSION_NOT_FOUND', 'Session not found'), `unknown legacy SSE session ${sid ?? '(none)'}`);
  const parsed = parseRpcBody(req.body.toString('utf8'));
  if (!parsed.ok) {
    // The legacy transport answers on the stream too.
    session.push('message', JSON.stringify(rpcErrorMessage(parsed.error, null)));
    return refuse(parsed.error);
  }
  // Each message, alone or in a batch, gets the decision a single message gets; answers travel on the stream.
  const one = (msg: Message): ProxyRequest => (parsed.batch ? { ...req, body: Buffer.from(JSON.stringify(msg)) } : req);
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
    commit(d, servedExchange(one(d.message), { status: 202, headers: {} }, d.match), mcp);
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
      push('message', JSON.stringify(m.message));
    }
  });
  return new Response('Accepted', { status: 202, headers: kinds.length === 1 ? { 'x-tapedeck-match': kinds[0] as string } : {} });
}
