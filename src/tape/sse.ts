import type { SseEvent } from './schema.js';

/** One event block as it arrived: parsed fields plus the exact text, terminator included. */
export interface SseBlock {
  event?: string;
  data: string;
  id?: string;
  retry?: number;
  raw: string;
}

// A blank line ends an event. `\r` alone is a line ending only when no `\n` follows it.
const BLOCK_END = /(?:\r\n|\n|\r(?!\n))(?:\r\n|\n|\r(?!\n))/;

/**
 * Incremental splitter for `text/event-stream` bodies. Feed it decoded text as it arrives; it returns each
 * complete event block with its raw text, so a replay can write the stream back byte for byte.
 * (eventsource-parser parses fields well but does not expose block boundaries or raw bytes, which replay needs.)
 */
export class SseSplitter {
  private buffer = '';

  push(text: string): SseBlock[] {
    this.buffer += text;
    const blocks: SseBlock[] = [];
    for (;;) {
      // A trailing '\r' may be the first half of '\r\n': wait for the next chunk before deciding.
      const searchable = this.buffer.endsWith('\r') ? this.buffer.slice(0, -1) : this.buffer;
      const m = BLOCK_END.exec(searchable);
      if (m === null) break;
      const end = m.index + m[0].length;
      const raw = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end);
      blocks.push(parseBlock(raw, m.index));
    }
    return blocks;
  }

  /** Whatever arrived after the last complete event (a stream cut mid-event). */
  rest(): string {
    return this.buffer;
  }
}

function parseBlock(raw: string, bodyEnd: number): SseBlock {
  const block: SseBlock = { data: '', raw };
  const dataLines: string[] = [];
  for (const line of raw.slice(0, bodyEnd).split(/\r\n|\n|\r/)) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') dataLines.push(value);
    else if (field === 'event') block.event = value;
    else if (field === 'id') block.id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) block.retry = Number(value);
  }
  block.data = dataLines.join('\n');
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
  for (const line of ev.data.split('\n')) out += `data: ${line}\n`;
  return out + '\n';
}

/** A tape event from a block: `raw` is kept only when the canonical text would differ. */
export function toSseEvent(block: SseBlock, offsetMs: number): SseEvent {
  const ev: SseEvent = { offsetMs: round(offsetMs), data: block.data };
  if (block.event !== undefined) ev.event = block.event;
  if (block.id !== undefined) ev.id = block.id;
  if (block.retry !== undefined) ev.retry = block.retry;
  if (serializeSseFields(block) !== block.raw) ev.raw = block.raw;
  return ev;
}

/** The exact text of a recorded event. */
export function sseEventText(ev: SseEvent): string {
  return ev.raw ?? serializeSseFields(ev);
}

export function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
