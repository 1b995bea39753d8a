/** Helpers adapters share to build a request's semantic view (see `SemanticBuilder`). */
import { isObj } from './json.js';
import type { Json } from './types.js';

/** Call ids the provider or the agent generates per run: left out, as they link messages rather than mean anything. */
const CALL_IDS = new Set(['id', 'call_id', 'tool_call_id', 'tool_use_id']);

/**
 * One object (a message, a content part) as the view sees it: per-run call ids and cache markers left out, the
 * fields named in `fields` turned into their view (given the field's path and the object's), everything else kept
 * as is (so it must be equal).
 */
export function objectView(
  o: Json,
  path: string,
  fields: Record<string, ((value: unknown, path: string, parentPath: string) => unknown) | undefined>,
): Json {
  const out: Json = {};
  for (const [k, x] of Object.entries(o)) {
    if (CALL_IDS.has(k) || k === 'cache_control') continue;
    const view = fields[k];
    out[k] = view === undefined ? x : view(x, `${path}.${k}`, path);
  }
  return out;
}

/** A list of messages or parts, each through `item` (non-objects kept as they are). */
export function listView(v: unknown, path: string, item: (o: Json, path: string) => unknown): unknown {
  if (!Array.isArray(v)) return v;
  return v.map((x, i) => (isObj(x) ? item(x, `${path}[${i}]`) : x));
}
