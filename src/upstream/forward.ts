/**
 * The live forward: one request to its upstream, answered to its client as the answer arrives, and described as the
 * tape keeps it (an `Answer`), which its caller commits before the client gets the end (the tee, `engine/tee.ts`).
 * This file holds the request's side (its signing, its cancellation, a failure before any answer, the commit before
 * the end); the answer's body on its way is `answer-stream.ts`.
 */
import { Cancel } from '../engine/cancel.js';
import type { Call } from '../engine/call.js';
import type { Dispatcher } from 'undici';
import { TapedeckError } from '../errors.js';
import { requestMeaning } from '../http/request-meaning.js';
import { httpError } from '../providers/errors.js';
import { signerFor } from '../providers/registry.js';
import { signRequest, type RequestSigner } from '../providers/signing.js';
import { encodeBody } from '../tape/body.js';
import { roundMs } from '../tape/timing.js';
import type { HeaderMap } from '../tape/schema.js';
import { upstreamRequestHeaders } from '../http/headers.js';
import { upstreamUrl } from '../tape/routes.js';
import type { Answer } from '../engine/record.js';
import { httpCall } from '../http/http-call.js';
import type { ResponseSink } from '../http/sink.js';
import type { ProxyRequest } from '../http/types.js';
import type { BodySpill } from '../http/body-spill.js';
import { redactUrlCredentials } from '../tape/redaction/url-credentials.js';
import { AnswerStream, type Forwarded } from './answer-stream.js';
import { toExchangeError } from './exchange-error.js';
import { upstreamRequest, type UpstreamResponse } from './upstream-request.js';

export { toExchangeError } from './exchange-error.js';

export interface ForwardOptions {
  dispatcher: Dispatcher;
  /** Replace the request body sent upstream (modified replay); the tape records what was sent. */
  body?: Buffer;
  /** Extra response headers for the client (e.g. `x-tapedeck-match: live`). */
  headers?: HeaderMap;
  /**
   * Put the finished answer on the tape before the client gets the last byte (`Tee.commit`); resolves false when it
   * could not be written (the client's answer is then cut, never completed).
   */
  commit?: (answer: Answer) => Promise<boolean>;
  /** The call as the tape records it (default: the request, with `body` in its place when given). */
  call?: Call;
  /** Aborted when tapedeck stops: a request still waiting for its upstream ends now, its exchange written with the error. */
  stopping?: Cancel;
  /** Where a response body (or event stream) too large to hold goes as it streams (the tape being written). */
  spill?: BodySpill;
}

/** A request its provider's signer could not sign (no credentials): the client is told so, and the tape keeps why. */
class SigningFailed extends Error {
  readonly code = 'SIGNING_FAILED';
}

/** The URL and headers of a request signed for its upstream (`providers/signing.ts`). */
async function signed(
  signer: RequestSigner,
  method: string,
  url: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
): Promise<{ url: string; headers: Record<string, string> }> {
  try {
    const out = await signRequest(signer, { method, url: new URL(url), headers, body });
    return { url: out.url.href, headers: out.headers };
  } catch (err) {
    throw new SigningFailed(`could not sign the request (${signer.name}): ${(err as Error).message}`);
  }
}

/** Why an upstream request was cancelled: the reason its exchange carries. */
class Cancelled extends Error {
  constructor(
    readonly code: 'CLIENT_CLOSED' | 'SHUTDOWN',
    message: string,
  ) {
    super(message);
  }
}

/** The abort reason when tapedeck stops (`stopping` in `ForwardOptions`). */
export function shutdownReason(): Error {
  return new Cancelled('SHUTDOWN', 'tapedeck stopped before the upstream had answered');
}

/**
 * Forward a request upstream with undici and stream the answer to the sink as it arrives, while capturing it: a
 * stream event by event (its framing's, `tape/framing/`) with each event's offset from the request start, any other
 * body whole. Upstream failures (refused, timeout, reset mid-stream) reach the client as what they were and are
 * captured as `error`. Resolves with the answer as the tape keeps it once the response has ended, failed or been
 * abandoned; never rejects.
 */
export async function forwardAndCapture(req: ProxyRequest, sink: ResponseSink, opts: ForwardOptions): Promise<Answer> {
  const sent = opts.body ?? req.body;
  // A body too large to hold is in the store already: it goes upstream from there, as a stream.
  const large = opts.body === undefined ? req.large : undefined;
  // The tape keeps what was sent: a replaced body (modified replay) is the request's body on the tape.
  const fwd = new Forwarding(
    req,
    sink,
    opts,
    opts.call ?? httpCall(req, opts.body === undefined ? undefined : encodeBody(opts.body, req.headers['content-type'])),
  );

  let upstream: UpstreamResponse;
  try {
    let url = upstreamUrl(req.route, req.path, req.query, req.rawQuery);
    let headers = upstreamRequestHeaders(req.headers);
    const body = large === undefined && (sent.byteLength > 0 || !['GET', 'HEAD'].includes(req.method)) ? sent : undefined;
    // A provider that signs its requests (AWS SigV4) gets them signed again for the upstream, as they leave.
    const signer = signerFor(requestMeaning(req).api);
    if (signer !== undefined)
      ({ url, headers } = await signed(signer, req.method, url, headers, large === undefined ? (body ?? sent) : undefined));
    upstream = await upstreamRequest(url, {
      method: req.method,
      headers,
      body: large ? large.open() : body,
      dispatcher: opts.dispatcher,
      signal: fwd.cancel,
    });
  } catch (err) {
    fwd.answered();
    return answerUnreachable(fwd, err);
  }
  fwd.answered();

  const answer = new AnswerStream(fwd, upstream);
  answer.sendHead();
  fwd.answer = answer;
  const ended = await answer.relay();
  const response = await answer.tapeResponse();
  const got: Answer = {
    response,
    error: answer.failure,
    timing: { ttfbMs: answer.ttfbMs, durationMs: fwd.elapsed() },
    responseBodyText: answer.bodyText,
  };
  if (answer.describer !== undefined && response.eventsFile !== undefined) got.llm = answer.describer.meaning();
  const committed = opts.commit ? await opts.commit(got) : true;
  if (ended) answer.finish(committed);
  return got;
}

/**
 * One request on its way upstream: its call (what the tape records of the request), its cancellation, and whether its
 * client is still there. A client that goes away cancels its upstream request (and so does tapedeck stopping), the
 * exchange says which; once the answer flows, a client that goes away ends the answer instead.
 */
class Forwarding implements Forwarded {
  readonly req: ProxyRequest;
  readonly sink: ResponseSink;
  readonly opts: ForwardOptions;
  readonly call: Call;
  readonly cancel = new Cancel();
  clientGone = false;
  /** The answer flowing to the client, once its head is sent. */
  answer: AnswerStream | undefined;
  // Stopping ends only a request still waiting for its response head; a stream already flowing ends as its client's
  // connection closes, as it always has (an MCP client's standing stream, say).
  private readonly stop = (): void => this.cancel.abort(this.opts.stopping?.reason);

  constructor(req: ProxyRequest, sink: ResponseSink, opts: ForwardOptions, call: Call) {
    this.req = req;
    this.sink = sink;
    this.opts = opts;
    this.call = call;
    sink.onClose(() => this.clientClosed());
    if (opts.stopping?.aborted) this.stop();
    opts.stopping?.once('abort', this.stop);
  }

  /** The upstream answered (or failed to): tapedeck stopping no longer cancels the request. */
  answered(): void {
    this.opts.stopping?.off('abort', this.stop);
  }

  elapsed(): number {
    return roundMs(performance.now() - this.req.t0);
  }

  private clientClosed(): void {
    this.clientGone = true;
    if (this.answer !== undefined) this.answer.clientLeft();
    else this.cancel.abort(new Cancelled('CLIENT_CLOSED', 'client went away before the upstream had answered'));
  }
}

/**
 * No answer from the upstream (refused, timed out, cancelled): the client gets an error in its API's shape that says
 * so, and the exchange records it, with why it ended.
 */
async function answerUnreachable(fwd: Forwarding, err: unknown): Promise<Answer> {
  const { req, sink, opts } = fwd;
  const error = toExchangeError(err, err instanceof Cancelled ? 'response' : 'connect');
  const upstream = redactUrlCredentials(req.route.upstream);
  const said =
    err instanceof Cancelled
      ? `${error.message} (${upstream})`
      : err instanceof SigningFailed
        ? `tapedeck ${error.message}, so it did not send it to ${upstream}`
        : `tapedeck could not reach ${upstream}: ${error.message}`;
  const unreachable = new TapedeckError('UPSTREAM_ERROR', said, {
    details: { code: error.code },
    headers: { 'x-tapedeck-error': error.code },
  });
  const answer = httpError(unreachable, requestMeaning(req).api);
  const got: Answer = {
    response: { status: answer.status, headers: answer.headers, body: { kind: 'json', json: answer.body } },
    error,
    timing: { durationMs: fwd.elapsed() },
    // Not the upstream's answer: a replay never serves it as a recording (`replay/servable.ts`).
    notes: { answeredBy: 'tapedeck' },
  };
  if (fwd.clientGone) {
    // Nobody to answer: the exchange is still written, with why it ended.
    if (opts.commit) await opts.commit(got);
    return got;
  }
  sink.head(answer.status, { ...answer.headers, ...opts.headers });
  sink.write(Buffer.from(JSON.stringify(answer.body)));
  if (opts.commit && !(await opts.commit(got))) sink.cut();
  else sink.end();
  return got;
}
