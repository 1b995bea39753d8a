/**
 * The framing seam: how an answer's bytes split into the events a tape keeps, and how those events go back on the wire.
 * An event stream is recorded event by event (each with its offset from the request's start) and replayed event by
 * event (its gaps under `--timing`, a fault's `cut: {afterEvents}` and `delay.betweenEventsMs`, the client's pace, a
 * stream stored apart in a side file): everything that handles a stream handles it as events, and only a framing knows
 * bytes. SSE (`sse.ts`) is one framing; a provider that streams otherwise (NDJSON, AWS's binary event-stream) adds one
 * (`registerFraming`) and nothing else changes. The shape is `@smithy/eventstream-codec`'s: a decoder fed bytes as they
 * arrive that gives back the messages they complete, and an encoder of one message.
 *
 * A framing is chosen once per answer, from its content type, when its head is known (`registry.ts`: `framingFor`):
 * the live forward when the upstream answers, replay from the recorded head, the fault stage from the head it passes on.
 */
import type { ResponseRecord, SseEvent } from '../schema.js';

/**
 * One event of a stream as the tape keeps it: its offset, its fields, and `raw`, its exact wire form when the fields
 * alone would not give it back. The tape's format calls it `SseEvent` (SSE was the first framing); a framing decides
 * what its fields hold (an NDJSON line is `data`; a binary message's bytes can be `raw`, in the framing's own text).
 */
export type StreamEvent = SseEvent;

/** One answer's bytes, fed as they arrive, split into events (the stateful half of a framing: one per answer). */
export interface FrameDecoder {
  /**
   * The next bytes of the answer: the events they complete, in order, each with `offsetMs` 0 (the caller stamps it:
   * the events of one read share one offset). A frame split across calls is held until its end arrives.
   */
  feed(bytes: Uint8Array): StreamEvent[];
  /** The bytes have ended: the events the end completes (a framing may need the end to close its last frame). */
  end(): StreamEvent[];
  /** Whatever came after the last complete event (a stream cut mid-event), as the tape's `tail` keeps it. */
  rest(): string;
}

/** How one kind of stream is framed: recognised by content type, decoded as it arrives, encoded event by event. */
export interface StreamFraming {
  /** Its name (`sse`, `ndjson`, `aws-eventstream`): for logs and errors. */
  readonly name: string;
  /** Whether an answer with this content type (as sent, any case, parameters included) is framed this way. */
  accepts(contentType: string): boolean;
  /** A decoder for one answer. */
  decoder(): FrameDecoder;
  /**
   * The bytes an event goes out as: exactly the bytes it was recorded from (decoding then encoding gives the stream
   * back byte for byte, as the framing contract checks), or its canonical form for an event tapedeck made itself.
   */
  encode(event: StreamEvent): string | Uint8Array;
  /** The bytes a recorded `tail` goes out as; default: its text as UTF-8. */
  encodeRest?(rest: string): string | Uint8Array;
}

/** Whether a recorded answer is an event stream (its events in the line, or stored apart). */
export function isStreamed(response: Pick<ResponseRecord, 'events' | 'eventsFile'>): boolean {
  return response.events !== undefined || response.eventsFile !== undefined;
}

/** The wire text (or bytes) of a recorded stream's tail under `framing`. */
export function restBytes(framing: StreamFraming, rest: string): string | Uint8Array {
  return framing.encodeRest ? framing.encodeRest(rest) : rest;
}
