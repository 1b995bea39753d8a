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

export function serializeExchange(ex: Exchange): string {
  return serializeWithReused(ex).line;
}

/**
 * Answers written again and again: replay serves a recorded answer to every request it matches, and each serving
 * goes on the replay tape with that same answer. Their text is made once (and, by {@link SerializedLine}, scanned once
 * for secrets), not once per serving: for a streamed answer that is most of the line's cost.
 */
const reused = new WeakSet<object>();
const reusedText = new WeakMap<object, ReusedText>();
/** Answers larger than this are serialised each time, not kept (a tape of large answers would hold them twice). */
const MAX_REUSED_CHARS = 256 * 1024;

/** The text of a reused answer, and what a secret prefilter said of it (for the last prefilter that asked). */
export interface ReusedText {
  readonly text: string;
  scanned?: { by: unknown; hit: boolean };
}

/** Mark a response that will be written unchanged many times (a recorded answer replay serves): its text is kept. */
export function reuseResponse(response: object): void {
  reused.add(response);
}

export interface SerializedLine {
  line: string;
  /** The reused answer in the line: its text and where it is (`line.slice(start, end)`). */
  reused?: { start: number; end: number; text: ReusedText };
}

/** An exchange as its line, with where a reused answer's kept text sits in it (see {@link reuseResponse}). */
export function serializeWithReused(ex: Exchange): SerializedLine {
  let out = '{';
  let kept: SerializedLine['reused'];
  for (const { key, prefix, rank } of FIELDS) {
    const value = ex[key];
    if (value === undefined) continue;
    out += `${out.length === 1 ? '' : ','}${prefix}`;
    const text = key === 'response' && reused.has(value as object) ? keptText(value as object, rank) : serializeField(key, value, rank);
    if (typeof text !== 'string') {
      kept = { start: out.length, end: out.length + text.text.length, text };
      out += text.text;
    } else out += text;
  }
  out += '}';
  return kept === undefined ? { line: out } : { line: out, reused: kept };
}

/** A reused answer's kept text, made on its first writing; an answer too large to keep is written as text each time. */
function keptText(response: object, rank: ReadonlyMap<string, number> | undefined): ReusedText | string {
  let text = reusedText.get(response);
  if (text === undefined) {
    const made = serializeField('response', response, rank);
    if (made.length > MAX_REUSED_CHARS) {
      reused.delete(response);
      return made;
    }
    text = { text: made };
    reusedText.set(response, text);
  }
  return text;
}

function serializeField(key: keyof Exchange, value: unknown, rank: ReadonlyMap<string, number> | undefined): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
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
