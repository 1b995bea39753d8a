import { decodedJsonText } from './body.js';
import { ExchangeSchema, LlmMeaningSchema, McpMeaningSchema, type Body, type Exchange, type ResponseRecord } from './schema.js';

/**
 * One exchange as one JSON line, keys in the documented (schema) order so tapes diff cleanly in review.
 * This runs once per exchange on the record and replay paths, so it copies nothing it does not have to: a record
 * whose keys are already in order (the capture path builds them so) is stringified as it is, and a JSON body that
 * replay has just sent to a client is written from the text it sent (`decodedJsonText`) instead of stringified again.
 * No memo of whole records: a WeakMap entry per serialised object cost more in garbage collection than the
 * re-serialisation it saved (replay serves the Nth recorded answer, a different object each time).
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
const RANK = Object.fromEntries(Object.entries(ORDER).map(([k, order]) => [k, new Map(order.map((name, i) => [name, i]))])) as Partial<
  Record<keyof Exchange, ReadonlyMap<string, number>>
>;

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
  const rank = RANK[key];
  if (rank === undefined || value === null || typeof value !== 'object') return JSON.stringify(value);
  const obj = value as Record<string, unknown>;
  if (key === 'response' || key === 'request') {
    const body = obj.body as Body | undefined;
    const text = body?.kind === 'json' ? decodedJsonText(body) : undefined;
    if (text !== undefined) return withBodyText(inOrder(obj, rank) ? obj : ordered(obj, rank), text);
  }
  return JSON.stringify(inOrder(obj, rank) ? obj : ordered(obj, rank));
}

/** Whether the keys the schema orders come in its order, and before any other key (JSON.stringify keeps insertion order). */
function inOrder(obj: Record<string, unknown>, rank: ReadonlyMap<string, number>): boolean {
  let last = -1;
  for (const k in obj) {
    const r = rank.get(k);
    if (r === undefined) last = Infinity;
    else if (r < last) return false;
    else last = r;
  }
  return true;
}

function ordered(obj: Record<string, unknown>, rank: ReadonlyMap<string, number>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of rank.keys()) if (obj[k] !== undefined) out[k] = obj[k];
  for (const k in obj) if (!(k in out) && obj[k] !== undefined) out[k] = obj[k];
  return out;
}

/** A request or response written field by field, its JSON body from text already made. */
function withBodyText(obj: Record<string, unknown>, bodyText: string): string {
  let out = '{';
  for (const k in obj) {
    const v = (obj as Partial<ResponseRecord> & Record<string, unknown>)[k];
    if (v === undefined) continue;
    out += `${out === '{' ? '' : ','}${JSON.stringify(k)}:${k === 'body' ? `{"kind":"json","json":${bodyText}}` : JSON.stringify(v)}`;
  }
  return out + '}';
}
