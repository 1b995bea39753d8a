/**
 * A live answer continuing one under way (`conversation.ts`, on-miss live): what the real server sends goes into the
 * client's open answer stream as it comes (an SSE answer byte for byte, a JSON answer as one event), and each request
 * the real server asks the client (its own `elicitation/create`, ...) is noted, so the client's reply goes back to the
 * real server rather than to the replay.
 */
import { looksLikeRpc, type Message } from '../../providers/mcp.js';
import { isServerRequest } from '../../replay/mcp-replies.js';
import { parseJson } from '../../tape/json-depth.js';
import { SseSplitter } from '../../tape/framing/sse.js';
import type { HeaderMap } from '../../tape/schema.js';
import type { ResponseSink } from '../../http/sink.js';
import { sseEvent, type PacedStream } from '../../http/sink-send.js';

export class LiveRelaySink implements ResponseSink {
  private sse = false;
  private readonly splitter = new SseSplitter();
  private readonly body: Buffer[] = [];
  private readonly closers: (() => void)[] = [];
  private opened!: () => void;
  /** Resolves once the real server's answer has begun (its head), or the relay was closed before. */
  readonly headed = new Promise<void>((resolve) => (this.opened = resolve));

  constructor(
    private readonly stream: PacedStream,
    /** Called with each request the real server asks the client. */
    private readonly asked: (request: Message) => void,
    /**
     * The real server's standalone stream (a GET) while the call runs: only its events are relayed (a server without
     * one answers 405, which is no part of the client's answer).
     */
    private readonly standalone = false,
  ) {}

  head(_status: number, headers: HeaderMap): void {
    this.sse = (headers['content-type'] ?? '').startsWith('text/event-stream');
    this.opened();
  }

  write(chunk: Uint8Array): boolean {
    if (!this.sse) {
      this.body.push(Buffer.from(chunk));
      return true;
    }
    for (const block of this.splitter.write(chunk)) this.look(block.data);
    void this.stream.write(chunk);
    return true;
  }

  onDrain(cb: () => void): void {
    setImmediate(cb);
  }

  end(): void {
    if (this.sse || this.standalone || this.body.length === 0) return;
    const text = Buffer.concat(this.body).toString('utf8');
    this.look(text);
    void this.stream.write(sseEvent('message', text));
  }

  cut(): void {
    this.end();
  }

  onClose(cb: () => void): void {
    this.closers.push(cb);
  }

  /** Stop relaying: the request to the real server is cancelled (a standalone stream, once the call has its answer). */
  close(): void {
    this.opened();
    for (const cb of this.closers.splice(0)) cb();
  }

  private look(data: string): void {
    let value: unknown;
    try {
      value = parseJson(data);
    } catch {
      return;
    }
    for (const m of Array.isArray(value) ? (value as unknown[]) : [value])
      if (looksLikeRpc(m) && isServerRequest(m as Message)) this.asked(m as Message);
  }
}
