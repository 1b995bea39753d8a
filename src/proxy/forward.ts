import { gunzipSync, inflateSync, brotliDecompressSync } from 'node:zlib';
import { request, type Dispatcher } from 'undici';
import { encodeBody } from '../tape/body.js';
import { SseSplitter, toSseEvent, round } from '../tape/sse.js';
import type { ExchangeError, SseEvent } from '../tape/schema.js';
import type { NewExchange } from '../tape/tape-writer.js';
import { clientResponseHeaders, headerMapOf, isEventStream, tapeHeaders, upstreamRequestHeaders } from './headers.js';
import { upstreamUrl } from './routes.js';
import type { ProxyRequest } from './types.js';

export interface ForwardOptions {
  dispatcher: Dispatcher;
  /** Replace the request body sent upstream (modified replay); the tape records what was sent. */
  body?: Buffer;
}

export interface Forwarded {
  /** The response to stream to the client, chunk by chunk as it arrives. */
  response: Response;
  /** Resolves with the complete exchange once the response has ended, failed or been abandoned. Never rejects. */
  exchange: Promise<NewExchange>;
}

/**
 * Forward a request upstream with undici and stream the answer back untouched, while capturing it: an SSE answer
 * event by event with each event's offset from the request start, any other body whole. Upstream failures (refused,
 * timeout, reset mid-stream) are passed to the client as what they were and captured as `error`.
 */
export async function forwardAndCapture(req: ProxyRequest, opts: ForwardOptions): Promise<Forwarded> {
  const sent = opts.body ?? req.body;
  const url = upstreamUrl(req.route, req.path, req.query);
  const base: Omit<NewExchange, 'timing'> = {
    startedAt: req.startedAt.toISOString(),
    offsetMs: round(req.offsetMs),
    transport: 'http',
    route: req.route.prefix,
    upstream: req.route.upstream,
    request: { method: req.method, path: req.path, query: req.query, headers: tapeHeaders(req.headers), body: encodeBody(sent, req.headers['content-type']) },
  };
  const elapsed = (): number => round(performance.now() - req.t0);

  let upstream: Dispatcher.ResponseData;
  try {
    upstream = await request(url, {
      method: req.method as Dispatcher.HttpMethod,
      headers: upstreamRequestHeaders(req.headers),
      body: sent.byteLength > 0 || !['GET', 'HEAD'].includes(req.method) ? sent : undefined,
      dispatcher: opts.dispatcher,
      signal: req.raw.signal,
    });
  } catch (err) {
    const error = toExchangeError(err, 'connect');
    const body = JSON.stringify({ error: { type: 'tapedeck_upstream_error', code: error.code, message: `tapedeck could not reach ${req.route.upstream}: ${error.message}` } });
    const exchange: NewExchange = { ...base, error, response: { status: 502, headers: { 'content-type': 'application/json' }, body: { kind: 'json', json: JSON.parse(body) } }, timing: { durationMs: elapsed() } };
    return { response: new Response(body, { status: 502, headers: { 'content-type': 'application/json', 'x-tapedeck-error': error.code } }), exchange: Promise.resolve(exchange) };
  }

  const headers = headerMapOf(upstream.headers);
  const stream = isEventStream(headers['content-type']);
  const chunks: Buffer[] = [];
  const events: SseEvent[] = [];
  const splitter = stream ? new SseSplitter() : undefined;
  const decoder = new TextDecoder();
  let ttfbMs: number | undefined;
  let failure: ExchangeError | undefined;
  let settle!: (ex: NewExchange) => void;
  const exchange = new Promise<NewExchange>((resolve) => (settle = resolve));
  let settled = false;

  const finish = (): void => {
    if (settled) return;
    settled = true;
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
    settle(ex);
  };

  const body = upstream.body;
  const onChunk = (chunk: Buffer): void => {
    ttfbMs ??= elapsed();
    if (splitter) {
      for (const block of splitter.push(decoder.decode(chunk, { stream: true }))) events.push(toSseEvent(block, elapsed()));
    } else {
      chunks.push(chunk);
    }
  };
  // Push-based: chunks are taken as undici emits them ('data'), so nothing that arrived before an upstream reset
  // is lost (a stream that errors discards what it still buffers). Backpressure pauses the upstream body.
  const webBody = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        body.on('data', (chunk: Buffer) => {
          onChunk(chunk);
          controller.enqueue(chunk);
          if ((controller.desiredSize ?? 1) <= 0) body.pause();
        });
        body.on('end', () => {
          finish();
          controller.close();
        });
        body.on('error', (err: Error) => {
          if (settled) return;
          failure = toExchangeError(err, 'stream');
          finish();
          // Pass the reset on once the client has every byte that arrived before it: the client sees its
          // connection cut, as it would have without the proxy.
          cutWhenDrained(controller, err);
        });
      },
      pull(controller) {
        if (failure !== undefined) cutWhenDrained(controller, new Error(failure.message));
        else body.resume();
      },
      cancel(reason) {
        failure ??= { code: 'CLIENT_CLOSED', message: `client went away before the response ended${reason ? ` (${String(reason)})` : ''}`, phase: 'stream' };
        body.destroy();
        finish();
      },
    },
    { highWaterMark: QUEUE_CHUNKS },
  );
  const out = clientResponseHeaders(headers);
  if (stream) {
    out.set('cache-control', headers['cache-control'] ?? 'no-cache');
    out.set('x-accel-buffering', 'no');
  }
  const noBody = req.method === 'HEAD' || upstream.statusCode === 204 || upstream.statusCode === 304;
  if (noBody) {
    body.resume();
    finish();
  }
  return { response: new Response(noBody ? null : webBody, { status: upstream.statusCode, headers: out }), exchange };
}

/** High-water mark (in chunks) of every client stream the proxy builds; `cutWhenDrained` relies on it. */
export const QUEUE_CHUNKS = 16;

/** Error the client stream (which cuts the client connection) once every queued chunk has been written. */
export function cutWhenDrained(controller: ReadableStreamDefaultController<Uint8Array>, err: Error): void {
  if ((controller.desiredSize ?? 0) < QUEUE_CHUNKS) return; // called again on the next pull
  // The last chunk was handed to the socket in this tick; node flushes corked writes on nextTick. Cut after that.
  setImmediate(() => {
    try {
      controller.error(err);
    } catch {
      // already closed or cancelled by the client
    }
  });
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
  return { code: String(code), message: e.cause?.message && !message.includes(e.cause.message) ? `${message}: ${e.cause.message}` : message, phase };
}
