/**
 * Modified replay: rewrite an LLM request on the wire (model, system prompt, temperature, max tokens) so that an
 * unchanged agent runs against a different configuration. Each API keeps these in its own place; this module is
 * the one that knows where.
 */
import type { ApiId } from '../providers/index.js';

export interface LlmOverrides {
  model?: string;
  systemPrompt?: string;
  temperature?: number;
  maxTokens?: number;
}

export interface Rewritten {
  body: Record<string, unknown>;
  /** The path, changed only for Gemini (the model is in it). */
  path: string;
  /** What was changed, as `{field: {from, to}}`, for the replay tape. */
  applied: Record<string, { from: unknown; to: unknown }>;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Apply the overrides to a parsed request body of the given API. Returns a new body; the input is untouched. */
export function applyOverrides(api: ApiId, path: string, input: Obj, o: LlmOverrides): Rewritten {
  const body: Obj = structuredClone(input);
  const applied: Rewritten['applied'] = {};
  let outPath = path;
  const set = (target: Obj, key: string, label: string, to: unknown): void => {
    if (target[key] !== to) applied[label] = { from: target[key], to };
    target[key] = to;
  };
  const gemini = api.provider === 'gemini';
  const generationConfig = (): Obj => (isObj(body.generationConfig) ? body.generationConfig : (body.generationConfig = {}));

  if (o.model !== undefined) {
    if (gemini) {
      const from = /\/models\/([^/:]+):/.exec(path)?.[1];
      outPath = path.replace(/(\/models\/)[^/:]+(:)/, `$1${o.model}$2`);
      if (from !== o.model) applied.model = { from, to: o.model };
    } else set(body, 'model', 'model', o.model);
  }
  if (o.temperature !== undefined) set(gemini ? generationConfig() : body, 'temperature', 'temperature', o.temperature);
  if (o.maxTokens !== undefined) {
    const key = maxTokensKey(api, body);
    set(gemini ? generationConfig() : body, key, key, o.maxTokens);
  }
  if (o.systemPrompt !== undefined) setSystemPrompt(api, body, o.systemPrompt, applied);
  return { body, path: outPath, applied };
}

function maxTokensKey(api: ApiId, body: Obj): string {
  if (api.provider === 'gemini') return 'maxOutputTokens';
  if (api.api === 'responses') return 'max_output_tokens';
  if (api.api === 'messages') return 'max_tokens';
  // Chat completions: keep the field the agent uses; newer OpenAI models only take max_completion_tokens.
  if (body.max_completion_tokens !== undefined) return 'max_completion_tokens';
  if (body.max_tokens !== undefined || api.provider === 'openai-compatible') return 'max_tokens';
  return 'max_completion_tokens';
}

function setSystemPrompt(api: ApiId, body: Obj, text: string, applied: Rewritten['applied']): void {
  if (api.api === 'messages') {
    applied.system = { from: body.system, to: text };
    body.system = text;
  } else if (api.api === 'responses') {
    applied.instructions = { from: body.instructions, to: text };
    body.instructions = text;
  } else if (api.provider === 'gemini') {
    applied.systemInstruction = { from: body.systemInstruction, to: text };
    body.systemInstruction = { parts: [{ text }] };
  } else if (Array.isArray(body.messages)) {
    const messages = body.messages as Obj[];
    const i = messages.findIndex((m) => isObj(m) && (m.role === 'system' || m.role === 'developer'));
    if (i === -1) {
      applied.system = { from: undefined, to: text };
      messages.unshift({ role: 'system', content: text });
    } else {
      applied.system = { from: (messages[i] as Obj).content, to: text };
      messages[i] = { ...(messages[i] as Obj), content: text };
    }
  }
}
