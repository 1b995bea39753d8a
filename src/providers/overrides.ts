/** Helpers for writing modified replay's overrides into a request, recording what changed. */
import { isObj } from './json.js';
import type { Json, LlmOverrides, Rewritten } from './types.js';

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

/**
 * Overrides for an API that keeps the model, temperature, max tokens and system prompt as top-level fields of the
 * request (Anthropic messages, OpenAI Responses), named by `keys`. The system prompt is always noted as applied.
 */
export function topLevelOverrides(body: Json, path: string, o: LlmOverrides, keys: { maxTokens: string; system: string }): Rewritten {
  const applied: Rewritten['applied'] = {};
  if (o.model !== undefined) setTracked(applied, body, 'model', 'model', o.model);
  if (o.temperature !== undefined) setTracked(applied, body, 'temperature', 'temperature', o.temperature);
  if (o.maxTokens !== undefined) setTracked(applied, body, keys.maxTokens, keys.maxTokens, o.maxTokens);
  if (o.systemPrompt !== undefined) {
    applied[keys.system] = { from: body[keys.system], to: o.systemPrompt };
    body[keys.system] = o.systemPrompt;
  }
  return { body, path, applied };
}
