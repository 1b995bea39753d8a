import { Cancel } from '../engine/cancel.js';
import type { Transform } from 'node:stream';
import { brotliDecompressSync, createBrotliDecompress, createGunzip, createInflate, gunzipSync, inflateSync } from 'node:zlib';
import type { Dispatcher } from 'undici';
import { TapedeckError } from '../errors.js';
import { requestMeaning } from '../http/request-meaning.js';
import { httpError } from '../providers/errors.js';
import { encodeBody, encodeWireBody } from '../tape/body.js';
import { SseSplitter, toSseEvent, round, type SseBlock } from '../tape/sse.js';
import type { Body, ExchangeError, HeaderMap, SseEvent } from '../tape/schema.js';
import type { NewExchange } from '../tape/stores/tape-writer.js';
import type { WireText } from '../tape/store.js';
import { headerMapOf, isEventStream, tapeResponseHeaders, upstreamRequestHeaders, clientHeaderMap } from '../http/headers.js';
import { upstreamUrl } from '../tape/routes.js';
import { exchangeRecord, type Answer, type RecordExtras } from '../engine/record.js';
import { httpCall } from '../http/http-call.js';
import type { ResponseSink } from '../http/sink.js';
import type { ProxyRequest } from '../http/types.js';
import { startEventSpill, startSpill, type BodySpill, type EventSpilling, type Spilling } from '../http/body-spill.js';
import { describeStream, type StreamDescriber } from '../providers/describe.js';
import { redactUrlCredentials } from '../tape/redaction/url-credentials.js';
import { upstreamRequest, type UpstreamResponse } from './upstream-request.js';

export interface ForwardOptions {
  dispatcher: Dispatcher;
  /** Replace the request body sent upstream (modified replay); the tape records what was sent. */
  body?: Buffer;
  /** Extra response headers for the client (e.g. `x-tapedeck-match: live`). */
  headers?: HeaderMap;
  /**
   * Put the finished exchange on the tape before the client gets the last byte; resolves false when it could not
   * be written (the client's answer is then cut, never completed).
   */
  commit?: (ex: NewExchange) => Promise<boolean>;
  /** Aborted when tapedeck stops: a request still waiting for its upstream ends now, its exchange written with the error. */
  stopping?: Cancel;
  /** Where a response body (or event stream) too large to hold goes as it streams (the tape being written). */
  spill?: BodySpill;
  /** On a replay tape: how the live answer came to be asked for (`match`), and notes. */
  record?: RecordExtras;
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
 * Forward a request upstream with undici and stream the answer to the sink as it arrives, while capturing it: an
 * SSE answer event by event with each event's offset from the request start, any other body whole. Upstream
 * failures (refused, timeout, reset mid-stream) reach the client as what they were and are captured as `error`.
 * Resolves with the complete exchange once the response has ended, failed or been abandoned; never rejects.
 */
export async function forwardAndCapture(req: ProxyRequest, sink: ResponseSink, opts: ForwardOptions): Promise<NewExchange> {
  const sent = opts.body ?? req.body;
  // A body too large to hold is in the store already: it goes upstream from there, as a stream.
  const large = opts.body === undefined ? req.large : undefined;
  // The tape keeps what was sent: a replaced body (modified replay) is the request's body on the tape.
  const call = httpCall(req, opts.body === undefined ? undefined : encodeBody(opts.body, req.headers['content-type']));
  const record = (answer: Answer): NewExchange => exchangeRecord(call, answer, opts.record);
  const elapsed = (): number => round(performance.now() - req.t0);

  // A client that goes away cancels its upstream request (and so does tapedeck stopping); the exchange says which.
  const cancel = new Cancel();
  let clientGone = false;
  let onClientGone = (): void => cancel.abort(new Cancelled('CLIENT_CLOSED', 'client went away before the upstream had answered'));
  sink.onClose(() => {
    clientGone = true;
    onClientGone();
  });
  // Stopping ends only a request still waiting for its response head; a stream already flowing ends as its client's
  // connection closes, as it always has (an MCP client's standing stream, say).
  const stop = (): void => cancel.abort(opts.stopping?.reason);
  if (opts.stopping?.aborted) stop();
  opts.stopping?.once('abort', stop);

  let upstream: UpstreamResponse;
  try {
    upstream = await upstreamRequest(upstreamUrl(req.route, req.path, req.query, req.rawQuery), {
      method: req.method,
      headers: upstreamRequestHeaders(req.headers),
      body: large ? large.open() : sent.byteLength > 0 || !['GET', 'HEAD'].includes(req.method) ? sent : undefined,
      dispatcher: opts.dispatcher,
      signal: cancel,
    });
  } catch (err) {
    opts.stopping?.off('abort', stop);
    const error = toExchangeError(err, err instanceof Cancelled ? 'response' : 'connect');
    const said =
      err instanceof Cancelled
        ? `${error.message} (${redactUrlCredentials(req.route.upstream)})`
        : `tapedeck could not reach ${redactUrlCredentials(req.route.upstream)}: ${error.message}`;
    const unreachable = new TapedeckError('UPSTREAM_ERROR', said, {
      details: { code: error.code },
      headers: { 'x-tapedeck-error': error.code },
    });
    const answer = httpError(unreachable, requestMeaning(req).api);
    const ex = record({
      response: { status: answer.status, headers: answer.headers, body: { kind: 'json', json: answer.body } },
      error,
      timing: { durationMs: elapsed() },
    });
    if (clientGone) {
      // Nobody to answer: the exchange is still written, with why it ended.
      if (opts.commit) await opts.commit(ex);
      return ex;
    }
    sink.head(answer.status, { ...answer.headers, ...opts.headers });
    sink.write(Buffer.from(JSON.stringify(answer.body)));
    if (opts.commit && !(await opts.commit(ex))) sink.cut();
    else sink.end();
    return ex;
  }

  opts.stopping?.off('abort', stop);
  const headers = headerMapOf(upstream.headers);
  const stream = isEventStream(headers['content-type']);
  const chunks: Buffer[] = [];
  // A body that grows past the spill limit goes to the store as it comes (not when the tape would hold it encoded).
  const encoded = headers['content-encoding'] !== undefined && headers['content-encoding'].toLowerCase() !== 'identity';
  const spillAt = stream || encoded ? undefined : opts.spill?.limit;
  let size = 0;
  let spilling: Spilling | undefined;
  const events: SseEvent[] = [];
  const splitter = stream ? new SseSplitter() : undefined;
  const body = upstream.body;
  let ttfbMs: number | undefined;
  let failure: ExchangeError | undefined;
  // The events of one turn arrived together (one read from the upstream, one chunk of a decompressor): one offset
  // for all of them, read once.
  let turnAt: number | undefined;
  const capture = (blocks: SseBlock[]): void => {
    if (blocks.length === 0) return;
    if (turnAt === undefined) {
      turnAt = elapsed();
      queueMicrotask(() => (turnAt = undefined));
    }
    for (const block of blocks) events.push(toSseEvent(block, turnAt));
  };
  // A stream that grows past the spill limit goes to the store event by event from then on (`response.eventsFile`),
  // described as it goes (its events are not kept to be read again); a smaller one stays in the line, as it always has.
  const spillEventsAt = splitter && opts.spill?.eventLines !== undefined ? opts.spill.limit : undefined;
  let streamed = 0;
  let eventSpill: EventSpilling | undefined;
  let describer: StreamDescriber | undefined;
  const spillEvents = (): void => {
    if (eventSpill === undefined) {
      eventSpill = opts.spill && startEventSpill(opts.spill);
      if (eventSpill === undefined) return;
      // The request's meaning as computed once for it, unless another body was sent (a modified replay).
      describer = describeStream({ ...call, response: undefined }, opts.body === undefined ? { llm: requestMeaning(req).llm } : undefined);
    }
    if (events.length === 0) return;
    describer?.push(events);
    eventSpill.write(events);
    events.length = 0;
  };
  const split = (bytes: Buffer): void => {
    capture(splitter?.write(bytes) ?? []);
    if (spillEventsAt !== undefined && (streamed += bytes.byteLength) > spillEventsAt) spillEvents();
  };
  // A server may compress its stream whatever accept-encoding said: events are split from the decoded bytes, while
  // the client gets the bytes as they came.
  const inflate = splitter ? decompressor(headers['content-encoding']) : undefined;
  inflate?.on('data', split);
  // What cannot be decoded (a stream that only claimed to be compressed) stays out of the events; the client has
  // the bytes either way. The decoder is done when it ends or fails, whichever comes first.
  inflate?.on('error', () => undefined);
  const inflated = inflate && new Promise<void>((resolve) => inflate.once('end', resolve).once('error', () => resolve()));

  const out = clientHeaderMap(headers);
  // The bytes pass through untouched, so the upstream's length still holds: one write, no chunked encoding.
  if (!stream && headers['content-length'] !== undefined) out['content-length'] = headers['content-length'];
  if (stream) {
    out['cache-control'] ??= 'no-cache';
    out['x-accel-buffering'] = 'no';
  }
  sink.head(upstream.statusCode, opts.headers ? { ...out, ...opts.headers } : out);

  // With `commit`, the answer is not complete for the client until the exchange is on the tape: a client that has the
  // whole answer knows it is recorded, even if tapedeck is killed the next instant. A chunked answer (any stream) is
  // complete only at its last chunk, sent by `end()`, so its events flow at once; an answer with a length is complete
  // at its last byte, so the latest bytes (those of the last turn) are held back.
  const holdLast = opts.commit !== undefined && out['content-length'] !== undefined;
  let held: Buffer | undefined;
  // What arrives in one turn goes to the client in one write at the end of the turn (a microtask: no later than it
  // would have gone), split into events in one pass. One read from the upstream often holds many chunks (an SSE
  // stream's events, each in its own HTTP chunk), and every write to the client costs its own chunk framing and a
  // pass through node's streams.
  let arrived: Buffer[] = [];
  let flushQueued = false;
  /** This turn's bytes, joined, with an uncompressed stream's events split from them (a compressed one's come from `inflate`). */
  const take = (): Buffer | undefined => {
    flushQueued = false;
    if (arrived.length === 0) return undefined;
    const bytes = arrived.length === 1 ? (arrived[0] as Buffer) : Buffer.concat(arrived);
    arrived = [];
    if (splitter && !inflate) split(bytes);
    return bytes;
  };
  const flush = (): void => {
    const bytes = take();
    if (bytes === undefined) return;
    // With a length, the latest bytes wait (see holdLast); those before them go now.
    const now = holdLast ? held : bytes;
    if (holdLast) held = bytes;
    if (now !== undefined && !sink.write(now)) {
      body.pause();
      sink.onDrain(() => body.resume());
    }
  };
  const send = (chunk: Buffer): void => {
    arrived.push(chunk);
    if (!flushQueued) {
      flushQueued = true;
      queueMicrotask(flush);
    }
  };
  const ended = await new Promise<boolean>((resolve) => {
    let done = false;
    const settle = (ok: boolean): void => {
      if (done) return;
      done = true;
      resolve(ok);
    };
    onClientGone = () => {
      failure ??= { code: 'CLIENT_CLOSED', message: 'client went away before the response ended', phase: 'stream' };
      take();
      body.destroy();
      settle(false);
    };
    if (clientGone) onClientGone();
    body.read({
      data: (chunk) => {
        ttfbMs ??= elapsed();
        // An uncompressed stream is split with the rest of the turn's bytes, by `take`.
        if (inflate) {
          if (!inflate.destroyed) inflate.write(chunk);
        } else if (spilling) spilling.write(chunk);
        else if (splitter === undefined) {
          chunks.push(chunk);
          if (spillAt !== undefined && (size += chunk.byteLength) > spillAt && opts.spill) {
            spilling = startSpill(opts.spill, chunks, headers['content-type']);
            chunks.length = 0;
          }
        }
        send(chunk);
      },
      end: () => {
        flush();
        // The answer ends once it is on the tape (a turn or so from now): what was written in this turn waits for
        // the end, and head, body and last chunk go out in one write (a small answer comes in one read).
        if (opts.commit) sink.hold?.();
        if (inflate === undefined || inflated === undefined) return settle(true);
        if (!inflate.destroyed) inflate.end();
        void inflated.then(() => settle(true));
      },
      error: (err) => {
        if (done) return;
        failure ??= toExchangeError(err, 'stream');
        // Pass the reset on once the client has every byte that arrived before it.
        flush();
        if (held !== undefined) sink.write(held);
        held = undefined;
        sink.cut();
        settle(false);
      },
    });
  });

  // The text a JSON answer came as: the tape line takes it as it is.
  let bodyText: WireText<Body> | undefined;
  const response: NonNullable<NewExchange['response']> = { status: upstream.statusCode, headers: tapeResponseHeaders(headers) };
  if (splitter) {
    capture(splitter.end());
    if (eventSpill === undefined) response.events = events;
    else {
      spillEvents();
      try {
        response.eventsFile = await eventSpill.end();
      } catch (err) {
        failure ??= toExchangeError(err, 'stream');
        response.events = [];
      }
    }
    const rest = splitter.rest();
    if (rest !== '') response.tail = rest;
  } else if (spilling) {
    try {
      response.body = (await spilling.end()).body;
    } catch (err) {
      failure ??= toExchangeError(err, 'stream');
      response.body = { kind: 'empty' };
    }
  } else {
    const wire = encodeWireBody(decodeContent(Buffer.concat(chunks), headers['content-encoding']), headers['content-type']);
    response.body = wire.body;
    if (wire.text !== undefined) bodyText = { of: wire.body, text: wire.text };
  }
  const ex = record({ response, error: failure, timing: { ttfbMs, durationMs: elapsed() }, responseBodyText: bodyText });
  if (describer !== undefined && response.eventsFile !== undefined) ex.llm = describer.meaning();
  const committed = opts.commit ? await opts.commit(ex) : true;
  if (ended) {
    if (!committed)
      sink.cut(); // not on the tape: the client must not take it for a complete answer
    else {
      if (held !== undefined) sink.write(held);
      sink.end();
    }
  }
  return ex;
}

/** A streaming decoder for a compressed event stream, or undefined when it is not compressed (or not in a known way). */
function decompressor(encoding: string | undefined): Transform | undefined {
  switch (encoding?.toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      return undefined;
  }
}

/** Decode a compressed body for the tape (the client still gets the original bytes). */
function decodeContent(bytes: Buffer, encoding: string | undefined): Buffer {
  try {
    switch (encoding?.toLowerCase()) {
      case 'gzip':
      case 'x-gzip':
        return gunzipSync(bytes);
      case 'deflate':
        return inflateSync(bytes);
      case 'br':
        return brotliDecompressSync(bytes);
      default:
        return bytes;
    }
  } catch {
    return bytes;
  }
}

export function toExchangeError(err: unknown, phase: ExchangeError['phase']): ExchangeError {
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code ?? (e.name === 'AbortError' ? 'CLIENT_CLOSED' : e.name) ?? 'ERROR';
  const message = e.message ?? String(err);
  return {
    code: String(code),
    message: e.cause?.message && !message.includes(e.cause.message) ? `${message}: ${e.cause.message}` : message,
    phase,
  };
}
