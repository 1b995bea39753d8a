/**
 * MCP's stdio framing over a pair of streams, in the MCP SDK's `Transport` shape (start / send / close, with
 * onmessage / onerror / onclose): tapedeck's end of a client's stdin and stdout in replay, and of a live server's
 * stdout and stdin. Where it differs from the SDK's `StdioServerTransport`, tapedeck needs it to:
 * - each non-blank line is read with tapedeck's own JSON-RPC parser (batches, the JSON depth limit); a line it cannot
 *   read goes to `onerror` with its text (PARSE_ERROR, BAD_REQUEST), and so does a line over the cap (`LineReader`,
 *   LINE_TOO_LONG, without its text); reading goes on with the next line;
 * - lines are handed out one at a time: `onmessage` may return a promise, the next line waits for it, and the input
 *   is paused while lines are waiting (a client that writes faster than it reads is not buffered without bound);
 * - `send` writes in call order and resolves once the stream took the message, waiting for `drain` whenever the
 *   stream reported back-pressure; once the stream closed or failed there is nothing to wait for and sends resolve;
 * - `onclose` fires once, after the input ended and its last line (even without a newline) was handled.
 */
import type { Readable, Writable } from 'node:stream';
import { TapedeckError } from '../../errors.js';
import type { Message } from '../../providers/mcp.js';
import { parseRpcBody } from '../../providers/mcp-batch.js';
import type { McpTransport } from '../mcp/transport.js';
import { LineReader, lineTooLongMessage } from './line-reader.js';

export interface LineTransportOptions {
  /** The longest line read, in bytes (default 10 MB, the MCP SDK's). */
  maxLineBytes?: number;
  /** Who writes the input, for the line-limit message ("the client", "the server"). */
  peer?: string;
}

/** Lines read but not yet handled above which the input is paused. */
const HIGH_WATER_LINES = 16;

export class LineTransport implements McpTransport {
  onmessage?: McpTransport['onmessage'];
  onerror?: McpTransport['onerror'];
  onclose?: McpTransport['onclose'];

  private readonly reader: LineReader;
  private readonly peer: string;
  private readonly waiting: (() => Promise<void>)[] = [];
  private running = false;
  private ended = false;
  private closed = false;
  private writes: Promise<void> = Promise.resolve();
  private outputGone = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    opts: LineTransportOptions = {},
  ) {
    this.reader = new LineReader(opts.maxLineBytes);
    this.peer = opts.peer ?? 'the peer';
  }

  start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.once('end', this.onEnd);
    this.input.once('close', this.onEnd);
    const gone = (): void => void (this.outputGone = true);
    this.output.once('close', gone);
    this.output.once('error', gone);
    return Promise.resolve();
  }

  /** Write one message as a line; resolves once the stream took it (after `drain` when it asked to wait). */
  send(message: Message | Message[]): Promise<void> {
    const line = JSON.stringify(message) + '\n';
    this.writes = this.writes.then(() => this.write(line));
    return this.writes;
  }

  /** Stop reading; resolves once every send so far is written. */
  async close(): Promise<void> {
    this.input.off('data', this.onData);
    await this.writes;
    this.finish();
  }

  private write(line: string): Promise<void> {
    if (this.outputGone || this.output.destroyed || this.output.writableEnded) return Promise.resolve();
    if (this.output.write(line)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        this.output.off('drain', done);
        this.output.off('close', done);
        this.output.off('error', done);
        resolve();
      };
      this.output.on('drain', done);
      this.output.on('close', done);
      this.output.on('error', done);
    });
  }

  private readonly onData = (chunk: Buffer): void => {
    for (const item of this.reader.push(chunk)) {
      if ('line' in item) {
        if (item.line.trim() !== '') this.enqueue(item.line);
      } else {
        const err = new TapedeckError('LINE_TOO_LONG', `tapedeck: ${lineTooLongMessage(this.peer, item.maxLineBytes)}`);
        this.waiting.push(async () => this.onerror?.(err));
      }
    }
    void this.pump();
  };

  private readonly onEnd = (): void => {
    if (this.ended) return;
    this.ended = true;
    const rest = this.reader.end();
    if (rest !== undefined && rest.trim() !== '') this.enqueue(rest);
    void this.pump();
  };

  private enqueue(line: string): void {
    this.waiting.push(async () => {
      const parsed = parseRpcBody(line);
      if (!parsed.ok) return this.onerror?.(parsed.error, { text: line });
      const messages = parsed.messages as Message[];
      return this.onmessage?.(parsed.batch ? messages : (messages[0] as Message));
    });
  }

  /** Hand lines out one at a time, pausing the input while too many wait. */
  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let next = this.waiting.shift(); next !== undefined; next = this.waiting.shift()) {
        if (this.waiting.length >= HIGH_WATER_LINES && !this.input.isPaused()) this.input.pause();
        try {
          await next();
        } catch (err) {
          const why = err instanceof TapedeckError ? err : new TapedeckError('INTERNAL', (err as Error).message, { cause: err });
          await Promise.resolve(this.onerror?.(why)).catch(() => undefined);
        }
        if (this.waiting.length < HIGH_WATER_LINES && this.input.isPaused() && !this.ended) this.input.resume();
      }
    } finally {
      this.running = false;
    }
    if (this.ended) {
      await this.writes;
      this.finish();
    }
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}
