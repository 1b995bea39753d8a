/** Helpers for writing modified replay's overrides into a request, recording what changed. */
import { isObj } from './json.js';
import type { Json, Rewritten } from './types.js';

/** Set `target[key]` to `to`, and note the change under `label` when it is one. */
export function setTracked(applied: Rewritten['applied'], target: Json, key: string, label: string, to: unknown): void {
  if (target[key] !== to) applied[label] = { from: target[key], to };
  target[key] = to;
}

/** `body[key]` as an object, created when absent (e.g. Gemini's `generationConfig`). */
export function objectAt(body: Json, key: string): Json {
  const v = body[key];
  if (isObj(v)) return v;
  const created: Json = {};
  body[key] = created;
  return created;
}
