import { ExchangeSchema, LlmMeaningSchema, McpMeaningSchema, type Exchange } from './schema.js';

/**
 * One exchange as one JSON line, keys in the documented (schema) order so tapes diff cleanly in review.
 * No memo of nested records: a WeakMap entry per serialised object cost more in garbage collection than the
 * re-serialisation it saved (replay serves the Nth recorded answer, a different object each time; replay took
 * 7-13 µs more CPU per request with the memo).
 */
const EXCHANGE_KEYS = Object.keys(ExchangeSchema.shape) as (keyof Exchange)[];
const ORDER: Partial<Record<keyof Exchange, readonly string[]>> = {
  request: ['method', 'path', 'query', 'headers', 'body'],
  response: ['status', 'headers', 'body', 'events', 'tail'],
  error: ['code', 'message', 'phase'],
  timing: ['ttfbMs', 'durationMs'],
  llm: Object.keys(LlmMeaningSchema.shape),
  mcp: Object.keys(McpMeaningSchema.shape),
  match: ['kind', 'source', 'stage', 'score', 'reason'],
};

export function serializeExchange(ex: Exchange): string {
  let out = '{';
  let first = true;
  for (const key of EXCHANGE_KEYS) {
    const value = ex[key];
    if (value === undefined) continue;
    out += `${first ? '' : ','}"${key}":${serializeField(key, value)}`;
    first = false;
  }
  return out + '}';
}

function serializeField(key: keyof Exchange, value: unknown): string {
  const order = ORDER[key];
  if (order === undefined || value === null || typeof value !== 'object') return JSON.stringify(value);
  const obj = value as Record<string, unknown>;
  const ordered: Record<string, unknown> = {};
  for (const k of order) if (obj[k] !== undefined) ordered[k] = obj[k];
  for (const k in obj) if (!(k in ordered) && obj[k] !== undefined) ordered[k] = obj[k];
  return JSON.stringify(ordered);
}
