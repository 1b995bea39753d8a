/**
 * One recorded call against the same request sent again today: what changed, each change with its severity.
 *
 * - breaking: what a client parses or acts on changed: the status, a field removed / renamed / of another type, an
 *   event type gone or the events in another order, the tool calls the model asks for, an MCP error or `isError`
 *   where there was none, a tool gone from `tools/list`, a newly required argument;
 * - notable: the answer moved: a new field or event type, another kind of content, an answer below the similarity
 *   threshold, another model behind the alias, cost or time to first byte beyond their ratios;
 * - noise: what changes every call (a reworded answer above the threshold, token counts, keep-alives).
 */
import stringify from 'fast-json-stable-stringify';
import { argsHash, normalizeArgs } from '../inspect/diff/tool-sequence.js';
import { textSimilarity } from '../inspect/diff/similarity.js';
import { shorten } from '../inspect/format.js';
import type { CostFn } from '../inspect/cost.js';
import { bodyJson, decodeBody } from '../tape/body.js';
import { isStreamed } from '../tape/framing/framing.js';
import { modelIn, type StreamRead } from './stream-read.js';
import { framingFor } from '../tape/framing/registry.js';
import type { Body, Exchange } from '../tape/schema.js';
import { compareShapes, shapeOf } from './shape.js';
import { shapeFinding, type Add, type Finding, type Severity, type Thresholds } from './finding.js';
import { compareStreams, streamShape, type StreamChange } from './stream-shape.js';
import { compareMcp } from './compare-mcp.js';

/** One side of a compared call, for the report. */
export interface CallSide {
  status: number | null;
  ttfbMs: number | null;
  tokens: number | null;
  costUsd: number | null;
  /** The model that answered, as the answer names it (an alias resolves to a dated snapshot). */
  model: string | null;
}

export interface CallComparison {
  findings: Finding[];
  /** How alike the answers' texts are (LLM output, MCP tool result text); null when neither has text. */
  similarity: number | null;
  recorded: CallSide;
  fresh: CallSide;
}

export interface CompareOptions {
  thresholds: Thresholds;
  costOf: CostFn;
  /** Streams stored apart (too large to hold), read beforehand: their shape and model (`stream-read.ts`). */
  streams?: { recorded?: StreamRead | undefined; fresh?: StreamRead | undefined };
}

export function compareCall(recorded: Exchange, fresh: Exchange, opts: CompareOptions): CallComparison {
  const t = opts.thresholds;
  const findings: Finding[] = [];
  const add = (severity: Severity, aspect: string, message: string): void => void findings.push({ severity, aspect, message });
  const side = (ex: Exchange): CallSide => ({
    status: ex.response?.status ?? null,
    ttfbMs: ex.timing.ttfbMs ?? null,
    tokens: tokensOf(ex),
    costUsd: ex.llm?.usage === undefined ? null : opts.costOf(ex),
    model: (ex === fresh ? opts.streams?.fresh?.model : opts.streams?.recorded?.model) ?? answerModel(ex) ?? null,
  });
  const out: CallComparison = { findings, similarity: null, recorded: side(recorded), fresh: side(fresh) };

  if (fresh.error?.phase === 'connect') {
    add('breaking', 'error', `could not reach ${fresh.upstream ?? 'the upstream'}: ${fresh.error.message}`);
    return out;
  }
  const rs = out.recorded.status;
  const fs = out.fresh.status;
  if (rs !== fs) {
    const failedThen = rs === null || rs === 429 || rs >= 500;
    add(
      failedThen && fs !== null && fs < 400 ? 'notable' : 'breaking',
      'status',
      `HTTP ${rs ?? '-'} → ${fs ?? '-'}${fs !== null && fs >= 400 ? `: ${errorText(fresh)}` : ''}${fs === 429 || (fs ?? 0) >= 500 ? ' (may be passing: run drift again)' : ''}`,
    );
    return out;
  }
  if (fresh.error !== undefined && recorded.error === undefined)
    add('breaking', 'error', `the answer broke off: ${fresh.error.code}: ${fresh.error.message}`);

  if (recorded.mcp !== undefined && fresh.mcp !== undefined) {
    for (const f of compareMcp(recorded, fresh, t)) findings.push(f);
    out.similarity = mcpSimilarity(recorded, fresh);
  } else {
    // An answer not read (too large to hold) says nothing of its text or tool calls: not compared.
    const read = compareBodies(recorded, fresh, add, opts.streams);
    if (read && recorded.llm !== undefined && fresh.llm !== undefined) out.similarity = compareAnswers(recorded, fresh, t, add);
  }
  const rm = out.recorded.model;
  const fm = out.fresh.model;
  if (rm !== null && fm !== null && rm !== fm) add('notable', 'model', `answered by ${fm}, was ${rm}`);
  compareUsage(out, t, add);
  const rt = out.recorded.ttfbMs;
  const ft = out.fresh.ttfbMs;
  if (rt !== null && ft !== null && ft > rt * t.latencyRatio && ft - rt >= t.latencyFloorMs)
    add('notable', 'latency', `first byte after ${Math.round(ft)} ms, was ${Math.round(rt)} ms (over ×${t.latencyRatio})`);
  return out;
}

/**
 * JSON body against JSON body, stream against stream; a JSON answer that became a stream (or the reverse) is breaking.
 * False when an answer was too large to be read (kept apart as its bytes).
 */
function compareBodies(recorded: Exchange, fresh: Exchange, add: Add, streams: CompareOptions['streams']): boolean {
  const streamed = (r: Exchange['response']): boolean =>
    (r !== undefined && isStreamed(r)) || framingFor(r?.headers['content-type']) !== undefined;
  const wasStream = streamed(recorded.response);
  const isStream = streamed(fresh.response);
  if (wasStream !== isStream) {
    add('breaking', 'shape', wasStream ? 'the answer was an event stream, now it is not' : 'the answer is an event stream now, it was not');
    return true;
  }
  if (wasStream) {
    const before = streams?.recorded?.shape ?? streamShape(recorded.response?.events ?? []);
    const after = streams?.fresh?.shape ?? streamShape(fresh.response?.events ?? []);
    for (const c of compareStreams(before, after)) streamFinding(c, add);
    return true;
  }
  // An answer too large to hold (over 16 MiB) is kept apart as its bytes, never parsed: its fields are not compared.
  const large = [recorded.response?.body, fresh.response?.body].some((b) => b?.kind === 'file');
  if (large) {
    add(
      'noise',
      'size',
      `the answer is ${sizeText(fresh.response?.body)}, was ${sizeText(recorded.response?.body)}: over 16 MiB, its fields are not compared`,
    );
    return false;
  }
  const a = bodyJson(recorded.response?.body);
  const b = bodyJson(fresh.response?.body);
  if (a !== undefined && b !== undefined) for (const c of compareShapes(shapeOf(a), shapeOf(b))) shapeFinding(c, add);
  return true;
}

function streamFinding(c: StreamChange, add: Add): void {
  switch (c.kind) {
    case 'event-removed':
      return add(c.keepalive ? 'noise' : 'breaking', 'stream', `no "${c.type}" events now`);
    case 'event-added':
      return add(c.keepalive ? 'noise' : 'notable', 'stream', `new event type "${c.type}"`);
    case 'order':
      return add('breaking', 'stream', `events in another order: ${c.after.join(', ')} (was ${c.before.join(', ')})`);
    case 'end':
      return add('breaking', 'stream', `the stream ends with "${c.after ?? '-'}", was "${c.before ?? '-'}"`);
    default:
      return shapeFinding(c, add);
  }
}

/** How much of each answer's text is compared word by word (256 Ki characters: far more than a model's usual answer). */
const SIMILAR_CHARS = 256 * 1024;

/** Tool calls (names, then arguments) and the text; returns the text similarity. */
function compareAnswers(recorded: Exchange, fresh: Exchange, t: Thresholds, add: Add): number | null {
  const a = recorded.llm?.toolCalls ?? [];
  const b = fresh.llm?.toolCalls ?? [];
  const names = (calls: typeof a): string => calls.map((c) => c.name).join(', ');
  if (names(a) !== names(b)) add('breaking', 'tools', `the model asks for [${names(b)}], was [${names(a)}]`);
  else {
    const k = a.findIndex((c, i) => argsHash(c.arguments) !== argsHash(b[i]?.arguments));
    if (k !== -1)
      add(
        'breaking',
        'tools',
        `other arguments for ${a[k]?.name ?? '?'}: ${shorten(stringify(normalizeArgs(b[k]?.arguments)), 80)}, was ${shorten(stringify(normalizeArgs(a[k]?.arguments)), 80)}`,
      );
  }
  const ra = recorded.llm?.outputText ?? '';
  const fa = fresh.llm?.outputText ?? '';
  if (ra === '' && fa === '') return null;
  // Word by word over the start of each answer: an answer of megabytes is not held in words to be compared.
  const sim = textSimilarity(ra.slice(0, SIMILAR_CHARS), fa.slice(0, SIMILAR_CHARS));
  if (sim < t.minSimilarity)
    add('notable', 'answer', `another answer (similarity ${sim.toFixed(2)} < ${t.minSimilarity}): ${JSON.stringify(shorten(fa, 80))}`);
  else if (ra !== fa) add('noise', 'answer', `reworded (similarity ${sim.toFixed(2)})`);
  if ((recorded.llm?.stopReason ?? null) !== (fresh.llm?.stopReason ?? null))
    add('notable', 'answer', `stops with ${fresh.llm?.stopReason ?? '-'}, was ${recorded.llm?.stopReason ?? '-'}`);
  return sim;
}

function compareUsage(c: CallComparison, t: Thresholds, add: Add): void {
  const ratioOff = (a: number, b: number): boolean => a > 0 && b > 0 && (b / a > t.costRatio || a / b > t.costRatio);
  const { recorded: r, fresh: f } = c;
  if (r.costUsd !== null && f.costUsd !== null && ratioOff(r.costUsd, f.costUsd))
    add('notable', 'cost', `costs $${f.costUsd.toFixed(6)}, was $${r.costUsd.toFixed(6)} (beyond ×${t.costRatio})`);
  else if (r.tokens !== null && f.tokens !== null && r.tokens !== f.tokens)
    add(
      (r.costUsd === null || f.costUsd === null) && ratioOff(r.tokens, f.tokens) ? 'notable' : 'noise',
      'cost',
      `${f.tokens} tokens, was ${r.tokens}`,
    );
}

function tokensOf(ex: Exchange): number | null {
  const u = ex.llm?.usage;
  if (u === undefined) return null;
  return u.totalTokens ?? (u.inputTokens ?? 0) + (u.outputTokens ?? 0);
}

/** The model an answer names (`gpt-4o-mini-2024-07-18` for `gpt-4o-mini`): the body's, or the first event's that says. */
export function answerModel(ex: Exchange): string | undefined {
  const body = modelIn(bodyJson(ex.response?.body));
  if (body !== undefined) return body;
  for (const ev of ex.response?.events ?? []) {
    if (ev.data === '' || ev.data === '[DONE]') continue;
    try {
      const m = modelIn(JSON.parse(ev.data));
      if (m !== undefined) return m;
    } catch {
      // not JSON
    }
  }
  return undefined;
}

/** A body's size for people (`2.1 KB`, `100.0 MB`). */
function sizeText(body: Body | undefined): string {
  const bytes = body === undefined ? 0 : body.kind === 'file' ? body.bytes : decodeBody(body).byteLength;
  return bytes >= 1024 * 1024
    ? `${(bytes / 1024 / 1024).toFixed(1)} MB`
    : bytes >= 1024
      ? `${(bytes / 1024).toFixed(1)} KB`
      : `${bytes} bytes`;
}

function errorText(ex: Exchange): string {
  const body = bodyJson(ex.response?.body) as { error?: { message?: unknown; type?: unknown } | string; message?: unknown } | undefined;
  const e = body?.error;
  const said =
    typeof e === 'string' ? e : typeof e?.message === 'string' ? e.message : typeof body?.message === 'string' ? body.message : undefined;
  return shorten(said ?? ex.llm?.errorType ?? 'error', 100);
}

/** The text of two MCP results (tool content text), compared word by word; null without text. */
function mcpSimilarity(recorded: Exchange, fresh: Exchange): number | null {
  const text = (ex: Exchange): string => {
    const content = (ex.mcp?.result as { content?: unknown } | undefined)?.content;
    if (!Array.isArray(content)) return '';
    return content.map((c: { text?: unknown }) => (typeof c.text === 'string' ? c.text : '')).join('\n');
  };
  const a = text(recorded);
  const b = text(fresh);
  return a === '' && b === '' ? null : textSimilarity(a, b);
}
