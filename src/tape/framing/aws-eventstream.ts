/**
 * AWS's binary event-stream (`application/vnd.amazon.eventstream`: Bedrock's ConverseStream and
 * InvokeModelWithResponseStream) as a framing (`framing.ts`), read with the AWS SDK's own codec
 * (`@smithy/core/event-streams`) when a frame has typed headers; the common frame (string headers only) is read and
 * written here with node's CRC-32, byte for byte as that codec reads and writes it (its per-call cost was about half of
 * recording a frame, in `bench/proxy.mjs`). A frame is a prelude (total length, headers length, CRC), typed headers
 * (`:event-type`, `:content-type`, `:message-type`; an exception's `:exception-type`), a payload and a message CRC.
 *
 * On the tape a frame is an event: `event` its `:event-type` (an exception frame's `:exception-type`, a name that ends
 * in `Exception`), `data` its payload as text (JSON for every AWS API that streams). Written back, a frame is its
 * headers in AWS's order (`:event-type` or `:exception-type`, `:content-type`, `:message-type`) and that payload: byte
 * for byte the frame received, its CRCs included. A frame that would not come back so (other headers, another order,
 * a payload that is not UTF-8) keeps its exact bytes in `raw`, base64; so does a stream's unfinished last frame (`rest`).
 */
import { isUtf8 } from 'node:buffer';
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

/** The three headers AWS writes for an event (or an exception) of this name, in its order. */
function canonicalHeaderList(name: string): [string, string][] {
  const exception = isException(name);
  return [
    [exception ? ':exception-type' : ':event-type', name],
    [':content-type', 'application/json'],
    [':message-type', exception ? 'exception' : 'event'],
  ];
}

/**
 * Write string headers as the event-stream codec does (name length, name, type 7, value length, value) into `out`
 * at `at`, or only measure them when `out` is undefined; returns the end.
 */
function putHeaders(headers: readonly [string, string][], out: Buffer | undefined, at: number): number {
  let p = at;
  for (const [name, value] of headers) {
    const n = Buffer.byteLength(name, 'utf8');
    const v = Buffer.byteLength(value, 'utf8');
    if (out !== undefined) {
      out.writeUInt8(n, p);
      out.write(name, p + 1, 'utf8');
      out.writeUInt8(7, p + 1 + n);
      out.writeUInt16BE(v, p + 2 + n);
      out.write(value, p + 4 + n, 'utf8');
    }
    p += 4 + n + v;
  }
  return p;
}

/**
 * The frame an event is, when it has no `raw`: its name and payload under AWS's headers, in AWS's order, between the
 * prelude and the message CRC (the CRC-32 the codec uses; written here in one buffer, as the codec would write it).
 */
function canonicalFrame(event: string | undefined, data: string): Buffer {
  const headers = canonicalHeaderList(event ?? 'event');
  const headersEnd = putHeaders(headers, undefined, PRELUDE);
  const total = headersEnd + Buffer.byteLength(data, 'utf8') + 4;
  const out = Buffer.allocUnsafe(total);
  out.writeUInt32BE(total, 0);
  out.writeUInt32BE(headersEnd - PRELUDE, 4);
  out.writeUInt32BE(crc32(out.subarray(0, 8)), 8);
  putHeaders(headers, out, PRELUDE);
  out.write(data, headersEnd, 'utf8');
  out.writeUInt32BE(crc32(out.subarray(0, total - 4)), total - 4);
  return out;
}

/** A frame's string headers, in order, and where the first one's value lies (its bytes, to check they are UTF-8). */
interface StringHeaders {
  list: [string, string][];
  firstValue: [number, number];
}

/**
 * A frame's string headers, read with the frame's CRCs checked (node's CRC-32, the codec's): undefined when a header
 * has another type (the codec reads those), throws when the frame is damaged.
 */
function stringHeaders(bytes: Buffer): StringHeaders | undefined {
  const total = bytes.byteLength;
  const headersEnd = PRELUDE + bytes.readUInt32BE(4);
  if (bytes.readUInt32BE(0) !== total || headersEnd > total - 4) throw new Error('event-stream frame: bad lengths');
  if (crc32(bytes.subarray(0, 8)) !== bytes.readUInt32BE(8)) throw new Error('event-stream frame: prelude CRC');
  if (crc32(bytes.subarray(0, total - 4)) !== bytes.readUInt32BE(total - 4)) throw new Error('event-stream frame: message CRC');
  const list: [string, string][] = [];
  let firstValue: [number, number] = [0, 0];
  for (let p = PRELUDE; p < headersEnd;) {
    const n = bytes.readUInt8(p);
    if (p + 1 + n >= headersEnd || bytes.readUInt8(p + 1 + n) !== 7) return undefined;
    const v = bytes.readUInt16BE(p + 2 + n);
    if (p + 4 + n + v > headersEnd) throw new Error('event-stream frame: a header past its end');
    if (list.length === 0) firstValue = [p + 4 + n, p + 4 + n + v];
    list.push([bytes.toString('utf8', p + 1, p + 1 + n), bytes.toString('utf8', p + 4 + n, p + 4 + n + v)]);
    p += 4 + n + v;
  }
  return { list, firstValue };
}

/** One whole frame's bytes as the tape keeps it (throws when its CRCs do not hold). */
export function frameEvent(bytes: Buffer): StreamEvent {
  const read = stringHeaders(bytes);
  const headers = read?.list ?? typedAsStrings(bytes);
  const str = (k: string): string | undefined => headers.find(([name]) => name === k)?.[1];
  const name = str(':message-type') === 'exception' ? str(':exception-type') : (str(':event-type') ?? str(':exception-type'));
  const payload = bytes.subarray(PRELUDE + bytes.readUInt32BE(4), bytes.byteLength - 4);
  const ev: StreamEvent = { offsetMs: 0, data: payload.toString('utf8') };
  if (name !== undefined) ev.event = name;
  // The frame comes back from its name and payload when its headers are AWS's for that name (the same bytes) and its
  // payload is UTF-8 text: lengths and CRCs follow from those bytes (the CRCs were checked above).
  const canonical = read !== undefined && name !== undefined && awsHeaders(bytes, read, name) && isUtf8(payload);
  if (!canonical) ev.raw = bytes.toString('base64');
  return ev;
}

/**
 * Whether a frame's headers are byte for byte AWS's for an event (or exception) of this name: the same three, in
 * order. The names and the two fixed values are ASCII, so equal text is equal bytes (bytes that are not UTF-8 read as
 * U+FFFD); the name's own bytes must be UTF-8 to be written back the same.
 */
function awsHeaders(bytes: Buffer, read: StringHeaders, name: string): boolean {
  const expected = canonicalHeaderList(name);
  if (read.list.length !== expected.length) return false;
  for (let i = 0; i < expected.length; i++) if (read.list[i]![0] !== expected[i]![0] || read.list[i]![1] !== expected[i]![1]) return false;
  return isUtf8(bytes.subarray(read.firstValue[0], read.firstValue[1]));
}

/** A frame with typed headers (other than strings), read by the AWS codec: its string headers, in order. */
function typedAsStrings(bytes: Buffer): [string, string][] {
  const { headers } = codec.decode(bytes);
  return Object.entries(headers).flatMap(([k, h]) => (h.type === 'string' ? [[k, h.value] as [string, string]] : []));
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
