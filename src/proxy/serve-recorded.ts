import { TapedeckError } from '../errors.js';
import { errorText, httpError } from '../providers/errors.js';
import { decodeBody } from '../tape/body.js';
import { sseEventText } from '../tape/sse.js';
import type { Readable } from 'node:stream';
import type { Exchange, HeaderMap } from '../tape/schema.js';
import type { StoredBody } from '../tape/store.js';
import { clientHeaderMap } from './headers.js';
import type { ResponseSink } from './sink.js';
import { scaledDelay, type Timing } from '../replay/modes.js';

const sleep = (ms: number): Promise<void> => (ms <= 0 ? Promise.resolve() : new Promise((r) => setTimeout(r, ms)));

/**
 * Send a recorded exchange's response to a sink: same status, headers and body; a stream event by event with its
 * original boundaries (and gaps, under `recorded` / scaled timing); an answer cut while recording (an upstream reset,
 * or the client leaving mid-stream) cuts the connection again at the same point. Resolves when everything is sent.
 */
export async function serveRecorded(
  ex: Exchange,
  sink: ResponseSink,
  opts: { timing: Timing; headers: HeaderMap; open?: ((body: StoredBody) => Readable) | undefined },
): Promise<void> {
  const recorded = ex.response;
  if (recorded === undefined) {
    // The recording has no answer (the upstream failed before one): the recorded failure is the answer.
    const failed = new TapedeckError('UPSTREAM_ERROR', ex.error?.message ?? 'no response was recorded', {
      details: { code: ex.error?.code ?? 'ERROR' },
    });
    const answer = httpError(failed, ex.llm);
    sink.head(answer.status, { ...answer.headers, ...opts.headers });
    sink.write(Buffer.from(errorText(answer)));
    sink.end();
    return;
  }
  const headers = Object.assign(clientHeaderMap(recorded.headers, { decoded: true }), opts.headers);
  // Cut mid-answer while recording, by the upstream or by the client that went away (`CLIENT_CLOSED`): the tape has
  // the start of an answer only, so it is served cut at the same point, never ended as if it were whole.
  const cut = ex.error?.phase === 'stream';
  let closed = false;
  sink.onClose(() => (closed = true));

  if (recorded.events === undefined) {
    await sleep(scaledDelay(ex.timing.durationMs, opts.timing));
    if (recorded.body?.kind === 'file') return serveStored(ex, recorded.body, sink, headers, { ...opts, cut, closed: () => closed });
    const bytes = decodeBody(recorded.body);
    const noBody = recorded.status === 204 || recorded.status === 304 || (recorded.status >= 100 && recorded.status < 200);
    const hasBody = bytes.byteLength > 0 && !noBody;
    const length = framedLength(ex, bytes.byteLength, { noBody, cut });
    if (length !== undefined) headers['content-length'] = length;
    sink.head(recorded.status, headers);
    if (hasBody) sink.write(bytes);
    if (cut) sink.cut();
    else sink.end();
    return;
  }

  headers['x-accel-buffering'] = 'no';
  sink.head(recorded.status, headers);
  if (opts.timing.mode === 'instant') {
    // Nothing to wait for: one write, event boundaries kept in the bytes.
    let text = '';
    for (const ev of recorded.events) text += sseEventText(ev);
    if (recorded.tail !== undefined) text += recorded.tail;
    sink.write(Buffer.from(text));
  } else {
    let last = 0;
    for (const ev of recorded.events) {
      await sleep(scaledDelay(ev.offsetMs - last, opts.timing));
      last = ev.offsetMs;
      if (closed) return;
      if (!sink.write(Buffer.from(sseEventText(ev)))) await new Promise<void>((r) => sink.onDrain(r));
    }
    if (recorded.tail !== undefined) sink.write(Buffer.from(recorded.tail));
  }
  if (cut) sink.cut();
  else sink.end();
}

/** A body too large to hold, streamed from the store (`tape/large-body.ts`); a store failure cuts the answer. */
async function serveStored(
  ex: Exchange,
  body: StoredBody,
  sink: ResponseSink,
  headers: HeaderMap,
  opts: { open?: ((body: StoredBody) => Readable) | undefined; cut: boolean; closed: () => boolean },
): Promise<void> {
  if (opts.open === undefined) throw new TapedeckError('INTERNAL', 'a body stored apart reached a replay that cannot stream it');
  const status = ex.response?.status ?? 200;
  const noBody = status === 204 || status === 304 || (status >= 100 && status < 200);
  const length = framedLength(ex, body.bytes, { noBody, cut: opts.cut });
  if (length !== undefined) headers['content-length'] = length;
  sink.head(status, headers);
  if (!noBody && ex.request.method !== 'HEAD') {
    const stream = opts.open(body);
    let gone: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (gone = resolve));
    sink.onClose(() => gone());
    try {
      for await (const chunk of stream) {
        if (opts.closed()) return void stream.destroy();
        if (!sink.write(chunk as Buffer)) await Promise.race([new Promise<void>((r) => sink.onDrain(r)), closed]);
      }
    } catch {
      // The store failed, or the bytes are not what was recorded: the client must not take this for a whole answer.
      return sink.cut();
    }
  }
  if (opts.cut) sink.cut();
  else sink.end();
}

/**
 * The `content-length` to answer with, or undefined to send the body chunked: framed as the upstream framed it where
 * that is safe. Chunked when the upstream sent chunked; a length when it sent one, or when the tape does not say (a
 * tape written before framing was kept); never on an answer cut on purpose or one that has no body. The length is the
 * length of the bytes served (redaction or decoding may have changed it), except for HEAD, whose answer has no body:
 * there the recorded length is the one that means something.
 */
function framedLength(ex: Exchange, bytes: number, o: { noBody: boolean; cut: boolean }): string | undefined {
  const recorded = ex.response?.headers ?? {};
  if (ex.request.method === 'HEAD') return o.noBody ? undefined : recorded['content-length'];
  if (o.noBody || o.cut) return undefined;
  if (/chunked/i.test(recorded['transfer-encoding'] ?? '')) return undefined;
  if (recorded['content-length'] === undefined && bytes === 0) return undefined;
  return String(bytes);
}
