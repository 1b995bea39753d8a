import { decodeBody } from '../tape/body.js';
import { sseEventText } from '../tape/sse.js';
import type { Exchange } from '../tape/schema.js';
import { cutWhenDrained, QUEUE_CHUNKS } from './forward.js';
import { clientResponseHeaders } from './headers.js';
import type { Timing } from './types.js';

/** Milliseconds to wait for a recorded gap under a timing mode. */
export function scaledDelay(gapMs: number, timing: Timing): number {
  if (timing.mode === 'instant' || gapMs <= 0) return 0;
  return timing.mode === 'recorded' ? gapMs : gapMs * timing.factor;
}

const sleep = (ms: number): Promise<void> => (ms <= 0 ? Promise.resolve() : new Promise((r) => setTimeout(r, ms)));

/**
 * Build the response for a recorded exchange: same status, headers and body; a stream event by event with its
 * original boundaries (and gaps, under `recorded` / scaled timing); a recorded upstream reset cuts the connection again.
 */
export async function serveRecorded(ex: Exchange, opts: { timing: Timing; headers: Record<string, string> }): Promise<Response> {
  const recorded = ex.response;
  if (recorded === undefined) {
    const body = JSON.stringify({ error: { type: 'tapedeck_upstream_error', code: ex.error?.code ?? 'ERROR', message: ex.error?.message ?? 'no response was recorded' } });
    return new Response(body, { status: 502, headers: { 'content-type': 'application/json', ...opts.headers } });
  }
  const headers = clientResponseHeaders(recorded.headers, { decoded: true });
  for (const [k, v] of Object.entries(opts.headers)) headers.set(k, v);
  const cut = ex.error?.phase === 'stream' && ex.error.code !== 'CLIENT_CLOSED' ? new Error(`recorded upstream failure: ${ex.error.message}`) : undefined;
  const encoder = new TextEncoder();

  // The pieces to send, each with the delay before it.
  const pieces: { delayMs: number; bytes: Uint8Array }[] = [];
  if (recorded.events !== undefined) {
    headers.set('x-accel-buffering', 'no');
    let last = 0;
    for (const ev of recorded.events) {
      pieces.push({ delayMs: scaledDelay(ev.offsetMs - last, opts.timing), bytes: encoder.encode(sseEventText(ev)) });
      last = ev.offsetMs;
    }
    if (recorded.tail !== undefined) pieces.push({ delayMs: 0, bytes: encoder.encode(recorded.tail) });
  } else {
    await sleep(scaledDelay(ex.timing.durationMs, opts.timing));
    const bytes = decodeBody(recorded.body);
    if (bytes.byteLength > 0) pieces.push({ delayMs: 0, bytes });
  }
  const noBody = recorded.status === 204 || recorded.status === 304;
  if (noBody) return new Response(null, { status: recorded.status, headers });
  if (cut === undefined && pieces.every((p) => p.delayMs === 0)) {
    // Nothing to wait for: one write, boundaries kept in the bytes.
    return new Response(Buffer.concat(pieces.map((p) => p.bytes)), { status: recorded.status, headers });
  }
  let i = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const piece = pieces[i];
        if (piece === undefined) {
          if (cut) cutWhenDrained(controller, cut);
          else controller.close();
          return;
        }
        i++;
        await sleep(piece.delayMs);
        controller.enqueue(piece.bytes);
      },
    },
    { highWaterMark: QUEUE_CHUNKS },
  );
  return new Response(stream, { status: recorded.status, headers });
}
