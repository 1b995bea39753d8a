/**
 * A stream drift compares without holding it: its shape and the model it names, folded event by event as the events
 * are read (from the tape's store, or from where drift kept a fresh answer too large for memory).
 */
import type { SseEvent } from '../tape/schema.js';
import { StreamShaper, type StreamShape } from './stream-shape.js';

export interface StreamRead {
  shape: StreamShape;
  /** The model the first event that names one names. */
  model: string | undefined;
}

/** The model a parsed answer (a JSON body, or one event's data) names: `model`, `modelVersion`, or its message's / response's. */
export function modelIn(v: unknown): string | undefined {
  if (v === null || typeof v !== 'object') return undefined;
  const o = v as Record<string, unknown>;
  for (const x of [
    o.model,
    o.modelVersion,
    (o.message as Record<string, unknown> | undefined)?.model,
    (o.response as Record<string, unknown> | undefined)?.model,
  ])
    if (typeof x === 'string' && x !== '') return x;
  return undefined;
}

export async function readStream(events: AsyncIterable<SseEvent>): Promise<StreamRead> {
  const shaper = new StreamShaper();
  let model: string | undefined;
  for await (const ev of events) {
    const data = shaper.push(ev);
    model ??= modelIn(data);
  }
  return { shape: shaper.shape, model };
}
