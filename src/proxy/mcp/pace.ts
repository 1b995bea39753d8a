/**
 * When the messages of a replayed answer go out on a transport that writes message by message (stdio, the legacy
 * HTTP+SSE stream): each a macrotask after the one before at least, and within one request at its recorded gap from
 * the message before, under the timing mode. The macrotask is what keeps a request's progress notifications whole:
 * the MCP SDK's client handles a notification a microtask later than a response, and a response removes the
 * request's progress handler, so a notification that reaches it in the same chunk as its answer is lost (it happened
 * to the SDK's stdio and SSE clients). Streamable HTTP paces its own SSE answers (`http-reply.ts`: the whole stream in
 * one write when instant, which the SDK's Streamable HTTP client reads event by event).
 */
import { scaledDelay } from '../../replay/modes.js';
import type { Message, RequestId } from '../../providers/mcp.js';
import type { Timing } from '../types.js';
import type { McpSendOptions } from './transport.js';

export class Pacer {
  /** The offset of the last message sent for each request still open. */
  private readonly last = new Map<RequestId, number>();

  constructor(private readonly timing: Timing) {}

  /** Resolves when `message` may go out. Call in send order. */
  before(message: Message, opts: McpSendOptions | undefined): Promise<void> {
    const id = opts?.relatedRequestId;
    const offset = opts?.offsetMs ?? 0;
    let wait = 0;
    if (id !== undefined) {
      wait = scaledDelay(offset - (this.last.get(id) ?? 0), this.timing);
      // The request's answer ends it.
      if (message.method === undefined && message.id === id) this.last.delete(id);
      else this.last.set(id, offset);
    }
    return new Promise((resolve) => (wait > 0 ? setTimeout(resolve, wait) : setImmediate(resolve)));
  }
}
