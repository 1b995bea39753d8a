/** WebSocket messages as tape frames and back: the bytes of a message <-> a frame's `data` body. */
import { isUtf8 } from 'node:buffer';
import { decodeBody, encodeBody } from './body.js';
import type { Body, WsFrame } from './schema.js';

/**
 * A message's bytes as a frame body. A text message is a body like any text (JSON when it is JSON, else text). A
 * binary message is base64, or JSON when its bytes are exactly the compact JSON that is written back (APIs such as
 * Gemini Live send their JSON as binary messages), so it stays readable and is served byte for byte.
 */
export function encodeFrameData(bytes: Buffer, binary: boolean): Body {
  if (!binary) return encodeBody(bytes, 'text/plain');
  if (bytes.byteLength === 0) return { kind: 'empty' };
  const first = bytes[0];
  if ((first === 0x7b || first === 0x5b) && isUtf8(bytes)) {
    const text = bytes.toString('utf8');
    try {
      const json: unknown = JSON.parse(text);
      if (JSON.stringify(json) === text) return { kind: 'json', json };
    } catch {
      // not JSON: binary
    }
  }
  return { kind: 'base64', base64: bytes.toString('base64') };
}

/** The bytes a frame carries (JSON written compactly; a side-file body must have been resolved by the reader). */
export function frameBytes(frame: Pick<WsFrame, 'data'>): Buffer {
  return decodeBody(frame.data);
}

/** The frame's message as JSON, when it is JSON. */
export function frameJson(frame: Pick<WsFrame, 'data'>): unknown {
  const data = frame.data;
  if (data?.kind === 'json') return data.json;
  if (data?.kind === 'text') {
    try {
      return JSON.parse(data.text) as unknown;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
