/**
 * AWS's binary event-stream (`application/vnd.amazon.eventstream`: Bedrock's ConverseStream and
 * InvokeModelWithResponseStream) as a framing (`framing.ts`), read with the AWS SDK's own codec
 * (`@smithy/core/event-streams`); a frame tapedeck rebuilds is written as that codec writes it (the same bytes,
 * without its per-call cost: about half of recording a frame, in `bench/proxy.mjs`). A frame is a prelude (total length, headers length, CRC), typed headers
 * (`:event-type`, `:content-type`, `:message-type`; an exception's `:exception-type`), a payload and a message CRC.
 *
 * On the tape a frame is an event: `event` its `:event-type` (an exception frame's `:exception-type`, a name that ends
 * in `Exception`), `data` its payload as text (JSON for every AWS API that streams). Written back, a frame is its
 * headers in AWS's order (`:event-type` or `:exception-type`, `:content-type`, `:message-type`) and that payload: byte
 * for byte the frame received, its CRCs included. A frame that would not come back so (other headers, another order,
 * a payload that is not UTF-8) keeps its exact bytes in `raw`, base64; so does a stream's unfinished last frame (`rest`).
 */
import { crc32 } from 'node:zlib';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import type { StreamEvent, StreamFraming } from './framing.js';

export const EVENT_STREAM_CONTENT_TYPE = 'application/vnd.amazon.eventstream';

const codec = new EventStreamCodec(toUtf8, fromUtf8);
/** The prelude: total length (4), headers length (4), prelude CRC (4); the message CRC (4) ends a frame. */
const PRELUDE = 12;
/** A frame is at most 16 MiB (AWS's limit): a larger length means the bytes are no event stream. */
const MAX_FRAME = 16 * 1024 * 1024;

const isException = (name: string): boolean => /Exception$/.test(name);

/** A string header as the event-stream codec writes it: name length, name, type 7 (string), value length, value. */
function stringHeader(name: string, value: string): Buffer {
  const n = Buffer.from(name, 'utf8');
  const v = Buffer.from(value, 'utf8');
  const b = Buffer.allocUnsafe(4 + n.byteLength + v.byteLength);
  b.writeUInt8(n.byteLength, 0);
  n.copy(b, 1);
  b.writeUInt8(7, 1 + n.byteLength);
  b.writeUInt16BE(v.byteLength, 2 + n.byteLength);
  v.copy(b, 4 + n.byteLength);
  return b;
}

/** The headers of an event (or an exception) of this name as AWS writes them, in its order. */
function canonicalHeaders(name: string): Buffer {
  const exception = isException(name);
  return Buffer.concat([
    stringHeader(exception ? ':exception-type' : ':event-type', name),
    stringHeader(':content-type', 'application/json'),
    stringHeader(':message-type', exception ? 'exception' : 'event'),
  ]);
}

/**
 * The frame an event is, when it has no `raw`: its name and payload under AWS's headers, in AWS's order, between the
 * prelude and the message CRC (the CRC-32 the codec uses; written here, as the codec does, without its per-call cost).
 */
function canonicalFrame(event: string | undefined, data: string): Buffer {
  const headers = canonicalHeaders(event ?? 'event');
  const payload = Buffer.from(data, 'utf8');
  const total = PRELUDE + headers.byteLength + payload.byteLength + 4;
  const out = Buffer.allocUnsafe(total);
  out.writeUInt32BE(total, 0);
  out.writeUInt32BE(headers.byteLength, 4);
  out.writeUInt32BE(crc32(out.subarray(0, 8)), 8);
  headers.copy(out, PRELUDE);
  payload.copy(out, PRELUDE + headers.byteLength);
  out.writeUInt32BE(crc32(out.subarray(0, total - 4)), total - 4);
  return out;
}

/** One whole frame's bytes as the tape keeps it (throws when its CRCs do not hold). */
export function frameEvent(bytes: Buffer): StreamEvent {
  const message = codec.decode(bytes);
  const h = message.headers;
  const str = (k: string): string | undefined => (h[k]?.type === 'string' ? (h[k].value as string) : undefined);
  const name = str(':message-type') === 'exception' ? str(':exception-type') : (str(':event-type') ?? str(':exception-type'));
  const payload = Buffer.from(message.body.buffer, message.body.byteOffset, message.body.byteLength);
  const ev: StreamEvent = { offsetMs: 0, data: payload.toString('utf8') };
  if (name !== undefined) ev.event = name;
  // The frame comes back from its name and payload when its headers are AWS's for that name and its payload is
  // UTF-8 text: lengths and CRCs follow from those bytes (the CRCs were checked by the decode).
  const canonical =
    name !== undefined &&
    bytes.subarray(PRELUDE, PRELUDE + bytes.readUInt32BE(4)).equals(canonicalHeaders(name)) &&
    Buffer.from(ev.data, 'utf8').equals(payload);
  if (!canonical) ev.raw = bytes.toString('base64');
  return ev;
}

export const awsEventStreamFraming: StreamFraming = {
  name: 'aws-eventstream',
  accepts: (type) => type.trim().toLowerCase().startsWith(EVENT_STREAM_CONTENT_TYPE),
  decoder() {
    let held = Buffer.alloc(0);
    // Bytes that cannot be a frame (a length out of range, a CRC that does not hold) end the splitting: from there on
    // everything is the rest, so nothing is lost.
    let broken = false;
    return {
      feed(bytes) {
        held = held.byteLength === 0 ? Buffer.from(bytes) : Buffer.concat([held, bytes]);
        const out: StreamEvent[] = [];
        while (!broken && held.byteLength >= PRELUDE) {
          const total = held.readUInt32BE(0);
          if (total < PRELUDE + 4 || total > MAX_FRAME) broken = true;
          else if (held.byteLength < total) break;
          else {
            try {
              out.push(frameEvent(held.subarray(0, total)));
              held = held.subarray(total);
            } catch {
              broken = true;
            }
          }
        }
        return out;
      },
      end: () => [],
      rest: () => (held.byteLength === 0 ? '' : held.toString('base64')),
    };
  },
  encode: (ev) => (ev.raw !== undefined ? Buffer.from(ev.raw, 'base64') : canonicalFrame(ev.event, ev.data)),
  encodeRest: (rest) => Buffer.from(rest, 'base64'),
};
