/**
 * AWS's binary event-stream framing (`application/vnd.amazon.eventstream`: Bedrock's ConverseStream and
 * InvokeModelWithResponseStream, Transcribe, Lex...), read and written with the AWS SDK's own codec
 * (`@smithy/core/event-streams`). A frame is a prelude (total length, headers length, CRC), typed headers
 * (`:event-type`, `:message-type`, `:content-type`, `:exception-type`), a payload and a message CRC.
 *
 * On the tape a frame is an event like an SSE one: `event` is its `:event-type` (an exception's `:exception-type`),
 * `data` its payload as text (JSON for every AWS API that streams), `headers` its string headers in wire order. Written
 * back from those, a frame is byte for byte the one received (the CRCs are a function of the rest); a frame that would
 * not be (a header of another type, a payload that is not UTF-8) keeps its bytes in `raw`, base64.
 */
import { EventStreamCodec, type MessageHeaders } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';

export const EVENT_STREAM_CONTENT_TYPE = 'application/vnd.amazon.eventstream';

/** One frame as the tape keeps it. */
export interface EventStreamEvent {
  /** `:event-type`, or `:exception-type` for an exception frame. */
  event?: string | undefined;
  /** The payload as UTF-8 text. */
  data: string;
  /** The frame's string headers, in wire order. */
  headers: Record<string, string>;
  /** The frame's exact bytes (base64), kept only when writing it back from the rest would differ. */
  raw?: string;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);
/** The prelude: total length (4), headers length (4), prelude CRC (4). */
const PRELUDE = 12;
/** A frame is at most 16 MiB (the AWS limit); a larger length means the bytes are not an event stream. */
const MAX_FRAME = 16 * 1024 * 1024;

/** The frame an event is, as it went over the wire. */
export function encodeEventStreamFrame(ev: Pick<EventStreamEvent, 'data' | 'headers' | 'raw'>): Buffer {
  if (ev.raw !== undefined) return Buffer.from(ev.raw, 'base64');
  const headers: MessageHeaders = {};
  for (const [k, v] of Object.entries(ev.headers)) headers[k] = { type: 'string', value: v };
  return Buffer.from(codec.encode({ headers, body: Buffer.from(ev.data, 'utf8') }));
}

/** A frame's bytes as the tape keeps them. Throws when the bytes are not a frame (a CRC that does not hold). */
export function decodeEventStreamFrame(bytes: Uint8Array): EventStreamEvent {
  const message = codec.decode(bytes);
  const headers: Record<string, string> = {};
  let typed = true;
  for (const [k, v] of Object.entries(message.headers)) {
    if (v.type === 'string') headers[k] = v.value;
    else typed = false;
  }
  const payload = Buffer.from(message.body.buffer, message.body.byteOffset, message.body.byteLength);
  const data = payload.toString('utf8');
  const ev: EventStreamEvent = { data, headers };
  const name = headers[':message-type'] === 'exception' ? headers[':exception-type'] : headers[':event-type'];
  if (name !== undefined) ev.event = name;
  if (!typed || !Buffer.from(data, 'utf8').equals(payload) || !encodeEventStreamFrame(ev).equals(bytes))
    ev.raw = Buffer.from(bytes).toString('base64');
  return ev;
}

/**
 * Incremental splitter for an event stream's bytes: feed it chunks as they arrive (`write`), it returns every frame
 * they complete. Bytes that cannot be a frame (a length out of range, a CRC that does not hold) stop the splitting:
 * what is left, from there on, is the stream's `rest()` (kept as the tape's `tail`, so nothing is lost).
 */
export class EventStreamSplitter {
  private pending: Buffer[] = [];
  private size = 0;
  private broken = false;

  write(chunk: Uint8Array): EventStreamEvent[] {
    this.pending.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    this.size += chunk.byteLength;
    if (this.broken) return [];
    const out: EventStreamEvent[] = [];
    let buf = this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending);
    while (buf.byteLength >= PRELUDE) {
      const total = buf.readUInt32BE(0);
      if (total < PRELUDE + 4 || total > MAX_FRAME) {
        this.broken = true;
        break;
      }
      if (buf.byteLength < total) break;
      try {
        out.push(decodeEventStreamFrame(buf.subarray(0, total)));
      } catch {
        this.broken = true;
        break;
      }
      buf = buf.subarray(total);
    }
    this.pending = buf.byteLength === 0 ? [] : [buf];
    this.size = buf.byteLength;
    return out;
  }

  /** Bytes that did not make a whole frame (an unfinished or damaged one), base64; '' when the stream ended cleanly. */
  rest(): string {
    return this.size === 0 ? '' : Buffer.concat(this.pending).toString('base64');
  }
}
