import { gunzipSync, inflateSync, brotliDecompressSync } from 'node:zlib';
import { request, type Dispatcher } from 'undici';
import { TapedeckError } from '../errors.js';
import { detectLlmApi } from '../providers/detect.js';
import { httpError } from '../providers/errors.js';
import { encodeBody } from '../tape/body.js';
import { SseSplitter, toSseEvent, round } from '../tape/sse.js';
import type { ExchangeError, HeaderMap, SseEvent } from '../tape/schema.js';
import type { NewExchange } from '../tape/tape-writer.js';
import { headerMapOf, isEventStream, tapeHeaders, upstreamRequestHeaders, clientHeaderMap } from './headers.js';
import { upstreamUrl } from '../tape/routes.js';
import type { ResponseSink } from './sink.js';
import type { ProxyRequest } from './types.js';

export interface ForwardOptions {
  dispatcher: Dispatcher;
  /** Replace the request body sent upstream (modified replay); the tape records what was sent. */
  body?: Buffer;
  /** Extra response headers for the client (e.g. `x-tapedeck-match: live`). */
  headers?: HeaderMap;
}

/**
 * Forward a request upstream with undici and stream the answer to the sink as it arrives, while capturing it: an
 * SSE answer event by event with each event's offset from the request start, any other body whole. Upstream
 * failures (refused, timeout, reset mid-stream) reach the client as what they were and are captured as `error`.
 * Resolves with the complete exchange once the response has ended, failed or been abandoned; never rejects.
 */
export async function forwardAndCapture(req: ProxyRequest, sink: ResponseSink, opts: ForwardOptions): Promise<NewExchange> {
  const sent = opts.body ?? req.body;
  const base: Omit<NewExchange, 'timing'> = {
    startedAt: req.startedAt.toISOString(),
    offsetMs: round(req.offsetMs),
    transport: 'http',
    route: req.route.prefix,
    upstream: req.route.upstream,
    request: {
      method: req.method,
      path: req.path,
      query: req.query,
      headers: tapeHeaders(req.headers),
      body: encodeBody(sent, req.headers['content-type']),
    },
  };
  const elapsed = (): number => round(performance.now() - req.t0);

  let upstream: Dispatcher.ResponseData;
  try {
    upstream = await request(upstreamUrl(req.route, req.path, req.query, req.rawQuery), {
      method: req.method as Dispatcher.HttpMethod,
      headers: upstreamRequestHeaders(req.headers),
      body: sent.byteLength > 0 || !['GET', 'HEAD'].includes(req.method) ? sent : undefined,
      dispatcher: opts.dispatcher,
    });
  } catch (err) {
    const error = toExchangeError(err, 'connect');
    const unreachable = new TapedeckError('UPSTREAM_ERROR', `tapedeck could not reach ${req.route.upstream}: ${error.message}`, {
      details: { code: error.code },
      headers: { 'x-tapedeck-error': error.code },
    });
    const answer = httpError(unreachable, detectLlmApi(req.route.prefix, req.path, req.method, req.route.upstream));
    sink.head(answer.status, { ...answer.headers, ...opts.headers });
    sink.write(Buffer.from(JSON.stringify(answer.body)));
    sink.end();
    return {
      ...base,
      error,
      response: { status: answer.status, headers: answer.headers, body: { kind: 'json', json: answer.body } },
      timing: { durationMs: elapsed() },
    };
  }

  const headers = headerMapOf(upstream.headers);
  const stream = isEventStream(headers['content-type']);
  const chunks: Buffer[] = [];
  const events: SseEvent[] = [];
  const splitter = stream ? new SseSplitter() : undefined;
  const decoder = new TextDecoder();
  const body = upstream.body;
  let ttfbMs: number | undefined;
  let failure: ExchangeError | undefined;

  const out = clientHeaderMap(headers);
  // The bytes pass through untouched, so the upstream's length still holds: one write, no chunked encoding.
  if (!stream && headers['content-length'] !== undefined) out['content-length'] = headers['content-length'];
  if (stream) {
    out['cache-control'] ??= 'no-cache';
    out['x-accel-buffering'] = 'no';
  }
  sink.head(upstream.statusCode, opts.headers ? { ...out, ...opts.headers } : out);

  await new Promise<void>((resolve) => {
    let done = false;
    const settle = (): void => {
      if (done) return;
      done = true;
      resolve();
    };
    sink.onClose(() => {
      failure ??= { code: 'CLIENT_CLOSED', message: 'client went away before the response ended', phase: 'stream' };
      body.destroy();
      settle();
    });
    body.on('data', (chunk: Buffer) => {
      ttfbMs ??= elapsed();
      if (splitter) {
        for (const block of splitter.push(decoder.decode(chunk, { stream: true }))) events.push(toSseEvent(block, elapsed()));
      } else {
        chunks.push(chunk);
      }
      if (!sink.write(chunk)) {
        body.pause();
        sink.onDrain(() => body.resume());
      }
    });
    body.on('end', () => {
      sink.end();
      settle();
    });
    body.on('error', (err: Error) => {
      if (done) return;
      failure ??= toExchangeError(err, 'stream');
      // Pass the reset on once the client has every byte that arrived before it.
      sink.cut();
      settle();
    });
  });

  const response: NonNullable<NewExchange['response']> = { status: upstream.statusCode, headers: tapeHeaders(headers) };
  if (splitter) {
    for (const block of splitter.push(decoder.decode())) events.push(toSseEvent(block, elapsed()));
    response.events = events;
    const rest = splitter.rest();
    if (rest !== '') response.tail = rest;
  } else {
    response.body = encodeBody(decodeContent(Buffer.concat(chunks), headers['content-encoding']), headers['content-type']);
  }
  const ex: NewExchange = { ...base, response, timing: { ttfbMs, durationMs: elapsed() } };
  if (failure) ex.error = failure;
  return ex;
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
