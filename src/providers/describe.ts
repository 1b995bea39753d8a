import { bodyJson } from '../tape/body.js';
import type { LlmMeaning, RequestRecord, SseEvent, ToolCall, Usage } from '../tape/schema.js';
import { detectLlmApi } from './detect.js';
import type { ExchangeView } from './types.js';

export { detectLlmApi };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** Parameters that change the answer, other than the conversation itself. */
const PARAM_KEYS = [
  'temperature',
  'top_p',
  'top_k',
  'max_tokens',
  'max_completion_tokens',
  'max_output_tokens',
  'seed',
  'stop',
  'stop_sequences',
  'n',
  'presence_penalty',
  'frequency_penalty',
  'tool_choice',
  'response_format',
  'reasoning',
  'reasoning_effort',
  'thinking',
  'parallel_tool_calls',
  'instructions_hash',
];

/** Request-side meaning (provider, api, model, params, streamed) of an LLM request, for matching and miss reports. */
export function requestSideLlm(route: string, request: RequestRecord, upstream?: string): LlmMeaning | undefined {
  const id = detectLlmApi(route, request.path, request.method, upstream);
  if (id === undefined) return undefined;
  const body = bodyJson(request.body);
  const b: Obj = isObj(body) ? body : {};
  const params: Obj = {};
  for (const k of PARAM_KEYS) if (b[k] !== undefined) params[k] = b[k];
  if (isObj(b.text) && b.text.format !== undefined) params.text_format = b.text.format;
  if (isObj(b.generationConfig)) for (const [k, v] of Object.entries(b.generationConfig)) params[k] = v;
  const tools = toolNames(b.tools);
  if (tools.length > 0) params.tools = tools;
  let model = str(b.model);
  let streamed = b.stream === true;
  if (id.provider === 'gemini') {
    model = /\/models\/([^/:]+):/.exec(request.path)?.[1] ?? model;
    streamed = /:streamGenerateContent/i.test(request.path);
  }
  const meaning: LlmMeaning = { provider: id.provider, api: id.api, params, streamed, toolCalls: [] };
  if (model !== undefined) meaning.model = model;
  return meaning;
}

function toolNames(tools: unknown): string[] {
  if (!Array.isArray(tools)) return [];
  const names: string[] = [];
  for (const t of tools) {
    if (!isObj(t)) continue;
    const fn = isObj(t.function) ? t.function : undefined;
    const name = str(fn?.name) ?? str(t.name);
    if (name) names.push(name);
    if (Array.isArray(t.functionDeclarations))
      for (const d of t.functionDeclarations) if (isObj(d) && str(d.name)) names.push(d.name as string);
  }
  return names.sort();
}

/** Full meaning of a completed exchange: request side plus usage, tool calls, output text, stop reason. Never throws on odd input. */
export function describeLlm(ex: ExchangeView & { upstream?: string | undefined }): LlmMeaning | undefined {
  const meaning = requestSideLlm(ex.route, ex.request, ex.upstream);
  if (meaning === undefined) return undefined;
  const res = ex.response;
  if (res === undefined) return meaning;
  const acc: Acc = { text: '', thinking: '', tools: [] };
  if (res.events !== undefined) {
    for (const ev of res.events) {
      if (ev.data === '' || ev.data === '[DONE]') continue;
      let data: unknown;
      try {
        data = JSON.parse(ev.data);
      } catch {
        continue;
      }
      if (isObj(data)) streamEvent(meaning, ev, data, acc);
    }
  } else {
    const body = bodyJson(res.body);
    if (isObj(body)) {
      if (res.status >= 400) errorBody(acc, body);
      else if (meaning.api === 'chat.completions') chatMessage(acc, body);
      else if (meaning.api === 'responses') responsesBody(acc, body);
      else if (meaning.api === 'messages') anthropicMessage(acc, body);
      else if (meaning.api === 'generateContent') geminiChunk(acc, body);
      else if (meaning.api === 'completions') acc.text += str((body.choices as Obj[] | undefined)?.[0]?.text) ?? '';
      if (isObj(body.usage) || isObj(body.usageMetadata)) acc.usage = usage(meaning.provider, body.usage ?? body.usageMetadata);
    }
  }
  if (acc.text !== '') meaning.outputText = acc.text;
  if (acc.thinking !== '') meaning.thinking = acc.thinking;
  meaning.toolCalls = acc.tools.filter((t): t is PendingTool => t !== undefined).map(finishTool);
  if (acc.usage) meaning.usage = acc.usage;
  if (acc.stop) meaning.stopReason = acc.stop;
  if (acc.error) meaning.errorType = acc.error;
  if (acc.model && meaning.model === undefined) meaning.model = acc.model;
  return meaning;
}

interface PendingTool {
  id?: string;
  name: string;
  args: string;
  parsed?: unknown;
}
interface Acc {
  text: string;
  thinking: string;
  tools: (PendingTool | undefined)[];
  usage?: Usage;
  stop?: string;
  error?: string;
  model?: string;
}

function finishTool(t: PendingTool): ToolCall {
  let args: unknown = t.parsed;
  if (args === undefined) {
    try {
      args = t.args === '' ? {} : JSON.parse(t.args);
    } catch {
      args = t.args;
    }
  }
  return t.id !== undefined ? { id: t.id, name: t.name, arguments: args } : { name: t.name, arguments: args };
}

function usage(provider: LlmMeaning['provider'], u: unknown): Usage | undefined {
  if (!isObj(u)) return undefined;
  const out: Usage = {};
  if (provider === 'anthropic') {
    // input = uncached + cache reads + cache writes; cachedInputTokens = cache reads.
    const input = (num(u.input_tokens) ?? 0) + (num(u.cache_read_input_tokens) ?? 0) + (num(u.cache_creation_input_tokens) ?? 0);
    if (u.input_tokens !== undefined) out.inputTokens = input;
    if (num(u.output_tokens) !== undefined) out.outputTokens = num(u.output_tokens);
    if (num(u.cache_read_input_tokens)) out.cachedInputTokens = num(u.cache_read_input_tokens);
  } else if (provider === 'gemini') {
    out.inputTokens = num(u.promptTokenCount);
    out.outputTokens = (num(u.candidatesTokenCount) ?? 0) + (num(u.thoughtsTokenCount) ?? 0);
    if (num(u.cachedContentTokenCount)) out.cachedInputTokens = num(u.cachedContentTokenCount);
    out.totalTokens = num(u.totalTokenCount);
  } else {
    out.inputTokens = num(u.prompt_tokens) ?? num(u.input_tokens);
    out.outputTokens = num(u.completion_tokens) ?? num(u.output_tokens);
    const details = (
      isObj(u.prompt_tokens_details) ? u.prompt_tokens_details : isObj(u.input_tokens_details) ? u.input_tokens_details : {}
    ) as Obj;
    if (num(details.cached_tokens)) out.cachedInputTokens = num(details.cached_tokens);
    out.totalTokens = num(u.total_tokens);
  }
  if (out.totalTokens === undefined && out.inputTokens !== undefined && out.outputTokens !== undefined)
    out.totalTokens = out.inputTokens + out.outputTokens;
  for (const k of Object.keys(out) as (keyof Usage)[]) if (out[k] === undefined) delete out[k];
  return out;
}

function errorBody(acc: Acc, body: Obj): void {
  const err = isObj(body.error) ? body.error : body;
  acc.error = str(err.type) ?? str(err.status) ?? str(err.code) ?? 'error';
  acc.stop ??= 'error';
}

function chatMessage(acc: Acc, body: Obj): void {
  const choice = Array.isArray(body.choices) && isObj(body.choices[0]) ? body.choices[0] : undefined;
  const msg = isObj(choice?.message) ? choice.message : {};
  acc.text += str(msg.content) ?? '';
  acc.thinking += str(msg.reasoning_content) ?? str(msg.reasoning) ?? '';
  if (Array.isArray(msg.tool_calls))
    for (const t of msg.tool_calls)
      if (isObj(t) && isObj(t.function))
        acc.tools.push({ id: str(t.id), name: str(t.function.name) ?? '', args: str(t.function.arguments) ?? '' });
  acc.stop = str(choice?.finish_reason) ?? acc.stop;
  acc.model = str(body.model);
}

function responsesBody(acc: Acc, body: Obj): void {
  if (Array.isArray(body.output)) {
    for (const item of body.output) {
      if (!isObj(item)) continue;
      if (item.type === 'message' && Array.isArray(item.content))
        for (const c of item.content) if (isObj(c) && c.type === 'output_text') acc.text += str(c.text) ?? '';
      if (item.type === 'function_call')
        acc.tools.push({ id: str(item.call_id) ?? str(item.id), name: str(item.name) ?? '', args: str(item.arguments) ?? '' });
      if (item.type === 'reasoning' && Array.isArray(item.summary))
        for (const s of item.summary) if (isObj(s)) acc.thinking += str(s.text) ?? '';
    }
  }
  acc.stop = str(body.status) ?? acc.stop;
  if (isObj(body.incomplete_details)) acc.stop = str(body.incomplete_details.reason) ?? acc.stop;
  if (isObj(body.error)) acc.error = str(body.error.code) ?? 'error';
}

function anthropicMessage(acc: Acc, body: Obj): void {
  if (Array.isArray(body.content)) {
    for (const c of body.content) {
      if (!isObj(c)) continue;
      if (c.type === 'text') acc.text += str(c.text) ?? '';
      if (c.type === 'thinking') acc.thinking += str(c.thinking) ?? '';
      if (c.type === 'tool_use') acc.tools.push({ id: str(c.id), name: str(c.name) ?? '', args: '', parsed: c.input ?? {} });
    }
  }
  acc.stop = str(body.stop_reason) ?? acc.stop;
  acc.model = str(body.model);
}

function geminiChunk(acc: Acc, body: Obj): void {
  const cand = Array.isArray(body.candidates) && isObj(body.candidates[0]) ? body.candidates[0] : undefined;
  const parts = isObj(cand?.content) && Array.isArray(cand.content.parts) ? cand.content.parts : [];
  for (const p of parts) {
    if (!isObj(p)) continue;
    if (typeof p.text === 'string') {
      if (p.thought === true) acc.thinking += p.text;
      else acc.text += p.text;
    }
    if (isObj(p.functionCall))
      acc.tools.push({ id: str(p.functionCall.id), name: str(p.functionCall.name) ?? '', args: '', parsed: p.functionCall.args ?? {} });
  }
  acc.stop = str(cand?.finishReason) ?? acc.stop;
  acc.model = str(body.modelVersion) ?? acc.model;
}

/** One SSE event of any supported API; unknown events are ignored. */
function streamEvent(meaning: LlmMeaning, ev: SseEvent, data: Obj, acc: Acc): void {
  const type = str(data.type) ?? ev.event;
  if (type === 'error' || (isObj(data.error) && meaning.api !== 'responses')) {
    errorBody(acc, data);
    return;
  }
  switch (meaning.api) {
    case 'chat.completions':
    case 'completions': {
      acc.model ??= str(data.model);
      if (isObj(data.usage)) acc.usage = usage(meaning.provider, data.usage);
      const choice = Array.isArray(data.choices) && isObj(data.choices[0]) ? data.choices[0] : undefined;
      if (!choice) return;
      const delta = isObj(choice.delta) ? choice.delta : {};
      acc.text += str(delta.content) ?? str(choice.text) ?? '';
      acc.thinking += str(delta.reasoning_content) ?? str(delta.reasoning) ?? '';
      if (Array.isArray(delta.tool_calls)) {
        for (const t of delta.tool_calls) {
          if (!isObj(t)) continue;
          const i = num(t.index) ?? acc.tools.length;
          const fn = isObj(t.function) ? t.function : {};
          const cur = acc.tools[i] ?? { name: '', args: '' };
          if (str(t.id)) cur.id = t.id as string;
          cur.name += str(fn.name) ?? '';
          cur.args += str(fn.arguments) ?? '';
          acc.tools[i] = cur;
        }
      }
      acc.stop = str(choice.finish_reason) ?? acc.stop;
      return;
    }
    case 'responses': {
      if (type === 'response.output_text.delta') acc.text += str(data.delta) ?? '';
      if (type === 'response.reasoning_summary_text.delta') acc.thinking += str(data.delta) ?? '';
      if ((type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') && isObj(data.response)) {
        const r = data.response;
        acc.text = '';
        acc.thinking = '';
        acc.tools = [];
        responsesBody(acc, r);
        if (isObj(r.usage)) acc.usage = usage(meaning.provider, r.usage);
        if (type === 'response.failed') acc.error = (isObj(r.error) ? str(r.error.code) : undefined) ?? 'response.failed';
      }
      return;
    }
    case 'messages': {
      if (type === 'message_start' && isObj(data.message)) {
        acc.model = str(data.message.model);
        acc.usage = usage('anthropic', data.message.usage);
      } else if (type === 'content_block_start' && isObj(data.content_block)) {
        const b = data.content_block;
        if (b.type === 'tool_use') acc.tools[num(data.index) ?? acc.tools.length] = { id: str(b.id), name: str(b.name) ?? '', args: '' };
        if (b.type === 'text') acc.text += str(b.text) ?? '';
      } else if (type === 'content_block_delta' && isObj(data.delta)) {
        const d = data.delta;
        if (d.type === 'text_delta') acc.text += str(d.text) ?? '';
        if (d.type === 'thinking_delta') acc.thinking += str(d.thinking) ?? '';
        if (d.type === 'input_json_delta') {
          const t = acc.tools[num(data.index) ?? -1];
          if (t) t.args += str(d.partial_json) ?? '';
        }
      } else if (type === 'message_delta') {
        if (isObj(data.delta)) acc.stop = str(data.delta.stop_reason) ?? acc.stop;
        // message_delta usage is cumulative: merge over what message_start said.
        const u = usage('anthropic', data.usage);
        if (u)
          acc.usage = {
            ...acc.usage,
            ...u,
            totalTokens: (u.inputTokens ?? acc.usage?.inputTokens ?? 0) + (u.outputTokens ?? acc.usage?.outputTokens ?? 0),
          };
      }
      return;
    }
    case 'generateContent': {
      geminiChunk(acc, data);
      if (isObj(data.usageMetadata)) acc.usage = usage('gemini', data.usageMetadata);
      return;
    }
    default:
      return;
  }
}
