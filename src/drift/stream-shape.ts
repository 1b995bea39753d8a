/**
 * The shape of an event stream, what a client that reads it relies on: the event types it carries, the order they
 * first appear in, the one it ends with, and the shape of each type's data. How many deltas a stream has depends on
 * the answer and never counts; neither does where a `ping` falls.
 */
import { parseJson } from '../tape/json-depth.js';
import type { SseEvent } from '../tape/schema.js';
import { compareShapes, eventRoot, type Shape, type ShapeChange, shapeOf } from './shape.js';

export interface StreamShape {
  /** Event types in the order they first appear. */
  order: string[];
  /** The type of the last event (`[DONE]`, `message_stop`, `response.completed`). */
  last: string | undefined;
  /** The data of every event, by type (paths rooted at `«TYPE»`). */
  shape: Shape;
}

/** Types that may come and go without meaning anything (keep-alives). */
const KEEPALIVE = new Set(['ping', 'keepalive', 'heartbeat']);

/**
 * An event's type: its `event:` name; else, for data-only streams, the data's own `type` (or `object`, as OpenAI's
 * chat chunks name themselves), a JSON-RPC message's method, `[DONE]`, or `data`.
 */
export function eventType(ev: SseEvent, data: unknown): string {
  if (ev.event !== undefined && ev.event !== '' && ev.event !== 'message') return ev.event;
  if (ev.data === '[DONE]') return '[DONE]';
  if (data !== null && typeof data === 'object' && !Array.isArray(data)) {
    const d = data as Record<string, unknown>;
    if (typeof d.type === 'string') return d.type;
    if (typeof d.object === 'string') return d.object;
    if (d.jsonrpc !== undefined) return typeof d.method === 'string' ? d.method : 'response';
  }
  return ev.data === '' ? '(empty)' : 'data';
}

export function streamShape(events: Iterable<SseEvent>): StreamShape {
  const shaper = new StreamShaper();
  for (const ev of events) shaper.push(ev);
  return shaper.shape;
}

/** A stream's shape, event by event: for a stream read from the store as it goes (never held whole). */
export class StreamShaper {
  readonly shape: StreamShape = { order: [], last: undefined, shape: new Map() };
  /** Add one event; returns its `data` parsed (undefined when it is not JSON), for whoever reads more of it. */
  push(ev: SseEvent): unknown {
    let data: unknown;
    try {
      data = ev.data === '' || ev.data === '[DONE]' ? undefined : parseJson(ev.data);
    } catch {
      data = undefined;
    }
    const type = eventType(ev, data);
    if (!this.shape.order.includes(type)) this.shape.order.push(type);
    if (!KEEPALIVE.has(type)) this.shape.last = type;
    shapeOf(data === undefined ? null : data, this.shape.shape, eventRoot(type));
    return data;
  }
}

export type StreamChange =
  | { kind: 'event-removed' | 'event-added'; type: string; keepalive: boolean }
  | { kind: 'order'; before: string[]; after: string[] }
  | { kind: 'end'; before: string | undefined; after: string | undefined }
  | ShapeChange;

export function compareStreams(before: StreamShape, after: StreamShape): StreamChange[] {
  const out: StreamChange[] = [];
  for (const t of before.order) if (!after.order.includes(t)) out.push({ kind: 'event-removed', type: t, keepalive: KEEPALIVE.has(t) });
  for (const t of after.order) if (!before.order.includes(t)) out.push({ kind: 'event-added', type: t, keepalive: KEEPALIVE.has(t) });
  const common = (o: readonly string[], other: readonly string[]): string[] => o.filter((t) => other.includes(t) && !KEEPALIVE.has(t));
  const a = common(before.order, after.order);
  const b = common(after.order, before.order);
  if (a.join('\n') !== b.join('\n')) out.push({ kind: 'order', before: a, after: b });
  else if (before.last !== after.last) out.push({ kind: 'end', before: before.last, after: after.last });
  // Fields within the event types both streams have (a type on one side only is reported above, once).
  for (const c of compareShapes(before.shape, after.shape)) if (!/^«[^»]*»$/.test(c.path)) out.push(c);
  return out;
}
