/**
 * Server-sent events (`text/event-stream`), the framing of most LLM streams and of MCP's: the splitter that finds each
 * event block with its exact text, the canonical text of an event's fields, and `sseFraming`, the framing seam's SSE
 * implementation (`framing.ts`). An event ends at a blank line, and a line ends at `\n`, `\r\n` or `\r` (the
 * spec's three), mixed as they come, across chunks, and at the end of the stream.
 */
import { StringDecoder } from 'node:string_decoder';
import type { SseEvent } from '../schema.js';
import { roundMs } from '../timing.js';
import type { FrameDecoder, StreamFraming } from './framing.js';

/** One event block as it arrived: parsed fields plus the exact text, terminator included. */
export interface SseBlock {
  event?: string;
  data: string;
  id?: string;
  retry?: number;
  raw: string;
  /** True when `raw` is exactly the canonical text of the parsed fields (see {@link serializeSseFields}). */
  canonical?: boolean;
}

// A blank line ends an event. `\r` alone is a line ending only when no `\n` follows it.
const BLOCK_END = /(?:\r\n|\n|\r(?!\n))(?:\r\n|\n|\r(?!\n))/g;
/** A block end is at most 4 characters (`\r\n\r\n`): this many characters of held text can start one. */
const CARRY = 3;

/**
 * Incremental splitter for `text/event-stream` bodies. Feed it the bytes (`write`) or decoded text (`push`) as they
 * arrive; it returns each complete event block with its raw text, so a replay can write the stream back byte for byte.
 * (eventsource-parser parses fields well but does not expose block boundaries or raw bytes, which replay needs.)
 *
 * Linear in the stream's length: each chunk is searched once, together with the last few characters held from
 * before it (a block end can straddle chunks), and the text of an unfinished event is kept as the chunks it came
 * in, joined once when the event ends. (It used to append every chunk to one string and search that string from its
 * start: quadratic, 9 s for one 20 MB event.)
 */
export class SseSplitter {
  /** Text of the unfinished event, in the pieces it arrived in (kept as they are: no copies to hold). */
  private pending: string[] = [];
  /** The last (up to) {@link CARRY} characters of the unfinished event. */
  private carry = '';
  /** UTF-8 across chunk boundaries, for {@link write}: node's decoder, several times cheaper per chunk than a streaming `TextDecoder`. */
  private decoder: StringDecoder | undefined;
  /** Whether {@link write} has seen the stream's first character. */
  private begun = false;
  /** Whether the stream began with a byte order mark (dropped, as `EventSource` drops it). */
  bom = false;

  /**
   * The stream's bytes as they arrive, decoded as UTF-8 (a character split across chunks is joined; invalid bytes
   * become U+FFFD) with a leading byte order mark dropped. Returns the events they complete.
   */
  write(bytes: Uint8Array): SseBlock[] {
    let text = (this.decoder ??= new StringDecoder('utf8')).write(bytes);
    if (text === '') return [];
    if (!this.begun) {
      this.begun = true;
      if (text.charCodeAt(0) === 0xfeff) {
        this.bom = true;
        text = text.slice(1);
      }
    }
    return this.push(text);
  }

  /**
   * The end of the stream: a character cut short becomes U+FFFD, and a `\r` the stream ended on ends its line (it
   * was held in case a `\n` followed), so an event closed by `\r\r` at the very end is complete.
   */
  end(): SseBlock[] {
    const text = this.decoder?.end() ?? '';
    const blocks = text === '' ? [] : this.push(text);
    if (this.carry.endsWith('\r')) blocks.push(...this.push('', true));
    return blocks;
  }

  /** Decoded text as it arrives; `final`: no more follows (a trailing `\r` is a whole line ending). */
  push(text: string, final = false): SseBlock[] {
    const window = this.carry + text;
    // A trailing '\r' may be the first half of '\r\n': wait for the next chunk before deciding.
    const searchable = !final && window.endsWith('\r') ? window.slice(0, -1) : window;
    // Most streams use '\n' alone: then a block ends at the next '\n\n', which indexOf finds several times faster.
    const lfOnly = !searchable.includes('\r');
    const blocks: SseBlock[] = [];
    let pos = 0;
    for (;;) {
      let start: number;
      let length: number;
      if (lfOnly) {
        start = searchable.indexOf('\n\n', pos);
        length = 2;
      } else {
        BLOCK_END.lastIndex = pos;
        const m = BLOCK_END.exec(searchable);
        start = m === null ? -1 : m.index;
        length = m === null ? 0 : m[0].length;
      }
      if (start === -1) break;
      const end = start + length;
      let raw: string;
      if (pos === 0) {
        // The window starts with the carry, the last characters of what is pending: join the pending text once.
        const before = this.pending.length === 0 ? '' : this.pending.length === 1 ? (this.pending[0] as string) : this.pending.join('');
        raw = before.slice(0, before.length - this.carry.length) + window.slice(0, end);
        this.pending = [];
      } else {
        raw = window.slice(pos, end);
      }
      blocks.push(parseBlock(raw, raw.length - length));
      pos = end;
    }
    if (pos === 0) {
      this.pending.push(text);
      this.carry = text.length >= CARRY ? text.slice(-CARRY) : window.slice(-CARRY);
    } else {
      const rest = window.slice(pos);
      this.pending = rest === '' ? [] : [rest];
      this.carry = rest.slice(-CARRY);
    }
    return blocks;
  }

  /** Whatever arrived after the last complete event (a stream cut mid-event). */
  rest(): string {
    return this.pending.join('');
  }
}

const RANK: Record<string, number> = { event: 0, id: 1, retry: 2, data: 3 };

function parseBlock(raw: string, bodyEnd: number): SseBlock {
  // Most events are one `data: ` line ended by a blank line: read at once, canonical by construction.
  if (bodyEnd === raw.length - 2 && raw.startsWith('data: ') && raw.indexOf('\n') === bodyEnd && !raw.includes('\r'))
    return { data: raw.slice(6, bodyEnd), raw, canonical: true };
  const block: SseBlock = { data: '', raw };
  const dataLines: string[] = [];
  const body = raw.slice(0, bodyEnd);
  const crlf = body.includes('\r');
  // Whether `raw` is exactly what serializeSseFields would write for the parsed fields, decided while parsing so a
  // 20 MB event is not written out a second time just to compare it.
  let canonical = !crlf && raw.length - bodyEnd === 2 && raw.endsWith('\n\n');
  let rank = -1;
  for (const line of crlf ? body.split(/\r\n|\n|\r/) : body.split('\n')) {
    if (line === '' || line.startsWith(':')) {
      canonical = false;
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    else canonical = false;
    const r = RANK[field];
    if (r === undefined || r < rank || (r === rank && r !== 3)) canonical = false;
    else rank = r;
    if (field === 'data') dataLines.push(value);
    else if (field === 'event') block.event = value;
    else if (field === 'id') block.id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) {
      block.retry = Number(value);
      if (String(block.retry) !== value) canonical = false;
    } else if (field === 'retry') canonical = false;
  }
  block.data = dataLines.join('\n');
  if (rank !== 3) canonical = false;
  block.canonical = canonical;
  return block;
}

/** The canonical text of an event: `event`, `id`, `retry`, then `data` lines, then a blank line. */
export function serializeSseFields(ev: {
  event?: string | undefined;
  data: string;
  id?: string | undefined;
  retry?: number | undefined;
}): string {
  let out = '';
  if (ev.event !== undefined) out += `event: ${ev.event}\n`;
  if (ev.id !== undefined) out += `id: ${ev.id}\n`;
  if (ev.retry !== undefined) out += `retry: ${ev.retry}\n`;
  // Most data is one line: no array to split it into.
  if (!ev.data.includes('\n')) return `${out}data: ${ev.data}\n\n`;
  for (const line of ev.data.split('\n')) out += `data: ${line}\n`;
  return out + '\n';
}

/** A tape event from a block: `raw` is kept only when the canonical text would differ. */
export function toSseEvent(block: SseBlock, offsetMs: number): SseEvent {
  const ev: SseEvent = { offsetMs: roundMs(offsetMs), data: block.data };
  if (block.event !== undefined) ev.event = block.event;
  if (block.id !== undefined) ev.id = block.id;
  if (block.retry !== undefined) ev.retry = block.retry;
  if (!(block.canonical ?? serializeSseFields(block) === block.raw)) ev.raw = block.raw;
  return ev;
}

/** The exact text of a recorded event. */
export function sseEventText(ev: SseEvent): string {
  return ev.raw ?? serializeSseFields(ev);
}

/** Whether a content type is an event stream. */
export function isEventStream(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.toLowerCase().startsWith('text/event-stream');
}

/** One answer's SSE bytes as tape events (offsets left at 0 for the caller to stamp). */
class SseDecoder implements FrameDecoder {
  private readonly splitter = new SseSplitter();

  feed(bytes: Uint8Array): SseEvent[] {
    return events(this.splitter.write(bytes));
  }

  end(): SseEvent[] {
    return events(this.splitter.end());
  }

  rest(): string {
    return this.splitter.rest();
  }
}

function events(blocks: SseBlock[]): SseEvent[] {
  const out: SseEvent[] = [];
  for (const block of blocks) out.push(toSseEvent(block, 0));
  return out;
}

/**
 * SSE behind the framing seam. A leading byte order mark is dropped (as `EventSource` drops it): the one thing of the
 * bytes the events do not give back.
 */
export const sseFraming: StreamFraming = {
  name: 'sse',
  accepts: isEventStream,
  decoder: () => new SseDecoder(),
  encode: sseEventText,
};
