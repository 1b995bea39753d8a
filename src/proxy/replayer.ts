import type { Cancel } from './cancel.js';
import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Logger } from '../log.js';
import { httpError } from '../providers/errors.js';
import { missCandidates, missError } from '../replay/miss.js';
import type { Matcher, MatchOutcome, IncomingRequest } from '../replay/matcher.js';
import { bodyJson } from '../tape/body.js';
import { convertResponse, streamConvertible, streamUsageAsked } from '../providers/stream-convert.js';
import { isStreamed, round } from '../tape/sse.js';
import type { Exchange, MatchInfo } from '../tape/schema.js';
import type { LoadedTape } from '../tape/tape-reader.js';
import type { NewExchange } from '../tape/tape-writer.js';
import type { ExchangeLog } from './exchange-log.js';
import { matchHeaders, withoutTapedeckHeaders } from './headers.js';
import { forwardAndCapture } from './forward.js';
import { copyBlob, type ReplayBlobs } from './body-spill.js';
import { incomingRecord } from './replay-record.js';
import { requestMeaning } from './request-meaning.js';
import { serveRecorded } from './serve-recorded.js';
import { reuseResponse } from '../tape/serialize.js';
import { nodeSink, sendError } from './sink.js';
import type { OnMiss, ProxyRequest, ReplayContext, ReplayResponder, Timing } from './types.js';

export interface ReplayerOptions {
  tape: LoadedTape;
  matcher: Matcher;
  /** The replay tape: what was served and how it matched. */
  out: ExchangeLog;
  onMiss: OnMiss;
  timing: Timing;
  dispatcher: Dispatcher;
  log: Logger;
  /** Protocol-specific responders (MCP, live LLM), asked in order before the generic HTTP replay. */
  responders?: readonly ReplayResponder[];
  /**
   * Whether a request may be forwarded live on a miss. Default: any request may. The side-effect policy plugs in
   * here so that a side-effect HTTP call never reaches the real server; such a call also matches exactly or not at all.
   */
  allowLive?: (req: ProxyRequest) => { allowed: true } | { allowed: false; reason: string };
  /** Send tapedeck's `x-tapedeck-*` headers (how an answer matched) with every answer. Default true. */
  matchHeaders?: boolean;
  /** Aborted when tapedeck stops: live requests still waiting for their upstream end, written with the error. */
  stopping?: Cancel;
  /** Bodies too large to hold: streamed from the tape's store, copied to the replay tape's. */
  blobs?: ReplayBlobs;
}

export interface Replayer {
  handle(req: ProxyRequest, res: ServerResponse): Promise<void>;
  drain(): Promise<void>;
}

/**
 * Replay mode: answer from the tape, never contacting an upstream unless misses go live (or a responder) says so.
 * Every answer is written to the replay tape with how it matched.
 */
export function createReplayer(opts: ReplayerOptions): Replayer {
  const { out } = opts;
  const write = (ex: NewExchange): void => out.write(ex);

  const forwardLive: ReplayContext['forwardLive'] = async (req, sink, live = {}) => {
    const exchange = forwardAndCapture(req, sink, {
      dispatcher: opts.dispatcher,
      headers: live.headers ? { 'x-tapedeck-match': 'live', ...live.headers } : { 'x-tapedeck-match': 'live' },
      ...(live.body ? { body: live.body } : {}),
      ...(opts.stopping ? { stopping: opts.stopping } : {}),
      ...(opts.blobs ? { spill: opts.blobs.spill } : {}),
    });
    void out.writeWhen(
      exchange.then((ex) => ({
        ...ex,
        match: { kind: 'live', reason: live.reason ?? 'forwarded to the upstream' },
        ...(live.notes ? { notes: live.notes } : {}),
      })),
      // A body replaced before it went (modified replay) means something else than the request did.
      live.body === undefined ? { known: { llm: requestMeaning(req).llm } } : {},
    );
    await exchange;
  };

  const ctxBase = {
    tape: opts.tape,
    matcher: opts.matcher,
    out: opts.out,
    onMiss: opts.onMiss,
    timing: opts.timing,
    log: opts.log,
    forwardLive,
  };

  return {
    async handle(req, res) {
      if (opts.matchHeaders === false) withoutTapedeckHeaders(res);
      const ctx: ReplayContext = ctxBase;
      const sink = nodeSink(res);
      for (const responder of opts.responders ?? []) if (await responder.handle(req, ctx, sink)) return;
      const incoming = toIncoming(req);
      // The request side as computed once for this request: describing the replay tape's record reads only the answer.
      const known = { llm: incoming.llm };
      const verdict = opts.allowLive?.(req) ?? { allowed: true };
      const outcome = await opts.matcher.match(incoming, { allowSemantic: verdict.allowed });
      const answer = outcome.kind === 'miss' ? undefined : inRequestedShape(incoming, outcome.exchange);
      if (outcome.kind !== 'miss' && answer !== undefined) {
        const reshaped =
          answer !== outcome.exchange
            ? ` (recorded ${outcome.exchange.response && isStreamed(outcome.exchange.response) ? 'streamed' : 'not streamed'}, served in the shape asked for)`
            : '';
        const match: MatchInfo = {
          kind: outcome.kind,
          source: outcome.exchange.id,
          stage: outcome.stage,
          score: round(outcome.score),
          reason: outcome.explanation + reshaped,
        };
        await serveRecorded(answer, sink, { timing: opts.timing, headers: matchHeaders(match), open: opts.blobs?.open });
        const served = servedExchange(req, incoming, answer, match);
        // The recorded answer, served as it is: every replay-tape line that serves it carries the same text.
        if (answer === outcome.exchange && answer.response !== undefined) reuseResponse(answer.response);
        if (outcome.kind === 'exact') {
          // Same request, same answer: the recorded meaning holds; no need to parse it again.
          if (outcome.exchange.llm) served.llm = outcome.exchange.llm;
          if (outcome.exchange.mcp) served.mcp = outcome.exchange.mcp;
        }
        const response = served.response;
        const body = response?.body?.kind === 'file' ? response.body : undefined;
        const stream = response?.eventsFile;
        if ((body === undefined && stream === undefined) || opts.blobs === undefined || response === undefined) {
          out.write(served, { described: outcome.kind === 'exact', known });
          return;
        }
        // A body (or a stream's events) too large to hold: the replay tape gets its own copy, streamed from the tape's store.
        const { blobs } = opts;
        out.track(
          (async () => {
            const copied = { ...response };
            if (body !== undefined) copied.body = await copyBlob(blobs.open(body), blobs.spill, body.encoding);
            if (stream !== undefined)
              copied.eventsFile = {
                ...(await copyBlob(blobs.open(stream), blobs.spill, stream.encoding)),
                encoding: 'text',
                events: stream.events,
              };
            return copied;
          })().then(
            (copied) => out.write({ ...served, response: copied }, { described: outcome.kind === 'exact', known }),
            (err: unknown) =>
              opts.log.error({ err: (err as Error).message, tape: out.writer.name }, 'could not copy a large body to the replay tape'),
          ),
        );
        return;
      }
      const missed: Extract<MatchOutcome, { kind: 'miss' }> =
        outcome.kind === 'miss'
          ? outcome
          : {
              kind: 'miss',
              candidates: [{ exchange: outcome.exchange, score: outcome.score, differences: [] }],
              explanation: `#${outcome.exchange.id} matched but its recorded answer could not be converted to the requested stream shape`,
            };
      if (opts.onMiss === 'live') {
        if (verdict.allowed) {
          const live = forwardAndCapture(req, sink, {
            dispatcher: opts.dispatcher,
            headers: { 'x-tapedeck-match': 'live' },
            ...(opts.stopping ? { stopping: opts.stopping } : {}),
            ...(opts.blobs ? { spill: opts.blobs.spill } : {}),
          });
          await out.writeWhen(
            live.then((ex) => ({ ...ex, match: { kind: 'live', reason: 'forwarded to the upstream on a miss' } })),
            { known },
          );
          return;
        }
        return missResponse(res, req, incoming, missed, opts, write, verdict.reason);
      }
      return missResponse(res, req, incoming, missed, opts, write);
    },
    async drain() {
      await Promise.all((opts.responders ?? []).map((r) => r.drain?.()));
      await out.drain();
    },
  };
}

/** The request in tape terms with its meaning, as computed once for this request (`request-meaning.ts`). */
export function toIncoming(req: ProxyRequest): IncomingRequest {
  const { record, llm } = requestMeaning(req);
  const incoming: IncomingRequest = { route: req.route.prefix, request: record, transport: 'http' };
  if (llm !== undefined) incoming.llm = llm;
  return incoming;
}

/**
 * The recorded exchange with its response in the shape the request asked for: a semantic match may pair a streamed
 * request with a non-streamed recording (or the reverse). Undefined when that cannot be converted.
 */
function inRequestedShape(incoming: IncomingRequest, source: Exchange): Exchange | undefined {
  const llm = incoming.llm;
  if (llm === undefined || source.response === undefined || isStreamed(source.response) === llm.streamed) return source;
  if (!streamConvertible(llm)) return source;
  const response = convertResponse(llm, source.response, llm.streamed, streamUsageAsked(llm, bodyJson(incoming.request.body)));
  return response === undefined ? undefined : { ...source, response };
}

/** The replay tape's record of a served answer: the request as it came, the recorded answer, how it matched. */
function servedExchange(req: ProxyRequest, incoming: IncomingRequest, source: Exchange, match: MatchInfo): NewExchange {
  // Fields set on the fresh record, not spread into a new one (a spread is V8's slow path here).
  const ex: NewExchange = Object.assign(incomingRecord(req, incoming.request), {
    timing: { ttfbMs: source.timing.ttfbMs, durationMs: round(performance.now() - req.t0) },
    match,
  });
  if (source.response !== undefined) ex.response = source.response;
  if (source.error !== undefined) ex.error = source.error;
  return ex;
}

function missResponse(
  res: ServerResponse,
  req: ProxyRequest,
  incoming: IncomingRequest,
  outcome: Extract<MatchOutcome, { kind: 'miss' }>,
  opts: ReplayerOptions,
  write: (ex: NewExchange) => void,
  blockedReason?: string,
): void {
  const lenient = opts.onMiss === 'lenient';
  const asked = describeAsked(req, incoming);
  const closest = missCandidates(outcome.candidates, { withPath: true });
  const reason = blockedReason ?? outcome.explanation;
  const miss = missError({
    tape: opts.tape.name,
    asked,
    reason,
    onMiss: opts.onMiss,
    closest,
    noCandidates: ' The tape has no request on this route.',
    details: { tape: opts.tape.name, onMiss: opts.onMiss, lenient, asked, reason, closest },
    // A 4xx the official SDKs do not retry (they retry 408, 409, 429 and 5xx), said twice for custom clients.
    headers: { 'x-tapedeck-match': 'miss', 'x-should-retry': 'false', ...(lenient ? { 'x-tapedeck-lenient': 'true' } : {}) },
  });
  const answer = httpError(miss, incoming.llm);
  write({
    ...incomingRecord(req, incoming.request),
    response: { status: answer.status, headers: answer.headers, body: { kind: 'json', json: answer.body } },
    timing: { durationMs: round(performance.now() - req.t0) },
    match: { kind: blockedReason ? 'blocked' : 'miss', reason },
  });
  opts.log.info({ route: req.route.prefix, path: req.path, reason }, 'replay miss');
  sendError(res, answer);
}

function describeAsked(req: ProxyRequest, incoming: IncomingRequest): string {
  const parts = [`${req.method} ${req.route.prefix}${req.path}`];
  if (incoming.llm?.model) parts.push(`model ${incoming.llm.model}`);
  return parts.join(' ');
}
