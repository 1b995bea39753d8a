/**
 * How an HTTP call is decided, as a value (`engine/decision.ts`): in record, always live; in replay, the first
 * responder that decides it (MCP, `--llm live`, mocks, a library user's), else the tape: the recorded answer it
 * matches (in the shape it asked for), live on a miss when `--on-miss live` allows it, blocked when the side-effect
 * policy forbids the live call, or a miss that says why in the API's own error shape. Nothing here sends or writes:
 * `deliver.ts` acts on the decision.
 */
import type { Logger } from '../../log.js';
import { httpError } from '../../providers/errors.js';
import { missCandidates, missError } from '../../replay/miss.js';
import type { Matcher, MatchOutcome, IncomingRequest } from '../../replay/matcher.js';
import { bodyJson } from '../../tape/body.js';
import { convertResponse, streamConvertible, streamUsageAsked } from '../../providers/stream-convert.js';
import { isStreamed } from '../../tape/framing/framing.js';
import { roundMs } from '../../tape/timing.js';
import type { Exchange, HeaderMap, MatchInfo, ResponseRecord } from '../../tape/schema.js';
import type { LoadedTape } from '../../tape/tape-reader.js';
import type { WireText } from '../../tape/store.js';
import type { Decision, Injected } from '../../engine/decision.js';
import { toIncoming } from '../../http/http-call.js';
import type { ResponseSink } from '../../http/sink.js';
import type { OnMiss, ProxyRequest, ReplayContext, ReplayResponder, ResponderAnswer } from '../../http/types.js';
import type { ReplayBlobs } from '../../http/body-spill.js';
import { inlineBody } from '../../tape/exchange-encoder.js';
import { STREAMED_BODY_BYTES } from '../../tape/large-body.js';
import type { RecordedAnswers } from './recorded-answers.js';

/** What an HTTP call was decided to get. */
export type HttpDecision = Decision &
  (
    | {
        /** Forwarded to the upstream: the request as it came, or with another body (and path) for a modified replay. */
        how: 'forward';
        body?: Buffer | undefined;
        path?: string | undefined;
        /** Set on the client's answer, not on the tape. */
        headers?: HeaderMap | undefined;
      }
    | {
        /** The recorded answer, in the shape the request asked for. */
        how: 'recorded';
        served: Exchange;
        source: Exchange;
        match: MatchInfo;
        /** The recorded answer's line text, when it is served as it was (made once per replay). */
        text?: WireText<ResponseRecord> | undefined;
      }
    | {
        /** An answer tapedeck (or a responder) makes: a mock, a miss, a blocked call, a responder's own. */
        how: 'made';
        answer: ResponderAnswer;
      }
    | {
        /** An answer a fault rule put in the call's place: a status in the provider's shape, or a reset. */
        how: 'injected';
        fault: Injected;
      }
    | {
        /**
         * A protocol that answers the request itself, message by message, each through the same settle (MCP: one
         * replay server, its transports' framing); the request's own settle then has nothing more to record.
         */
        how: 'protocol';
        protocol: (sink: ResponseSink) => Promise<void>;
      }
  );

/** What answering from the tape needs: the tape, its matcher, where the replay tape goes, what to do on a miss. */
export interface TapeAnswers {
  tape: LoadedTape;
  matcher: Matcher;
  onMiss: OnMiss;
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
  /** Why a missed request's recording on the tape is not served (an injected fault, tapedeck's own error), if it has one. */
  unserved?: ((req: IncomingRequest) => string | undefined) | undefined;
}

/** Replay's part: the responders asked first, then the tape. */
export interface ReplaySide extends TapeAnswers {
  responders: readonly ReplayResponder[];
  /** The context responders get. */
  context: ReplayContext;
}

/** Record: every call live. */
export const LIVE: HttpDecision = { from: 'live', how: 'forward' };

/** Decide a replayed call: a responder's decision, else the tape's. */
export async function decideReplay(req: ProxyRequest, side: ReplaySide): Promise<HttpDecision> {
  for (const responder of side.responders) {
    const d = await responder.decide(req, side.context);
    if (d === undefined) continue;
    if ('protocol' in d) return { from: 'tape', how: 'protocol', protocol: d.protocol };
    if ('live' in d) {
      const live = d.live;
      return {
        from: 'live',
        how: 'forward',
        body: live.body,
        path: live.path,
        headers: { 'x-tapedeck-match': 'live', ...live.headers },
        match: { kind: 'live', reason: live.reason ?? 'forwarded to the upstream' },
        notes: live.notes,
      };
    }
    const reason = d.reason ?? `answered by the ${responder.name} responder`;
    const match = d.match ?? { kind: 'mock', reason };
    return { from: match.kind === 'miss' ? 'miss' : 'mock', how: 'made', answer: d.answer, match, notes: d.notes };
  }
  return decideFromTape(req, side);
}

/**
 * The tape's answer: the recorded answer a request matches (in the shape it asked for), live on a miss when
 * `--on-miss live` allows it, else the miss (or the blocked call) that says why.
 */
export async function decideFromTape(req: ProxyRequest, opts: TapeAnswers): Promise<HttpDecision> {
  const incoming = toIncoming(req);
  const verdict = opts.allowLive?.(req) ?? { allowed: true };
  const outcome = await opts.matcher.match(incoming, { allowSemantic: verdict.allowed });
  const found = outcome.kind === 'miss' ? undefined : await readAnswerIn(outcome.exchange, opts.blobs);
  const served = found === undefined ? undefined : inRequestedShape(incoming, found);
  if (outcome.kind !== 'miss' && served !== undefined) {
    const reshaped =
      served !== found
        ? ` (recorded ${outcome.exchange.response && isStreamed(outcome.exchange.response) ? 'streamed' : 'not streamed'}, served in the shape asked for)`
        : '';
    const match: MatchInfo = {
      kind: outcome.kind,
      source: outcome.exchange.id,
      stage: outcome.stage,
      score: roundMs(outcome.score),
      reason: outcome.explanation + reshaped,
    };
    // The recorded answer, served as it is: every replay-tape line that serves it carries the same text, made once.
    const text = served === outcome.exchange && served.response !== undefined ? opts.answers.textOf(served.response) : undefined;
    return { from: 'tape', how: 'recorded', served, source: outcome.exchange, match, text };
  }
  const missed: Extract<MatchOutcome, { kind: 'miss' }> =
    outcome.kind === 'miss'
      ? outcome
      : {
          kind: 'miss',
          candidates: [{ exchange: outcome.exchange, score: outcome.score, differences: [] }],
          explanation: `#${outcome.exchange.id} matched but its recorded answer could not be converted to the requested stream shape`,
        };
  if (opts.onMiss === 'live' && verdict.allowed)
    return {
      from: 'live',
      how: 'forward',
      headers: { 'x-tapedeck-match': 'live' },
      match: { kind: 'live', reason: 'forwarded to the upstream on a miss' },
    };
  return missDecision(req, incoming, missed, opts, verdict.allowed ? undefined : verdict.reason);
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

/** A miss (or a blocked call): the API's own error, saying what was asked, why nothing matched, and the closest recordings. */
function missDecision(
  req: ProxyRequest,
  incoming: IncomingRequest,
  outcome: Extract<MatchOutcome, { kind: 'miss' }>,
  opts: TapeAnswers,
  blockedReason?: string,
): HttpDecision {
  const lenient = opts.onMiss === 'lenient';
  const asked = describeAsked(req, incoming);
  const closest = missCandidates(outcome.candidates, { withPath: true });
  const unserved = opts.unserved?.(incoming);
  const reason = blockedReason ?? (unserved === undefined ? outcome.explanation : `${unserved} (${outcome.explanation})`);
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
  opts.log.info({ route: req.route.prefix, path: req.path, reason }, 'replay miss');
  const from = blockedReason ? 'blocked' : 'miss';
  const error = httpError(miss, incoming.llm);
  return { from, how: 'made', answer: { status: error.status, headers: error.headers, json: error.body }, match: { kind: from, reason } };
}

function describeAsked(req: ProxyRequest, incoming: IncomingRequest): string {
  const parts = [`${req.method} ${req.route.prefix}${req.path}`];
  if (incoming.llm?.model) parts.push(`model ${incoming.llm.model}`);
  return parts.join(' ');
}
