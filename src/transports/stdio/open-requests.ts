/**
 * Which request a server's message belongs to, on a stdio connection where everything shares one stream: the
 * bookkeeping of record (what each request got, for its exchange) and of a live forward (the answer to wait for).
 * An answer closes the open request with its id; a notification or a server request goes to the open request whose
 * progress token it carries, else to the latest one still open (a stdio server works on one thing at a time).
 */
import { progressToken, type Message, type RequestId, type TimedMessage } from '../../providers/mcp.js';

export interface OpenRequest {
  /** The request as it was sent. */
  message: Message;
  /** `performance.now()` when it was sent. */
  t0: number;
  /** What the server sent for it before its answer, with offsets from `t0`. */
  events: TimedMessage[];
  /** When the first of those came, from `t0`. */
  firstEventMs?: number;
}

/** Where a server message went: it answered an open request (now closed), it joined one's events, or neither. */
export type Routed<T extends OpenRequest> = { answered: T } | { joined: T } | { orphan: true };

export class OpenRequests<T extends OpenRequest = OpenRequest> {
  private readonly open = new Map<RequestId, T>();

  /** Start tracking a request under `id` (its own id, or the private one it was sent with). */
  add(id: RequestId, request: T): void {
    this.open.set(id, request);
  }

  route(msg: Message, at: number = performance.now()): Routed<T> {
    const id = msg.id as RequestId;
    const answered = msg.method === undefined ? this.open.get(id) : undefined;
    if (answered !== undefined) {
      this.open.delete(id);
      return { answered };
    }
    const token = (msg.params as { progressToken?: RequestId } | undefined)?.progressToken;
    const all = [...this.open.values()];
    const owner = (token === undefined ? undefined : all.find((o) => progressToken(o.message) === token)) ?? all.at(-1);
    if (owner === undefined) return { orphan: true };
    owner.firstEventMs ??= at - owner.t0;
    owner.events.push({ offsetMs: at - owner.t0, message: msg });
    return { joined: owner };
  }

  /** Every request still open, oldest first, and forget them. */
  drain(): T[] {
    const all = [...this.open.values()];
    this.open.clear();
    return all;
  }
}
