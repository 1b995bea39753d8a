import { decodeBody } from '../tape/body.js';
import { sseEventText } from '../tape/sse.js';
import type { Exchange } from '../tape/schema.js';
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
 * original boundaries (and gaps, under `recorded` / scaled timing); a recorded reset cuts the connection again.
 */
export async function serveRecorded(ex: Exchange, opts: { timing: Timing; headers: Record<string, string>; resetClient: () => void }): Promise<Response> {
  const recorded = ex.response;
  if (recorded === undefined) {
    const body = JSON.stringify({ error: { type: 'tapedeck_upstream_error', code: ex.error?.code ?? 'ERROR', message: ex.error?.message ?? 'no response was recorded' } });
    return new Response(body, { status: 502, headers: { 'content-type': 'application/json', ...opts.headers } });
  }
  const headers = clientResponseHeaders(recorded.headers, { decoded: true });
  for (const [k, v] of Object.entries(opts.headers)) headers.set(k, v);
  const cutAtEnd = ex.error?.phase === 'stream' && ex.error.code !== 'CLIENT_CLOSED';

  if (recorded.events !== undefined) {
    const events = recorded.events;
    const tail = recorded.tail;
    const encoder = new TextEncoder();
    headers.set('x-accel-buffering', 'no');
    if (opts.timing.mode === 'instant') {
      // One write for the whole stream: boundaries are kept in the bytes, and nothing waits.
      let text = '';
      for (const ev of events) text += sseEventText(ev);
      if (tail !== undefined) text += tail;
      if (!cutAtEnd) return new Response(text, { status: recorded.status, headers });
    }
    let i = 0;
    let last = 0;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const ev = events[i];
        if (ev === undefined) {
          if (tail !== undefined && i === events.length) {
            i++;
            controller.enqueue(encoder.encode(tail));
            return;
          }
          if (cutAtEnd) opts.resetClient();
          controller.close();
          return;
        }
        await sleep(scaledDelay(ev.offsetMs - last, opts.timing));
        last = ev.offsetMs;
        i++;
        controller.enqueue(encoder.encode(sseEventText(ev)));
      },
    });
    return new Response(stream, { status: recorded.status, headers });
  }

  const bytes = decodeBody(recorded.body);
  const noBody = recorded.status === 204 || recorded.status === 304;
  await sleep(scaledDelay(ex.timing.durationMs, opts.timing));
  if (!cutAtEnd) return new Response(noBody ? null : bytes, { status: recorded.status, headers });
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      if (bytes.byteLength > 0) controller.enqueue(bytes);
    },
    pull(controller) {
      opts.resetClient();
      controller.close();
    },
  });
  return new Response(stream, { status: recorded.status, headers });
}
