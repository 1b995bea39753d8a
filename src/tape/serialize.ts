import { ExchangeSchema, LlmMeaningSchema, McpMeaningSchema, type Body, type Exchange, type ResponseRecord } from './schema.js';
import type { WireTexts } from './store.js';

/**
 * One exchange as one JSON line, keys in the documented (schema) order so tapes diff cleanly in review.
 * This runs once per exchange on the record and replay paths, so it copies nothing it does not have to: a record
 * whose keys are already in order (the capture path builds them so) is stringified as it is, and a part whose text
 * the caller already has (`wire`: a JSON body's bytes as they came, a recorded answer served again) is written from
 * that text, as long as the part is still the object the text is of.
 */
const EXCHANGE_KEYS = Object.keys(ExchangeSchema.shape) as (keyof Exchange)[];
const ORDER: Partial<Record<keyof Exchange, readonly string[]>> = {
  request: ['method', 'path', 'query', 'headers', 'body'],
  response: ['status', 'headers', 'body', 'events', 'eventsFile', 'tail'],
  error: ['code', 'message', 'phase'],
  timing: ['ttfbMs', 'durationMs'],
  llm: Object.keys(LlmMeaningSchema.shape),
  mcp: Object.keys(McpMeaningSchema.shape),
  match: ['kind', 'source', 'stage', 'score', 'reason'],
};
const RANK = Object.fromEntries(Object.entries(ORDER).map(([k, order]) => [k, new Map(order.map((name, i) => [name, i]))])) as Partial<
  Record<keyof Exchange, ReadonlyMap<string, number>>
>;

/** Each top-level key in schema order: its `"key":` prefix, and the order of its fields when the schema orders them. */
const FIELDS = EXCHANGE_KEYS.map((key) => ({ key, prefix: `${JSON.stringify(key)}:`, rank: RANK[key] }));

export function serializeExchange(ex: Exchange, wire?: WireTexts): string {
  return serializeLine(ex, wire).line;
}

/** A line, and where in it a response written from `wire.response` sits (`line.slice(start, end)`). */
export interface SerializedLine {
  line: string;
  response?: { start: number; end: number };
}

export function serializeLine(ex: Exchange, wire?: WireTexts): SerializedLine {
  let out = '{';
  let at: SerializedLine['response'];
  for (const { key, prefix, rank } of FIELDS) {
    const value = ex[key];
    if (value === undefined) continue;
    out += `${out.length === 1 ? '' : ','}${prefix}`;
    if (key === 'response' && wire?.response?.of === value) {
      at = { start: out.length, end: out.length + wire.response.text.length };
      out += wire.response.text;
    } else out += serializeField(key, value, rank, wire);
  }
  out += '}';
  return at === undefined ? { line: out } : { line: out, response: at };
}

/** A response as its JSON text in a tape line (what a recorded answer served again may keep, as `wire.response`). */
export function serializeResponse(response: ResponseRecord): string {
  return serializeField('response', response, RANK.response, undefined);
}

function serializeField(
  key: keyof Exchange,
  value: unknown,
  rank: ReadonlyMap<string, number> | undefined,
  wire: WireTexts | undefined,
): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (rank === undefined || value === null || typeof value !== 'object') return JSON.stringify(value);
  const obj = value as Record<string, unknown>;
  if (key === 'response' || key === 'request') {
    const known = key === 'response' ? wire?.responseBody : wire?.requestBody;
    const body = obj.body as Body | undefined;
    if (body?.kind === 'json' && known?.of === body) return withBodyText(inOrder(obj, rank) ? obj : ordered(obj, rank), known.text);
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

/** `"key":` for the keys of requests and responses (any other key is quoted as it comes). */
const QUOTED = new Map([...(ORDER.request ?? []), ...(ORDER.response ?? [])].map((k) => [k, `${JSON.stringify(k)}:`]));

/** A request or response written field by field, its JSON body from text already made. */
function withBodyText(obj: Record<string, unknown>, bodyText: string): string {
  let out = '{';
  for (const k in obj) {
    const v = (obj as Partial<ResponseRecord> & Record<string, unknown>)[k];
    if (v === undefined) continue;
    const prefix = QUOTED.get(k) ?? `${JSON.stringify(k)}:`;
    const text =
      k === 'body' ? `{"kind":"json","json":${bodyText}}` : typeof v === 'number' && Number.isFinite(v) ? String(v) : JSON.stringify(v);
    out += `${out.length === 1 ? '' : ','}${prefix}${text}`;
  }
  return out + '}';
}
