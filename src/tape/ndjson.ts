/**
 * Newline-delimited JSON streams (`application/x-ndjson`, `application/jsonl`, `application/json-seq` without its
 * record separators: Ollama's `/api/chat` and `/api/generate`, many self-hosted servers): each line is one event. On
 * the tape a line is an event whose `data` is the line without its line ending; a line that ended in `\r\n` keeps its
 * exact text in `raw`, so the stream is written back byte for byte.
 */
import { StringDecoder } from 'node:string_decoder';

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

/** One line as the tape keeps it. */
export interface NdjsonLine {
  data: string;
  /** The line's exact text with its ending, kept only when it is not `data` + `\n`. */
  raw?: string;
}

/** The text a line was, ending included. */
export function ndjsonText(line: Pick<NdjsonLine, 'data' | 'raw'>): string {
  return line.raw ?? `${line.data}\n`;
}

/**
 * Incremental splitter: feed it the bytes as they arrive (`write`), it returns each complete line. Linear in the
 * stream's length (a line's pieces are joined once, when it ends). An empty line is no event (it carries nothing);
 * its text stays with the next line's `raw`.
 */
export class NdjsonSplitter {
  private pending: string[] = [];
  private readonly decoder = new StringDecoder('utf8');

  write(bytes: Uint8Array): NdjsonLine[] {
    return this.push(this.decoder.write(bytes as Buffer));
  }

  /** The end of the bytes: the text of a last line without its ending is `rest()`. */
  end(): NdjsonLine[] {
    const text = this.decoder.end();
    return text === '' ? [] : this.push(text);
  }

  /** Text after the last line ending. */
  rest(): string {
    return this.pending.join('');
  }

  private push(text: string): NdjsonLine[] {
    const out: NdjsonLine[] = [];
    let from = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', from)) {
      this.pending.push(text.slice(from, nl + 1));
      from = nl + 1;
      const raw = this.pending.join('');
      // A blank line is kept with the line after it (`raw`), never an event of its own.
      if (raw.trim() === '') continue;
      this.pending = [];
      const data = raw.replace(/\r?\n$/, '').replace(/^[\r\n]+/, '');
      out.push(raw === `${data}\n` ? { data } : { data, raw });
    }
    if (from < text.length) this.pending.push(text.slice(from));
    return out;
  }
}
