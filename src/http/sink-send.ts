/**
 * What replay responders write to a sink (`sink.ts`) most often, so they stay short: a whole answer (text, JSON, an
 * error rendered by `providers/errors.ts`), and a stream written at the client's pace (SSE), which waits for a slow
 * client rather than buffering without bound, and stops for one that has gone.
 */
import { errorText, type ErrorAnswer } from '../providers/errors.js';
import { serializeSseFields } from '../tape/framing/sse.js';
import type { HeaderMap } from '../tape/schema.js';
import type { ResponseSink } from './sink.js';

/** A whole answer at once (in one turn, so node sends head, body and end in one write); no body when `body` is undefined or empty. */
export function sendBody(sink: ResponseSink, status: number, headers: HeaderMap, body?: string | Uint8Array): void {
  sink.head(status, headers);
  if (body !== undefined && body.length > 0) sink.write(typeof body === 'string' ? Buffer.from(body) : body);
  sink.end();
}

/** A JSON answer (`content-type: application/json` unless `headers` says otherwise); no body when `json` is undefined. */
export function sendJson(sink: ResponseSink, status: number, json: unknown, headers: HeaderMap = {}): void {
  if (json === undefined) sendBody(sink, status, headers);
  else sendBody(sink, status, { 'content-type': 'application/json', ...headers }, JSON.stringify(json));
}

/** An error as `providers/errors.ts` renders it (`httpError`, `rpcHttpError`). */
export function sendErrorAnswer(sink: ResponseSink, answer: ErrorAnswer): void {
  sendBody(sink, answer.status, answer.headers, errorText(answer));
}

/** A stream written at the client's pace. */
export interface PacedStream {
  /** Write `chunk`: resolves true once the client can take more, false once it has gone (write no more then). */
  write(chunk: string | Uint8Array): Promise<boolean>;
  /** The client went away before the end. */
  readonly gone: boolean;
  end(): void;
}

const TRUE = Promise.resolve(true);
const FALSE = Promise.resolve(false);

/** Write to `sink` at the client's pace (the head already sent); `onGone` runs once if the client leaves before `end`. */
export function paced(sink: ResponseSink, onGone?: () => void): PacedStream {
  let gone = false;
  const waiting = new Set<(ok: boolean) => void>();
  sink.onClose(() => {
    gone = true;
    for (const resolve of waiting) resolve(false);
    waiting.clear();
    onGone?.();
  });
  return {
    get gone() {
      return gone;
    },
    write(chunk) {
      if (gone) return FALSE;
      if (sink.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)) return TRUE;
      return new Promise<boolean>((resolve) => {
        waiting.add(resolve);
        sink.onDrain(() => {
          if (waiting.delete(resolve)) resolve(!gone);
        });
      });
    },
    end() {
      if (!gone) sink.end();
    },
  };
}

/** The head of an event stream tapedeck serves itself. */
export const SSE_HEADERS: Readonly<HeaderMap> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
};

/** Open an event stream (status and head sent now) to write at the client's pace; see {@link paced}. */
export function openSse(sink: ResponseSink, status: number, headers: HeaderMap, onGone?: () => void): PacedStream {
  sink.head(status, { ...SSE_HEADERS, ...headers });
  return paced(sink, onGone);
}

/** One SSE event as it goes on the wire. */
export function sseEvent(event: string, data: string): string {
  return serializeSseFields({ event, data });
}
