/**
 * When the messages of a replayed answer go out on a transport that writes message by message (stdio, the legacy
 * HTTP+SSE stream): each a macrotask after the one before at least, within one request at its recorded gap from the
 * message before (under the timing mode), and a request's answer at least {@link ANSWER_GAP_MS} after the
 * notifications that came before it, whatever the timing mode.
 *
 * The gap before an answer keeps a request's progress notifications whole: the MCP SDK's client handles a notification
 * a microtask later than a response, and the response removes the request's progress handler, so a notification that
 * reaches it in the same read as its answer is lost. A macrotask apart is enough in-process, not over a pipe, where a
 * client that reads a moment late reads everything written meanwhile at once. Measured with the SDK's stdio client
 * against `mcp-stdio` replay on a loaded 2-core machine (load ~15), runs whose 2 progress notifications all arrived:
 * 2 of 10 with no gap, 3 of 10 with a macrotask, 18 of 20 with 5 ms, 20 of 20 with 15 ms (a client stalled longer than
 * the gap can still lose them). Streamable HTTP paces its own SSE answers (`http-reply.ts`: the whole stream in one
 * write when instant, which the SDK's Streamable HTTP client reads event by event).
 */
import { scaledDelay } from '../../replay/modes.js';
import type { Message, RequestId } from '../../providers/mcp.js';
import type { Timing } from '../../http/types.js';
import type { McpSendOptions } from './transport.js';

/** The least time between a request's last notification and its answer. */
export const ANSWER_GAP_MS = 15;

export class Pacer {
  /** The offset of the last message sent for each request still open. */
  private readonly last = new Map<RequestId, number>();

  constructor(private readonly timing: Timing) {}

  /** Resolves when `message` may go out. Call in send order, each once the message before it went. */
  before(message: Message, opts: McpSendOptions | undefined): Promise<void> {
    const id = opts?.relatedRequestId;
    let wait = 0;
    if (id !== undefined) {
      const offset = opts?.offsetMs ?? 0;
      const previous = this.last.get(id);
      wait = scaledDelay(offset - (previous ?? 0), this.timing);
      if (message.method !== undefined || message.id !== id) this.last.set(id, offset);
      else {
        // The request's answer ends it.
        this.last.delete(id);
        if (previous !== undefined) wait = Math.max(wait, ANSWER_GAP_MS);
      }
    }
    return new Promise((resolve) => (wait > 0 ? setTimeout(resolve, wait) : setImmediate(resolve)));
  }
}
