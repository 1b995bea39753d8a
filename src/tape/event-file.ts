/**
 * A stream too large for its exchange's line (`response.eventsFile`, tape format 3): its events in a side file, as
 * JSON Lines, one `SseEvent` per line exactly as `response.events` holds it inline (the offset from the request start,
 * the fields, `raw` when the bytes differ from the canonical form). Per-event timing and byte exactness are what
 * inline events keep; a line per event lets the replayer read the file event by event, never whole, and a reader
 * that wants the events in memory (`show`, `diff`, `export`) parse it back into `response.events`.
 *
 * The side file is stored like a large body: content-addressed (sha256), checked against its size and hash when read.
 */
import { StringDecoder } from 'node:string_decoder';
import { TapedeckError } from '../errors.js';
import { SseEventSchema, type SseEvent, type StoredEvents } from './schema.js';

/** The lines of `events` in a side file (each ends with a newline). */
export function eventLines(events: readonly SseEvent[]): string {
  let out = '';
  for (const ev of events) out += JSON.stringify(ev) + '\n';
  return out;
}

/** One line of a side file as its event; TAPE_CORRUPT when it is not one. */
function parseLine(text: string, n: number): SseEvent {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new TapedeckError('TAPE_CORRUPT', `its event ${n} is not valid JSON`);
  }
  const ev = SseEventSchema.safeParse(value);
  if (!ev.success) throw new TapedeckError('TAPE_CORRUPT', `its event ${n} is not an event (${ev.error.issues[0]?.message ?? 'invalid'})`);
  return ev.data;
}

/** The events of a side file's bytes, all of them (the file as a whole must hold `stored.events` events). */
export function parseEvents(bytes: Buffer, stored: StoredEvents): SseEvent[] {
  const out: SseEvent[] = [];
  // Line by line from the bytes: never the whole file as one string beside them.
  for (let start = 0; start < bytes.byteLength;) {
    let end = bytes.indexOf(0x0a, start);
    if (end === -1) end = bytes.byteLength;
    out.push(parseLine(bytes.toString('utf8', start, end), out.length));
    start = end + 1;
  }
  if (out.length !== stored.events) throw countMismatch(out.length, stored);
  return out;
}

/**
 * The events of a side file as its bytes stream in (bounded memory: one event at a time); the stream fails with
 * TAPE_CORRUPT on a line that is not an event, or when the file holds another number of events than recorded.
 */
export async function* readEvents(bytes: AsyncIterable<Uint8Array | string>, stored: StoredEvents): AsyncGenerator<SseEvent> {
  const decoder = new StringDecoder('utf8');
  // The text of the unfinished line, in the pieces it came in (joined once, when its newline comes).
  let pieces: string[] = [];
  let n = 0;
  for await (const chunk of bytes) {
    const text = typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer);
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      const line = pieces.length === 0 ? text.slice(start, end) : pieces.join('') + text.slice(start, end);
      pieces = [];
      yield parseLine(line, n++);
      start = end + 1;
    }
    if (start < text.length) pieces.push(text.slice(start));
  }
  const last = pieces.join('') + decoder.end();
  if (last !== '') yield parseLine(last, n++);
  if (n !== stored.events) throw countMismatch(n, stored);
}

function countMismatch(found: number, stored: StoredEvents): TapedeckError {
  return new TapedeckError('TAPE_CORRUPT', `it holds ${found} event(s), recorded ${stored.events}`);
}
