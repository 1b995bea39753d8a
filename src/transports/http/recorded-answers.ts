/**
 * The recorded answers a replay serves, kept as what serving them needs: an answer served again (the same recording
 * for every request it matches) is written to the client from bytes made once, and onto the replay tape from its line
 * text made once (`WireText`: the writer uses it while the answer is that very object). One per replay; it holds what
 * it made for as long as the tape is loaded, answers over 256 K characters excepted (made each time, never kept).
 */
import { decodeBody } from '../../tape/body.js';
import { restBytes } from '../../tape/framing/framing.js';
import { recordedFraming } from '../../tape/framing/registry.js';
import type { Body, ResponseRecord } from '../../tape/schema.js';
import { serializeResponse } from '../../tape/serialize.js';
import type { WireText } from '../../tape/store.js';

const MAX_KEPT_CHARS = 256 * 1024;

export class RecordedAnswers {
  private readonly texts = new Map<ResponseRecord, WireText<ResponseRecord> | null>();
  private readonly bytes = new Map<Body, Buffer>();
  private readonly streams = new Map<ResponseRecord, Buffer | null>();

  /** The answer's text in a tape line, made on its first serving (undefined for one too large to keep). */
  textOf(response: ResponseRecord): WireText<ResponseRecord> | undefined {
    let kept = this.texts.get(response);
    if (kept === undefined) {
      const text = serializeResponse(response);
      kept = text.length > MAX_KEPT_CHARS ? null : { of: response, text };
      this.texts.set(response, kept);
    }
    return kept ?? undefined;
  }

  /**
   * The bytes of a recorded event stream served at once (instant timing): its events and tail as the wire has them,
   * made on its first serving; undefined for one held apart (`eventsFile`) or too large to keep.
   */
  streamOf(response: ResponseRecord): Buffer | undefined {
    if (response.events === undefined) return undefined;
    let kept = this.streams.get(response);
    if (kept === undefined) {
      const framing = recordedFraming(response);
      const parts: (string | Uint8Array)[] = [];
      let size = 0;
      for (const ev of response.events) {
        const wire = framing.encode(ev);
        parts.push(wire);
        size += wire.length;
      }
      if (response.tail !== undefined) parts.push(restBytes(framing, response.tail));
      kept = size > MAX_KEPT_CHARS ? null : joined(parts);
      this.streams.set(response, kept);
    }
    return kept ?? undefined;
  }

  /** The bytes a recorded body is served as, made on its first serving. */
  bytesOf(body: Body | undefined): Buffer {
    if (body === undefined || body.kind !== 'json') return decodeBody(body);
    let kept = this.bytes.get(body);
    if (kept === undefined) {
      kept = decodeBody(body);
      if (kept.byteLength <= MAX_KEPT_CHARS) this.bytes.set(body, kept);
    }
    return kept;
  }
}

/** The wire bytes of a stream's pieces: one string joined (most streams are text), or the bytes of each. */
function joined(parts: readonly (string | Uint8Array)[]): Buffer {
  if (parts.every((p) => typeof p === 'string')) return Buffer.from(parts.join(''));
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
}
