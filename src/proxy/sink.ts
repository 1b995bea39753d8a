import type { ServerResponse } from 'node:http';
import { TapedeckError } from '../errors.js';
import { errorText, type ErrorAnswer } from '../providers/errors.js';
import type { HeaderMap } from '../tape/schema.js';

/**
 * Where a response goes: straight to a node `ServerResponse` (the hot path), or into a web `Response` (for
 * responders, which speak the fetch API). Forwarding and replay write to a sink and never care which.
 */
export interface ResponseSink {
  head(status: number, headers: HeaderMap): void;
  /** Returns false when the client is not keeping up: wait for `onDrain` before writing more. */
  write(chunk: Uint8Array): boolean;
  onDrain(cb: () => void): void;
  end(): void;
  /**
   * The answer is about to end (`end` or `cut` follows shortly): what is written from now, and what this turn wrote
   * and the transport has not sent yet, goes out with the end in one write. Optional: a sink without it writes as usual.
   */
  hold?(): void;
  /** Cut the connection once everything written so far has been flushed (to pass an upstream reset on). */
  cut(): void;
  /** Called once if the client goes away before `end`. */
  onClose(cb: () => void): void;
}

/** Node headers from a tape header map: multi-valued `set-cookie` (newline-joined on the tape) becomes an array. */
export function nodeHeaders(headers: HeaderMap): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const k in headers) {
    const v = headers[k] as string;
    out[k] = k === 'set-cookie' && v.includes('\n') ? v.split('\n') : v;
  }
  return out;
}

export function nodeSink(res: ServerResponse): ResponseSink {
  let written = false;
  let holding = false;
  return {
    head(status, headers) {
      res.writeHead(status, nodeHeaders(headers));
      // SSE: the client sees the stream open before the first event, by the end of this turn of the event loop. A first
      // event written in the same turn carries the head in its own write (one syscall rather than two per stream).
      // (`headersSent` is true from `writeHead` on, before anything is sent: hence `written`.)
      if (headers['content-type']?.startsWith('text/event-stream'))
        setImmediate(() => {
          if (!written && !res.destroyed && !res.writableEnded) res.flushHeaders();
        });
    },
    write: (chunk) => {
      written = true;
      return res.write(chunk);
    },
    onDrain: (cb) => void res.once('drain', cb),
    hold() {
      if (holding || res.destroyed) return;
      holding = true;
      // node corks the socket for the rest of the turn on every write: corking it once more keeps it so until
      // `end()`, which uncorks it fully.
      res.cork();
    },
    end: () => void res.end(),
    cut() {
      if (holding) {
        holding = false;
        res.uncork();
      }
      // An empty write's callback runs once everything before it has reached the socket.
      if (res.destroyed) return;
      if (!res.headersSent) res.flushHeaders();
      res.write('', () => res.destroy());
    },
    onClose(cb) {
      res.once('close', () => {
        if (!res.writableFinished) cb();
      });
    },
  };
}

/** A sink that becomes a web `Response`: resolves with it once the head is written. */
export function webSink(): { sink: ResponseSink; response: Promise<Response> } {
  let resolveResponse!: (r: Response) => void;
  const response = new Promise<Response>((r) => (resolveResponse = r));
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let drainCb: (() => void) | undefined;
  let closeCb: (() => void) | undefined;
  let cutPending = false;
  let ended = false;
  const HWM = 16;
  const stream = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      pull() {
        if (cutPending && (controller.desiredSize ?? 0) >= HWM) {
          cutPending = false;
          setImmediate(() => controller.error(new TapedeckError('UPSTREAM_ERROR', 'upstream connection was cut')));
          return;
        }
        const cb = drainCb;
        drainCb = undefined;
        cb?.();
      },
      cancel() {
        if (!ended) closeCb?.();
      },
    },
    { highWaterMark: HWM },
  );
  const sink: ResponseSink = {
    head(status, headers) {
      const h = new Headers();
      for (const [k, v] of Object.entries(nodeHeaders(headers))) {
        if (Array.isArray(v)) for (const x of v) h.append(k, x);
        else h.set(k, v);
      }
      const noBody = status === 204 || status === 304;
      resolveResponse(new Response(noBody ? null : stream, { status, headers: h }));
    },
    write(chunk) {
      controller.enqueue(chunk);
      return (controller.desiredSize ?? 0) > 0;
    },
    onDrain(cb) {
      drainCb = cb;
    },
    end() {
      ended = true;
      controller.close();
    },
    cut() {
      ended = true;
      cutPending = true;
      if ((controller.desiredSize ?? 0) >= HWM) {
        cutPending = false;
        setImmediate(() => controller.error(new TapedeckError('UPSTREAM_ERROR', 'upstream connection was cut')));
      }
    },
    onClose(cb) {
      closeCb = cb;
    },
  };
  return { sink, response };
}

/** Send an error answer (rendered by `providers/errors.ts`) on a node response; cut the connection when an answer had begun. */
export function sendError(res: ServerResponse, answer: ErrorAnswer): void {
  if (res.headersSent) res.destroy();
  else res.writeHead(answer.status, answer.headers).end(errorText(answer));
}

/** Write a web `Response` (from a responder) to a node `ServerResponse`, streaming its body with backpressure. */
export async function sendWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((v, k) => {
    if (k !== 'set-cookie') headers[k] = v;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  if (headers['content-type']?.toString().startsWith('text/event-stream')) res.flushHeaders();
  const reader = response.body.getReader();
  res.once('close', () => {
    if (!res.writableFinished) void reader.cancel().catch(() => undefined);
  });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise<void>((r) => res.once('drain', r).once('close', r));
      if (res.destroyed) break;
    }
    res.end();
  } catch {
    // The responder's stream failed (or the client left): cut the connection rather than end it cleanly.
    res.destroy();
  }
}
