import { TapedeckError } from '../../errors.js';
import { errorText, httpError } from '../../providers/errors.js';
import { decodeBody } from '../../tape/body.js';
import { restBytes, type StreamFraming } from '../../tape/framing/framing.js';
import { recordedFraming } from '../../tape/framing/registry.js';
import type { Readable } from 'node:stream';
import { readEvents } from '../../tape/event-file.js';
import type { Body, Exchange, HeaderMap, SseEvent } from '../../tape/schema.js';
import type { StoredBody } from '../../tape/store.js';
import { clientHeaderMap } from '../../http/headers.js';
import type { ResponseSink } from '../../http/sink.js';
import { paced, type PacedStream } from '../../http/sink-send.js';
import { scaledDelay, type Timing } from '../../replay/modes.js';

const sleep = (ms: number): Promise<void> => (ms <= 0 ? Promise.resolve() : new Promise((r) => setTimeout(r, ms)));

/**
 * Send a recorded exchange's response to a sink: same status, headers and body; a stream event by event with its
 * original boundaries (and gaps, under `recorded` / scaled timing), at the client's pace (a stream stored apart is read
 * from the store as it goes out); an answer cut while recording (an upstream reset, or the client leaving mid-stream)
 * cuts the connection again at the same point. Resolves when everything is sent, or the client has gone.
 */
export async function serveRecorded(
  ex: Exchange,
  sink: ResponseSink,
  opts: {
    timing: Timing;
    headers: HeaderMap;
    open?: ((body: StoredBody) => Readable) | undefined;
    /** The bytes a body is served as (a replay keeps those it made: `recorded-answers.ts`); default: decoded each time. */
    bytes?: ((body: Body | undefined) => Buffer) | undefined;
    /** The bytes of a whole event stream served at once, when the replay keeps them (`recorded-answers.ts`). */
    stream?: ((response: NonNullable<Exchange['response']>) => Buffer | undefined) | undefined;
  },
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

  if (recorded.events === undefined && recorded.eventsFile === undefined) {
    const delay = scaledDelay(ex.timing.durationMs, opts.timing);
    if (delay > 0) await sleep(delay);
    if (recorded.body?.kind === 'file') return serveStored(ex, recorded.body, sink, headers, { ...opts, cut, closed: () => closed });
    const bytes = opts.bytes ? opts.bytes(recorded.body) : decodeBody(recorded.body);
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
  const whole = opts.timing.mode === 'instant' ? opts.stream?.(recorded) : undefined;
  if (whole !== undefined && whole.byteLength <= WRITE_CHARS) {
    // Kept whole by the replay, and one write's worth: written and ended at once, as a body is (nothing to pace).
    sink.write(whole);
    if (cut) sink.cut();
    else sink.end();
    return;
  }
  const out = paced(sink);
  if (whole !== undefined) {
    // Kept whole by the replay: written in pieces of WRITE_CHARS at the client's pace.
    for (let at = 0; at < whole.byteLength; at += WRITE_CHARS) if (!(await out.write(whole.subarray(at, at + WRITE_CHARS)))) return;
    if (cut) sink.cut();
    else out.end();
    return;
  }
  let events: readonly SseEvent[] | AsyncIterable<SseEvent>;
  if (recorded.eventsFile === undefined) events = recorded.events ?? [];
  else {
    if (opts.open === undefined) throw new TapedeckError('INTERNAL', 'a stream stored apart reached a replay that cannot stream it');
    events = readEvents(opts.open(recorded.eventsFile), recorded.eventsFile);
  }
  let sent: boolean;
  try {
    sent = await sendEvents(events, out, opts.timing, recordedFraming(recorded), recorded.tail);
  } catch {
    // The store failed, or its events are not what was recorded: the client must not take this for a whole answer.
    return sink.cut();
  }
  if (!sent) return;
  if (cut) sink.cut();
  else out.end();
}

/** Bytes of events gathered into one write when there is no gap to wait for: the client's pace is checked per write. */
const WRITE_CHARS = 64 * 1024;

/**
 * Write recorded events at the client's pace, each as its framing encodes it, then `tail`: with no gaps (`instant`)
 * gathered into writes of about {@link WRITE_CHARS} (a small stream in one write), otherwise each when its recorded
 * (or scaled) gap has passed. Nothing more is read or written while the client is not taking what it has: a client
 * that never reads holds up the replay, not tapedeck's memory. Resolves false once the client has gone.
 */
async function sendEvents(
  events: Iterable<SseEvent> | AsyncIterable<SseEvent>,
  out: PacedStream,
  timing: Timing,
  framing: StreamFraming,
  tail?: string,
): Promise<boolean> {
  let text = '';
  // Events that encode as bytes (a binary framing) are gathered as bytes, after the text before them.
  let bytes: Uint8Array[] | undefined;
  let held = 0;
  let last = 0;
  const instant = timing.mode === 'instant';
  const take = (): string | Uint8Array => {
    if (bytes === undefined) {
      const chunk = text;
      text = '';
      return chunk;
    }
    if (text !== '') bytes.push(Buffer.from(text));
    const chunk = Buffer.concat(bytes);
    text = '';
    bytes = undefined;
    held = 0;
    return chunk;
  };
  /** True when the client can take more now (no promise to wait on: most events of an instant replay). */
  const next = (ev: SseEvent): true | Promise<boolean> => {
    const wire = framing.encode(ev);
    if (instant) {
      if (typeof wire === 'string' && bytes === undefined) text += wire;
      else {
        bytes ??= [];
        if (text !== '') bytes.push(Buffer.from(text));
        text = '';
        bytes.push(typeof wire === 'string' ? Buffer.from(wire) : wire);
        held += wire.length;
      }
      if (text.length + held < WRITE_CHARS) return true;
      return out.write(take());
    }
    const gap = scaledDelay(ev.offsetMs - last, timing);
    last = ev.offsetMs;
    return sleep(gap).then(() => out.write(wire));
  };
  if (Symbol.iterator in events) {
    for (const ev of events) {
      const ok = next(ev);
      if (ok !== true && !(await ok)) return false;
    }
  } else {
    for await (const ev of events) {
      const ok = next(ev);
      if (ok !== true && !(await ok)) return false;
    }
  }
  if (tail !== undefined) {
    const rest = restBytes(framing, tail);
    if (typeof rest === 'string' && bytes === undefined) text += rest;
    else (bytes ??= []).push(typeof rest === 'string' ? Buffer.from(rest) : rest);
  }
  const chunk = take();
  return chunk.length === 0 ? !out.gone : out.write(chunk);
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
