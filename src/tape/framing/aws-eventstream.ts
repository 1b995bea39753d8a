/**
 * AWS's binary event-stream (`application/vnd.amazon.eventstream`: Bedrock's ConverseStream and
 * InvokeModelWithResponseStream) as a framing (`framing.ts`), read and written with the AWS SDK's own codec
 * (`@smithy/core/event-streams`). A frame is a prelude (total length, headers length, CRC), typed headers
 * (`:event-type`, `:content-type`, `:message-type`; an exception's `:exception-type`), a payload and a message CRC.
 *
 * On the tape a frame is an event: `event` its `:event-type` (an exception frame's `:exception-type`, a name that ends
 * in `Exception`), `data` its payload as text (JSON for every AWS API that streams). Written back, a frame is its
 * headers in AWS's order (`:event-type` or `:exception-type`, `:content-type`, `:message-type`) and that payload: byte
 * for byte the frame received, its CRCs included. A frame that would not come back so (other headers, another order,
 * a payload that is not UTF-8) keeps its exact bytes in `raw`, base64; so does a stream's unfinished last frame (`rest`).
 */
import { EventStreamCodec, type MessageHeaders } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import type { StreamEvent, StreamFraming } from './framing.js';

export const EVENT_STREAM_CONTENT_TYPE = 'application/vnd.amazon.eventstream';

const codec = new EventStreamCodec(toUtf8, fromUtf8);
/** The prelude: total length (4), headers length (4), prelude CRC (4); the message CRC (4) ends a frame. */
const PRELUDE = 12;
/** A frame is at most 16 MiB (AWS's limit): a larger length means the bytes are no event stream. */
const MAX_FRAME = 16 * 1024 * 1024;

const isException = (name: string): boolean => /Exception$/.test(name);

/** The frame an event is, when it has no `raw`: its name and payload under AWS's headers, in AWS's order. */
function canonicalFrame(event: string | undefined, data: string, contentType = 'application/json'): Uint8Array {
  const headers: MessageHeaders = {};
  const name = event ?? 'event';
  if (isException(name)) headers[':exception-type'] = { type: 'string', value: name };
  else headers[':event-type'] = { type: 'string', value: name };
  headers[':content-type'] = { type: 'string', value: contentType };
  headers[':message-type'] = { type: 'string', value: isException(name) ? 'exception' : 'event' };
  return codec.encode({ headers, body: Buffer.from(data, 'utf8') });
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
  if (!Buffer.from(canonicalFrame(name, ev.data)).equals(bytes)) ev.raw = bytes.toString('base64');
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
