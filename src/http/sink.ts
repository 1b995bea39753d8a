import type { ServerResponse } from 'node:http';
import { errorText, type ErrorAnswer } from '../providers/errors.js';
import type { HeaderMap } from '../tape/schema.js';

/**
 * Where a response goes: the one response model of the proxy. Forwarding, the generic replay and the replay
 * responders (MCP, `--llm live`, mocks) all write to a sink: straight to a node `ServerResponse` (`nodeSink`), or
 * into memory (`BufferSink`) for an answer read before it is answered. `sink-send.ts` has the helpers responders use.
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

/**
 * `sink` with some of its methods replaced and the others delegated to it: a sink may be a class instance, whose
 * methods a spread (`{...sink}`) would lose.
 */
export function overSink(sink: ResponseSink, own: Partial<ResponseSink>): ResponseSink {
  return {
    head: (status, headers) => sink.head(status, headers),
    write: (chunk) => sink.write(chunk),
    onDrain: (cb) => sink.onDrain(cb),
    end: () => sink.end(),
    ...(sink.hold ? { hold: () => sink.hold?.() } : {}),
    cut: () => sink.cut(),
    onClose: (cb) => sink.onClose(cb),
    ...own,
  };
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

/**
 * A sink that keeps the whole answer in memory: for a live answer a responder reads before it answers (one message of
 * an MCP batch). Nobody waits on the other side, so it never pushes back and its client never leaves.
 */
export class BufferSink implements ResponseSink {
  status = 0;
  headers: HeaderMap = {};
  /** The answer ended with a cut rather than an end. */
  wasCut = false;
  private readonly chunks: Uint8Array[] = [];

  head(status: number, headers: HeaderMap): void {
    this.status = status;
    this.headers = headers;
  }
  write(chunk: Uint8Array): boolean {
    this.chunks.push(chunk);
    return true;
  }
  onDrain(): void {}
  end(): void {}
  cut(): void {
    this.wasCut = true;
  }
  onClose(): void {}
  /** The body as text (UTF-8). */
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** Send an error answer (rendered by `providers/errors.ts`) on a node response; cut the connection when an answer had begun. */
export function sendError(res: ServerResponse, answer: ErrorAnswer): void {
  if (res.headersSent) res.destroy();
  else res.writeHead(answer.status, answer.headers).end(errorText(answer));
}
