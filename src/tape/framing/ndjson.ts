/**
 * Newline-delimited JSON streams (`application/x-ndjson`, `application/jsonl`: Ollama's `/api/chat` and
 * `/api/generate`, many self-hosted servers) as a framing (`framing.ts`): each line is one event, its `data` the line
 * without its line ending. A line that ended otherwise than `\n` alone (`\r\n`), or came after blank lines, keeps its
 * exact text in `raw`, so the stream is written back byte for byte.
 */
import { StringDecoder } from 'node:string_decoder';
import type { StreamEvent, StreamFraming } from './framing.js';

const NDJSON_TYPES = new Set([
  'application/x-ndjson',
  'application/ndjson',
  'application/jsonl',
  'application/x-jsonlines',
  'application/jsonlines',
]);

/** Whether a content type is a newline-delimited JSON stream. */
export function isNdjson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const semi = contentType.indexOf(';');
  return NDJSON_TYPES.has((semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase());
}

export const ndjsonFraming: StreamFraming = {
  name: 'ndjson',
  accepts: isNdjson,
  decoder() {
    const decoder = new StringDecoder('utf8');
    let pending: string[] = [];
    const push = (text: string): StreamEvent[] => {
      const out: StreamEvent[] = [];
      let from = 0;
      for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', from)) {
        pending.push(text.slice(from, nl + 1));
        from = nl + 1;
        const raw = pending.join('');
        // A blank line is no event: its text stays with the line after it.
        if (raw.trim() === '') continue;
        pending = [];
        const data = raw.replace(/^[\r\n]+/, '').replace(/\r?\n$/, '');
        out.push(raw === `${data}\n` ? { offsetMs: 0, data } : { offsetMs: 0, data, raw });
      }
      if (from < text.length) pending.push(text.slice(from));
      return out;
    };
    return {
      feed: (bytes) => push(decoder.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))),
      end: () => push(decoder.end()),
      rest: () => pending.join(''),
    };
  },
  encode: (ev) => ev.raw ?? `${ev.data}\n`,
};
