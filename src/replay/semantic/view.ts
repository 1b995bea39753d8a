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
import { detectLlmApi } from '../../providers/detect.js';
import { bodyJson } from '../../tape/body.js';
import { DEFAULT_IGNORED_FIELDS, queryKey, stripFields, type ExactKeyOptions, type KeyedRequest } from '../exact-key.js';
import { analyzeText, type TextInfo } from './text.js';

export interface TextField {
  /** Where the text sits, e.g. `messages[1].content` or `params.arguments.address`. */
  path: string;
  /** Prose (a message) or a tool argument / result value. */
  kind: 'prose' | 'arg';
  text: string;
  info: TextInfo;
}

export interface SemanticView {
  bucket: string;
  /** The texts that may differ, in a fixed order: two views in one bucket have the same paths. */
  fields: TextField[];
  /** The MCP tool called (`tools/call`), for per-tool thresholds. */
  tool?: string;
}

/** Top-level LLM request fields that never change the answer. */
const LLM_NOISE = new Set(['user', 'metadata', 'safety_identifier', 'prompt_cache_key', 'store']);
/** Tool-argument names whose values change every run. */
const NOISE_ARG =
  /^(?:request_?id|req_?id|trace_?id|span_?id|correlation_?id|idempotency_?key|nonce|timestamp|ts|now|current_?time|client_?time|sent_?at)$/i;
/** Call ids the provider or the agent generates per run: left out, as they link messages rather than mean anything. */
const CALL_IDS = new Set(['id', 'call_id', 'tool_call_id', 'tool_use_id']);
const TEXT = '\u0000text';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The semantic view of a request, or undefined when it is not a JSON LLM or MCP request (exact matching only). */
export function semanticView(
  req: KeyedRequest,
  opts: ExactKeyOptions = {},
  analyze: (text: string) => TextInfo = analyzeText,
): SemanticView | undefined {
  const raw = bodyJson(req.request.body);
  if (!isObj(raw)) return undefined;
  const body = stripFields(raw, opts.ignoreFields ?? DEFAULT_IGNORED_FIELDS) as Obj;
  const b = new ViewBuilder(analyze);
  let skeleton: unknown;
  let tool: string | undefined;
  if (body.jsonrpc === '2.0' && typeof body.method === 'string') {
    skeleton = b.mcp(body);
    if (body.method === 'tools/call' && isObj(body.params) && typeof body.params.name === 'string') tool = body.params.name;
  } else {
    const api = detectLlmApi(req.route, req.request.path, req.request.method);
    if (api === undefined || api.api === 'embeddings' || api.api === 'completions') return undefined;
    skeleton = b.llm(body, api.api);
  }
  const bucket = `${req.request.method.toUpperCase()} ${req.route}${req.request.path}?${queryKey(req.request.query, opts.ignoreQuery)}\n${stringify(skeleton)}`;
  return { bucket, fields: b.fields, ...(tool !== undefined ? { tool } : {}) };
}

class ViewBuilder {
  readonly fields: TextField[] = [];

  constructor(private readonly analyze: (text: string) => TextInfo) {}

  prose(path: string, text: string): string {
    this.fields.push({ path, kind: 'prose', text, info: this.analyze(text) });
    return TEXT;
  }

  /** Tool arguments by key: identifiers stay exact, words are compared, nonce-named keys are left out. */
  args(path: string, v: unknown): unknown {
    if (typeof v === 'string') {
      if (/\s/.test(v.trim()) || !/[\d/\\@:._=?#]/.test(v)) {
        this.fields.push({ path, kind: 'arg', text: v, info: this.analyze(v) });
        return TEXT;
      }
      return v;
    }
    if (Array.isArray(v)) return v.map((x, i) => this.args(`${path}[${i}]`, x));
    if (!isObj(v)) return v;
    const out: Obj = {};
    for (const k of Object.keys(v).sort()) if (!NOISE_ARG.test(k)) out[k] = this.args(`${path}.${k}`, v[k]);
    return out;
  }

  /** A tool's result as a message carries it: JSON compared by key, prose as prose. */
  result(path: string, v: unknown): unknown {
    if (typeof v !== 'string') return this.args(path, v);
    const t = v.trim();
    if (t.startsWith('{') || t.startsWith('[')) {
      try {
        return { json: this.args(path, JSON.parse(t)) };
      } catch {
        // not JSON: prose
      }
    }
    return this.prose(path, v);
  }

  mcp(body: Obj): unknown {
    const params = isObj(body.params) ? body.params : undefined;
    if ((body.method === 'tools/call' || body.method === 'prompts/get') && params !== undefined) {
      const { arguments: args, ...rest } = params;
      return { method: body.method, params: { ...rest, arguments: this.args('params.arguments', args ?? {}) } };
    }
    return { method: body.method, params };
  }

  llm(body: Obj, api: string): unknown {
    const out: Obj = {};
    // `stream` changes the answer's shape, not the answer: where tapedeck converts between the two, it is left out.
    const shapeOnly = api === 'chat.completions' || api === 'messages';
    for (const [k, v] of Object.entries(body)) {
      if (LLM_NOISE.has(k)) continue;
      if (shapeOnly && (k === 'stream' || k === 'stream_options')) continue;
      if (k === 'messages' || k === 'input' || k === 'contents') out[k] = this.conversation(k, v, api);
      else if (k === 'system' || k === 'instructions') out[k] = this.content(k, v, false);
      else if (k === 'systemInstruction' && isObj(v)) out[k] = { ...v, parts: this.content(`${k}.parts`, v.parts, false) };
      else out[k] = v;
    }
    return out;
  }

  /** Messages by role and position (chat, Anthropic, Responses input items, Gemini contents). */
  private conversation(key: string, v: unknown, api: string): unknown {
    if (typeof v === 'string') return this.prose(key, v);
    if (!Array.isArray(v)) return v;
    return v.map((m, i) => {
      const path = `${key}[${i}]`;
      if (!isObj(m)) return m;
      const out: Obj = {};
      const isToolResult = m.role === 'tool' || m.role === 'function' || m.type === 'function_call_output';
      for (const [k, x] of Object.entries(m)) {
        if (CALL_IDS.has(k) || k === 'cache_control') continue;
        if (k === 'content' || k === 'parts')
          out[k] = isToolResult && typeof x === 'string' ? this.result(`${path}.${k}`, x) : this.content(`${path}.${k}`, x, isToolResult);
        else if (k === 'output' && isToolResult) out[k] = this.result(`${path}.output`, x);
        else if (k === 'arguments' && api === 'responses') out[k] = this.jsonArgs(`${path}.arguments`, x);
        else if (k === 'tool_calls' && Array.isArray(x)) out[k] = x.map((tc, j) => this.toolCall(`${path}.tool_calls[${j}]`, tc));
        else out[k] = x;
      }
      return out;
    });
  }

  /** Message content: a string, or a list of parts / blocks. */
  private content(path: string, v: unknown, toolResult: boolean): unknown {
    if (typeof v === 'string') return toolResult ? this.result(path, v) : this.prose(path, v);
    if (!Array.isArray(v)) return v;
    return v.map((part, i) => {
      const p = `${path}[${i}]`;
      if (!isObj(part)) return part;
      const out: Obj = {};
      for (const [k, x] of Object.entries(part)) {
        if (CALL_IDS.has(k) || k === 'cache_control') continue;
        if (k === 'text' && typeof x === 'string') out[k] = toolResult ? this.result(p, x) : this.prose(p, x);
        else if (k === 'input' && part.type === 'tool_use') out[k] = this.args(`${p}.input`, x);
        else if (k === 'content' && part.type === 'tool_result') out[k] = this.content(`${p}.content`, x, true);
        else if (k === 'functionCall' && isObj(x)) out[k] = { ...x, args: this.args(`${p}.functionCall.args`, x.args) };
        else if (k === 'functionResponse' && isObj(x)) out[k] = { ...x, response: this.args(`${p}.functionResponse.response`, x.response) };
        else out[k] = x;
      }
      return out;
    });
  }

  /** An OpenAI chat tool call: the name exact, the JSON-string arguments by key. */
  private toolCall(path: string, tc: unknown): unknown {
    if (!isObj(tc)) return tc;
    const fn = isObj(tc.function) ? tc.function : {};
    return { type: tc.type, function: { name: fn.name, arguments: this.jsonArgs(`${path}.arguments`, fn.arguments) } };
  }

  private jsonArgs(path: string, v: unknown): unknown {
    if (typeof v !== 'string') return this.args(path, v);
    try {
      return { json: this.args(path, JSON.parse(v)) };
    } catch {
      return v;
    }
  }
}
