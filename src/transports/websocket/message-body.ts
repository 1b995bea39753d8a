/**
 * A relayed message as it goes on the tape. Up to the spill limit (16 MiB, as for HTTP bodies) it is encoded like any
 * body (JSON stays JSON, binary becomes base64), redacted when it is written, and stored apart above 1 MiB. Above it,
 * encoding would hold the message several times over (the base64 text, the serialised record, the bytes decoded again
 * to store them: ~1 GB for two 50 MB messages), so its bytes go to the tape's store as they are, from the buffer the
 * message arrived in, and the frame refers to them: binary as binary, text as text (not parsed, not redacted, like an
 * HTTP body that large; `tapedeck scan` reads it).
 */
import type { Body, WsFrame } from '../../tape/schema.js';
import { encodeFrameData } from '../../tape/frame.js';
import type { BodySpill } from '../../http/body-spill.js';

/** Whether a message of this size is stored apart as it is (see the module comment). */
export function spillsWhole(bytes: Buffer, spill: BodySpill | undefined): spill is BodySpill {
  return spill !== undefined && bytes.byteLength > spill.limit;
}

/** The frame body of a message: encoded now, or (above the limit) a promise of its stored bytes' reference. */
export function messageBody(bytes: Buffer, binary: boolean, spill: BodySpill | undefined): Body | Promise<Body> {
  if (!spillsWhole(bytes, spill)) return encodeFrameData(bytes, binary);
  const sink = spill.sink();
  try {
    sink.write(bytes);
  } catch (err) {
    sink.abort();
    return Promise.reject(err as Error);
  }
  return sink.end(binary ? 'base64' : 'text');
}

/** A message as a frame on the tape: made now, or once a large one's bytes are stored. */
export function messageFrame(
  from: WsFrame['from'],
  offsetMs: number,
  bytes: Buffer,
  binary: boolean,
  spill: BodySpill | undefined,
): WsFrame | Promise<WsFrame> {
  const kind = binary ? 'binary' : 'text';
  const body = messageBody(bytes, binary, spill);
  return body instanceof Promise ? body.then((data): WsFrame => ({ from, offsetMs, kind, data })) : { from, offsetMs, kind, data: body };
}
