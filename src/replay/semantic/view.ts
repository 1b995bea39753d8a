/**
 * A request as semantic matching sees it: a *bucket* (everything that must be equal before any similarity is
 * computed) and the texts that may differ. The bucket holds method, route, path, query, model, every parameter
 * (tools and their schemas, tool_choice, response_format, reasoning / thinking, temperature, seed, ...), message
 * roles and positions, tool names, argument keys, and every non-text value; the texts are the conversation's prose
 * and the string values of tool arguments and results, compared field by field.
 * Fields that never change the answer (`user`, `metadata`, call ids, JSON-RPC ids, `_meta`, nonce-named
 * arguments) are left out of both.
 */
import stringify from 'fast-json-stable-stringify';
import { detectAdapter } from '../../providers/detect.js';
import { adapterFor } from '../../providers/registry.js';
import { isObj } from '../../providers/json.js';
import { mcpSemantic } from '../../providers/mcp.js';
import type { Json, SemanticBuilder } from '../../providers/types.js';
import { bodyJson } from '../../tape/body.js';
import { DEFAULT_IGNORED_FIELDS, queryKey, stripFields, type ExactKeyOptions, type KeyedRequest } from '../exact-key.js';
import type { Position } from './noise.js';
import { analyzeText, type TextInfo } from './tokens.js';
import { parseJson } from '../../tape/json-depth.js';

export interface TextField {
  /** Where the text sits, e.g. `messages[1].content` or `params.arguments.address`. */
  path: string;
  /** Prose (a message) or a tool argument / result value. */
  kind: 'prose' | 'arg';
  /** Whose text it is: a system prompt, the user's turn, the assistant's, a tool's result or arguments. */
  position: Position;
  text: string;
  info: TextInfo;
}

/** Analyses a text as it sits at a position (cached per tape by the index). */
export type Analyze = (text: string, position: Position) => TextInfo;

export interface SemanticView {
  bucket: string;
  /** The texts that may differ, in a fixed order: two views in one bucket have the same paths. */
  fields: TextField[];
  /** The MCP tool called (`tools/call`), for per-tool thresholds. */
  tool?: string;
  /** Request fields that never change the answer (`user`, `metadata`, ...), left out of the bucket: name -> JSON. */
  ignored: Record<string, string>;
}

/** Top-level LLM request fields that never change the answer. */
const LLM_NOISE = new Set(['user', 'metadata', 'safety_identifier', 'prompt_cache_key', 'store']);
/** Tool-argument names whose values change every run. */
const NOISE_ARG =
  /^(?:request_?id|req_?id|trace_?id|span_?id|correlation_?id|idempotency_?key|nonce|timestamp|ts|now|current_?time|client_?time|sent_?at)$/i;
const TEXT = '\u0000text';
const CJK_TEXT = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}]/u;

/**
 * The semantic view of a request, or undefined when it is not a JSON LLM or MCP request (exact matching only). The
 * API's adapter (the one its `llm` meaning names, when it carries one) walks the request (MCP: `providers/mcp.ts`)
 * and says which values are texts to compare.
 */
export function semanticView(
  req: KeyedRequest & { llm?: { api: string } | undefined },
  opts: ExactKeyOptions = {},
  analyze: Analyze = analyzeText,
): SemanticView | undefined {
  const raw = bodyJson(req.request.body);
  if (!isObj(raw)) return undefined;
  const body = stripFields(raw, opts.ignoreFields ?? DEFAULT_IGNORED_FIELDS) as Json;
  const b = new ViewBuilder(analyze, body);
  let skeleton: unknown;
  let tool: string | undefined;
  const ignored: Record<string, string> = {};
  if (body.jsonrpc === '2.0' && typeof body.method === 'string') {
    skeleton = mcpSemantic(body, b);
    if (body.method === 'tools/call' && isObj(body.params) && typeof body.params.name === 'string') tool = body.params.name;
  } else {
    // The API the request's meaning names (computed once per request, or recorded), else detected here.
    const adapter =
      req.llm !== undefined ? adapterFor(req.llm.api) : detectAdapter(req.route, req.request.path, req.request.method)?.adapter;
    if (adapter?.semantic === undefined) return undefined;
    const meaningful: Json = {};
    for (const [k, v] of Object.entries(body)) {
      if (LLM_NOISE.has(k)) ignored[k] = stringify(v);
      else meaningful[k] = v;
    }
    skeleton = adapter.semantic(meaningful, b);
  }
  const bucket = `${req.request.method.toUpperCase()} ${req.route}${req.request.path}?${queryKey(req.request.query, opts.ignoreQuery)}\n${stringify(skeleton)}`;
  return { bucket, fields: b.fields, ignored, ...(tool !== undefined ? { tool } : {}) };
}

/** Collects the texts of a view as an adapter walks the request; each text leaves a placeholder in the skeleton. */
class ViewBuilder implements SemanticBuilder {
  readonly fields: TextField[] = [];

  constructor(
    private readonly analyze: Analyze,
    private readonly body: Json,
  ) {}

  prose(path: string, text: string, position: Position = positionOf(this.body, path)): unknown {
    this.fields.push({ path, kind: 'prose', position, text, info: this.analyze(text, position) });
    return TEXT;
  }

  args(path: string, v: unknown, position: Position = /functionResponse/.test(path) ? 'result' : 'arg'): unknown {
    if (typeof v === 'string') {
      // Words to compare (a sentence, a name, a CJK sentence written without spaces), or an identifier kept exact.
      if (/\s/.test(v.trim()) || !/[\d/\\@:._=?#]/.test(v) || CJK_TEXT.test(v)) {
        this.fields.push({ path, kind: 'arg', position, text: v, info: this.analyze(v, position) });
        return TEXT;
      }
      return v;
    }
    if (Array.isArray(v)) return v.map((x, i) => this.args(`${path}[${i}]`, x, position));
    if (!isObj(v)) return v;
    const out: Json = {};
    for (const k of Object.keys(v).sort()) if (!NOISE_ARG.test(k)) out[k] = this.args(`${path}.${k}`, v[k], position);
    return out;
  }

  result(path: string, v: unknown): unknown {
    if (typeof v !== 'string') return this.args(path, v, 'result');
    const t = v.trim();
    if (t.startsWith('{') || t.startsWith('[')) {
      try {
        return { json: this.args(path, parseJson(t), 'result') };
      } catch {
        // not JSON: prose
      }
    }
    return this.prose(path, v, 'result');
  }

  jsonArgs(path: string, v: unknown): unknown {
    if (typeof v !== 'string') return this.args(path, v);
    try {
      return { json: this.args(path, parseJson(v)) };
    } catch {
      return v;
    }
  }
}

/** Top-level fields that hold a system prompt (Anthropic `system`, Responses `instructions`, Gemini `systemInstruction`). */
const SYSTEM_FIELDS = new Set(['system', 'instructions', 'systemInstruction']);
const LISTS = new Set(['messages', 'input', 'contents']);

/**
 * Whose text sits at `path` of the request body: the message it belongs to says (its `role`); a system field is the
 * system prompt. Only a system prompt's clocks and UUIDs are per-run noise (`noise.ts`).
 */
export function positionOf(body: Json, path: string): Position {
  const m = /^(\w+)(?:\[(\d+)\])?/.exec(path);
  const field = m?.[1] ?? '';
  if (SYSTEM_FIELDS.has(field)) return 'system';
  if (!LISTS.has(field) || m?.[2] === undefined) return 'user';
  const list = body[field];
  const item = Array.isArray(list) ? list[Number(m[2])] : undefined;
  const role = isObj(item) ? item.role : undefined;
  if (role === 'system' || role === 'developer') return 'system';
  if (role === 'assistant' || role === 'model') return 'assistant';
  if (role === 'tool' || role === 'function' || (isObj(item) && item.type === 'function_call_output')) return 'result';
  return 'user';
}
