/**
 * Newline-delimited JSON-RPC framing (MCP stdio): feed bytes, get complete lines. Bytes are split on `\n` only
 * (messages contain no raw newlines); a trailing `\r` is dropped, as the MCP SDK's `ReadBuffer` does.
 *
 * A line has a cap (the SDK's 10 MB by default). A line that grows past it is refused at once, reported as one
 * `tooLong` item, and its bytes are dropped as they arrive until its newline: never held, and the next line is read
 * as usual. (The SDK's `ReadBuffer` caps what it holds too, but throws, clears lines it had not handed out yet, and
 * its `StdioServerTransport` closes on that; it also parses with the SDK's schema, which refuses JSON-RPC batches and
 * cannot say what a bad line was. So tapedeck frames lines itself and judges them with its own parser.)
 */
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js';

/** The longest line tapedeck reads from an MCP stdio client or server, in bytes: the MCP SDK's default, 10 MB. */
export const DEFAULT_MAX_LINE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE;

/** A complete line, or the report of a line longer than the cap (whose bytes were dropped). */
export type LineItem = { line: string } | { tooLong: true; maxLineBytes: number };

export class LineReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Dropping the rest of a line that passed the cap, until its newline. */
  private dropping = false;

  constructor(readonly maxLineBytes: number = DEFAULT_MAX_LINE_BYTES) {}

  push(chunk: Buffer): LineItem[] {
    const items: LineItem[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, nl === -1 ? chunk.length : nl);
      if (!this.dropping) {
        if (this.pendingBytes + piece.length > this.maxLineBytes) {
          this.dropping = true;
          this.pending = [];
          this.pendingBytes = 0;
          items.push({ tooLong: true, maxLineBytes: this.maxLineBytes });
        } else if (piece.length > 0) {
          this.pending.push(piece);
          this.pendingBytes += piece.length;
        }
      }
      if (nl === -1) return items;
      if (this.dropping) this.dropping = false;
      else items.push({ line: this.take() });
      start = nl + 1;
    }
  }

  /** What arrived after the last newline (an unterminated last message), or undefined when nothing did. */
  end(): string | undefined {
    if (this.dropping || this.pendingBytes === 0) return undefined;
    return this.take();
  }

  private take(): string {
    const line = (this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending)).toString('utf8');
    this.pending = [];
    this.pendingBytes = 0;
    return line.endsWith('\r') ? line.slice(0, -1) : line;
  }
}

/** The one-line explanation of a refused line. */
export function lineTooLongMessage(from: string, maxLineBytes: number): string {
  return `${from} sent a line longer than ${formatBytes(maxLineBytes)} (the stdio line limit); it was dropped without being read`;
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KB`;
  return `${n} bytes`;
}
