/**
 * Replay from the tape, over plain HTTP: the generic answer when no protocol responder took the request. It matches
 * the request against the tape, serves the recorded answer (in the shape asked for), and writes what was served to
 * the replay tape; a miss says why, with the closest recordings, in the API's own error shape.
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from '../../log.js';
import { httpError } from '../../providers/errors.js';
import { missCandidates, missError } from '../../replay/miss.js';
import type { Matcher, MatchOutcome, IncomingRequest } from '../../replay/matcher.js';
import { bodyJson } from '../../tape/body.js';
import { convertResponse, streamConvertible, streamUsageAsked } from '../../providers/stream-convert.js';
import { isStreamed } from '../../tape/framing/framing.js';
import { roundMs } from '../../tape/timing.js';
import type { Exchange, MatchInfo, ResponseRecord } from '../../tape/schema.js';
import type { LoadedTape } from '../../tape/tape-reader.js';
import type { NewExchange } from '../../tape/stores/tape-writer.js';
import type { ExchangeLog } from '../../engine/exchange-log.js';
import { matchHeaders } from '../../http/headers.js';
import { copyBlob, type ReplayBlobs } from '../../http/body-spill.js';
import { inlineBody } from '../../tape/exchange-encoder.js';
import { STREAMED_BODY_BYTES } from '../../tape/large-body.js';
import { httpCall, toIncoming } from '../../http/http-call.js';
import { elapsedSince, type Call } from '../../engine/call.js';
import { exchangeRecord } from '../../engine/record.js';
import { serveRecorded } from './serve-recorded.js';
import type { RecordedAnswers } from './recorded-answers.js';
import type { WireText } from '../../tape/store.js';
import { sendError, type ResponseSink } from '../../http/sink.js';
import type { OnMiss, ProxyRequest, ReplayContext, Timing } from '../../http/types.js';

/** What answering from the tape needs: the tape, its matcher, where the replay tape goes, what to do on a miss. */
export interface TapeAnswers {
  tape: LoadedTape;
  matcher: Matcher;
  /** The replay tape: what was served and how it matched. */
  out: ExchangeLog;
  onMiss: OnMiss;
  timing: Timing;
  log: Logger;
  /**
   * Whether a request may be forwarded live on a miss. Default: any request may. The side-effect policy plugs in
   * here so that a side-effect HTTP call never reaches the real server; such a call also matches exactly or not at all.
   */
  allowLive?: ((req: ProxyRequest) => { allowed: true } | { allowed: false; reason: string }) | undefined;
  /** Bodies too large to hold: streamed from the tape's store, copied to the replay tape's. */
  blobs?: ReplayBlobs | undefined;
  /** The recorded answers served so far, as bytes and line text made once each. */
  answers: RecordedAnswers;
}

/**
 * Answer a request from the tape: the recorded answer it matches (in the shape it asked for), written to the replay
 * tape with how it matched; on a miss, live when `--on-miss live` allows it, else the miss answer that says why.
 */
export async function answerFromTape(
  req: ProxyRequest,
  res: ServerResponse,
  sink: ResponseSink,
  opts: TapeAnswers,
  forwardLive: ReplayContext['forwardLive'],
): Promise<void> {
  const { out } = opts;
  const incoming = toIncoming(req);
  // The request side as computed once for this request: describing the replay tape's record reads only the answer.
  const known = { llm: incoming.llm };
  const verdict = opts.allowLive?.(req) ?? { allowed: true };
  const outcome = await opts.matcher.match(incoming, { allowSemantic: verdict.allowed });
  const found = outcome.kind === 'miss' ? undefined : await readAnswerIn(outcome.exchange, opts.blobs);
  const answer = found === undefined ? undefined : inRequestedShape(incoming, found);
  if (outcome.kind !== 'miss' && answer !== undefined) {
    const reshaped =
      answer !== found
        ? ` (recorded ${outcome.exchange.response && isStreamed(outcome.exchange.response) ? 'streamed' : 'not streamed'}, served in the shape asked for)`
        : '';
    const match: MatchInfo = {
      kind: outcome.kind,
      source: outcome.exchange.id,
      stage: outcome.stage,
      score: roundMs(outcome.score),
      reason: outcome.explanation + reshaped,
    };
    await serveRecorded(answer, sink, {
      timing: opts.timing,
      headers: matchHeaders(match),
      open: opts.blobs?.open,
      bytes: (body) => opts.answers.bytesOf(body),
      stream: (response) => opts.answers.streamOf(response),
    });
    // The recorded answer, served as it is: every replay-tape line that serves it carries the same text, made once.
    const text = answer === outcome.exchange && answer.response !== undefined ? opts.answers.textOf(answer.response) : undefined;
    const served = servedExchange(httpCall(req), answer, match, text);
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
  if (opts.onMiss === 'live' && verdict.allowed) return forwardLive(req, sink, { reason: 'forwarded to the upstream on a miss' });
  return missResponse(res, req, incoming, missed, opts, verdict.allowed ? undefined : verdict.reason);
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

/**
 * A recorded answer whose body is stored apart: a replay reads it only when it serves it. One no larger than a body is
 * held at (`STREAMED_BODY_BYTES`) is read in whole now, and served (in the shape asked for) and written to the replay
 * tape as any body is; a larger one, and a stream's events, are streamed from the store as they go out.
 */
async function readAnswerIn(source: Exchange, blobs: ReplayBlobs | undefined): Promise<Exchange> {
  const { response } = source;
  const body = response?.body;
  if (body?.kind !== 'file' || response === undefined || blobs === undefined || body.bytes > STREAMED_BODY_BYTES) return source;
  const bytes = Buffer.concat((await blobs.open(body).toArray()) as Buffer[]);
  return { ...source, response: { ...response, body: inlineBody(body, bytes) } };
}

/** The replay tape's record of a served answer: the request as it came, the recorded answer, how it matched. */
function servedExchange(call: Call, source: Exchange, match: MatchInfo, responseText: WireText<ResponseRecord> | undefined): NewExchange {
  const timing = { ttfbMs: source.timing.ttfbMs, durationMs: elapsedSince(call) };
  return exchangeRecord(call, { response: source.response, error: source.error, timing, responseText }, { match });
}

function missResponse(
  res: ServerResponse,
  req: ProxyRequest,
  incoming: IncomingRequest,
  outcome: Extract<MatchOutcome, { kind: 'miss' }>,
  opts: TapeAnswers,
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
  const call = httpCall(req);
  const response = { status: answer.status, headers: answer.headers, body: { kind: 'json' as const, json: answer.body } };
  opts.out.write(
    exchangeRecord(
      call,
      { response, timing: { durationMs: elapsedSince(call) } },
      { match: { kind: blockedReason ? 'blocked' : 'miss', reason } },
    ),
  );
  opts.log.info({ route: req.route.prefix, path: req.path, reason }, 'replay miss');
  sendError(res, answer);
}

function describeAsked(req: ProxyRequest, incoming: IncomingRequest): string {
  const parts = [`${req.method} ${req.route.prefix}${req.path}`];
  if (incoming.llm?.model) parts.push(`model ${incoming.llm.model}`);
  return parts.join(' ');
}
