/**
 * Google Gemini (`POST .../models/{model}:generateContent`, streamed as `:streamGenerateContent?alt=sse`): the model
 * is in the path; `systemInstruction` and `contents` of parts (text, functionCall, functionResponse) in;
 * `candidates[0].content.parts` out, each stream chunk a partial answer with `usageMetadata`.
 */
import { answerError, isErrorEvent, pushMessage } from './answer.js';
import { isObj, num, str } from './json.js';
import { objectAt, setTracked } from './overrides.js';
import { listView, objectView } from './semantic.js';
import type {
  Answer,
  ConversationMessage,
  Json,
  OtelRequestParam,
  ProviderAdapter,
  ProviderInfo,
  Rewritten,
  SemanticBuilder,
} from './types.js';
import type { Usage } from '../tape/schema.js';

const GEMINI_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

const MODEL_IN_PATH = /\/models\/([^/:]+):/;

export const GEMINI: ProviderInfo = {
  name: 'gemini',
  route: { prefix: '/gemini', upstream: 'https://generativelanguage.googleapis.com' },
  // Google's Gen AI SDKs (Python and JavaScript) and the Gemini CLI.
  baseUrlEnv: [{ name: 'GOOGLE_GEMINI_BASE_URL' }, { name: 'GEMINI_BASE_URL' }],
  otelName: 'gcp.gemini',
  modelFamilies: ['gemini-'],
};

/** `generationConfig` (recorded as `llm.params`) as OpenTelemetry request attributes. */
export const GEMINI_OTEL_PARAMS: Readonly<Record<string, OtelRequestParam>> = {
  temperature: 'temperature',
  topP: 'top_p',
  topK: 'top_k',
  maxOutputTokens: 'max_tokens',
  seed: 'seed',
  frequencyPenalty: 'frequency_penalty',
  presencePenalty: 'presence_penalty',
  stopSequences: 'stop_sequences',
  candidateCount: 'choice.count',
};

export const gemini: ProviderAdapter = {
  api: 'generateContent',
  provider: GEMINI,
  otelOperation: 'generate_content',
  otelParams: GEMINI_OTEL_PARAMS,
  // The Google Gen AI SDKs read GEMINI_API_KEY, then GOOGLE_API_KEY; the key travels as x-goog-api-key or ?key=.
  credentials: [{ env: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'], header: 'x-goog-api-key', query: 'key' }],
  detect: ({ path, method }) => (method === 'POST' && /\/models\/[^/:]+:(stream)?generateContent$/i.test(path) ? 'gemini' : undefined),

  describeRequest(body, path) {
    const params: Json = {};
    if (isObj(body.generationConfig)) for (const [k, v] of Object.entries(body.generationConfig)) params[k] = v;
    return { model: MODEL_IN_PATH.exec(path)?.[1] ?? str(body.model), streamed: /:streamGenerateContent/i.test(path), params };
  },

  describeBody(answer, body) {
    candidate(answer, body);
    if (isObj(body.usageMetadata)) answer.usage = geminiUsage(body.usageMetadata);
  },

  describeEvent(answer, data, ev) {
    if (isErrorEvent(data, str(data.type) ?? ev.event)) return answerError(answer, data);
    candidate(answer, data);
    if (isObj(data.usageMetadata)) answer.usage = geminiUsage(data.usageMetadata);
  },

  conversation(body) {
    const out: ConversationMessage[] = [];
    if (!isObj(body)) return out;
    if (isObj(body.systemInstruction)) pushMessage(out, { role: 'system', text: partsText(body.systemInstruction.parts) });
    if (Array.isArray(body.contents)) for (const c of body.contents) content(c, out);
    return out;
  },

  errorBody: (status, _type, message, extra) => ({
    error: { code: status, message, status: GEMINI_STATUS[status] ?? 'UNKNOWN' },
    ...extra,
  }),

  applyOverrides(body, path, o) {
    const applied: Rewritten['applied'] = {};
    let outPath = path;
    if (o.model !== undefined) {
      const from = MODEL_IN_PATH.exec(path)?.[1];
      outPath = path.replace(/(\/models\/)[^/:]+(:)/, `$1${o.model}$2`);
      if (from !== o.model) applied.model = { from, to: o.model };
    }
    if (o.temperature !== undefined) setTracked(applied, objectAt(body, 'generationConfig'), 'temperature', 'temperature', o.temperature);
    if (o.maxTokens !== undefined)
      setTracked(applied, objectAt(body, 'generationConfig'), 'maxOutputTokens', 'maxOutputTokens', o.maxTokens);
    if (o.systemPrompt !== undefined) {
      applied.systemInstruction = { from: body.systemInstruction, to: o.systemPrompt };
      body.systemInstruction = { parts: [{ text: o.systemPrompt }] };
    }
    return { body, path: outPath, applied };
  },

  semantic(body, b) {
    const out: Json = {};
    for (const [k, v] of Object.entries(body)) {
      if (k === 'systemInstruction' && isObj(v)) out[k] = { ...v, parts: partsView(`${k}.parts`, v.parts, b) };
      else if (k === 'contents') out[k] = listView(v, k, (c, path) => objectView(c, path, { parts: (x, p) => partsView(p, x, b) }));
      else out[k] = v;
    }
    return out;
  },
};

/** Gemini usage: output includes thinking tokens; cached content counts as cached input. */
export function geminiUsage(u: Json): Usage {
  const out: Usage = {};
  const input = num(u.promptTokenCount);
  if (input !== undefined) out.inputTokens = input;
  out.outputTokens = (num(u.candidatesTokenCount) ?? 0) + (num(u.thoughtsTokenCount) ?? 0);
  if (num(u.cachedContentTokenCount)) out.cachedInputTokens = num(u.cachedContentTokenCount);
  const total = num(u.totalTokenCount) ?? (input !== undefined ? input + out.outputTokens : undefined);
  if (total !== undefined) out.totalTokens = total;
  return out;
}

/** The first candidate's parts (text, thoughts, function calls), finish reason and model version. */
function candidate(answer: Answer, body: Json): void {
  const cand = Array.isArray(body.candidates) && isObj(body.candidates[0]) ? body.candidates[0] : undefined;
  const parts = isObj(cand?.content) && Array.isArray(cand.content.parts) ? cand.content.parts : [];
  for (const p of parts) {
    if (!isObj(p)) continue;
    if (typeof p.text === 'string') {
      if (p.thought === true) answer.thinking += p.text;
      else answer.text += p.text;
    }
    if (isObj(p.functionCall))
      answer.tools.push({ id: str(p.functionCall.id), name: str(p.functionCall.name) ?? '', args: '', parsed: p.functionCall.args ?? {} });
  }
  answer.stop = str(cand?.finishReason) ?? answer.stop;
  answer.model = str(body.modelVersion) ?? answer.model;
}

function partsText(parts: unknown): string {
  if (!Array.isArray(parts)) return '';
  return parts
    .filter((p): p is { text: string } => isObj(p) && typeof p.text === 'string' && p.thought !== true)
    .map((p) => p.text)
    .join('\n');
}

/** One `contents` entry: the model's turns as the assistant, function calls, function responses as tool messages. */
function content(c: unknown, out: ConversationMessage[]): void {
  if (!isObj(c)) return;
  const role = c.role === 'model' ? 'assistant' : typeof c.role === 'string' ? c.role : 'user';
  const parts = Array.isArray(c.parts) ? c.parts : [];
  const calls: NonNullable<ConversationMessage['toolCalls']> = [];
  const thinking: string[] = [];
  for (const p of parts) {
    if (!isObj(p)) continue;
    if (isObj(p.functionCall) && typeof p.functionCall.name === 'string')
      calls.push({ id: str(p.functionCall.id), name: p.functionCall.name, arguments: p.functionCall.args });
    if (isObj(p.functionResponse)) {
      pushMessage(out, {
        role: 'tool',
        text: JSON.stringify(p.functionResponse.response ?? null),
        toolCallId: str(p.functionResponse.id) ?? str(p.functionResponse.name),
      });
    }
    if (p.thought === true && typeof p.text === 'string') thinking.push(p.text);
  }
  const msg: ConversationMessage = { role, text: partsText(parts) };
  if (calls.length > 0) msg.toolCalls = calls;
  if (thinking.length > 0) msg.thinking = thinking.join('\n');
  pushMessage(out, msg);
}

/** Parts as the semantic view sees them: text by position, function call arguments and responses by key. */
function partsView(path: string, v: unknown, b: SemanticBuilder): unknown {
  if (typeof v === 'string') return b.prose(path, v);
  return listView(v, path, (part, p) =>
    objectView(part, p, {
      text: (x) => (typeof x === 'string' ? b.prose(p, x) : x),
      functionCall: (x) => (isObj(x) ? { ...x, args: b.args(`${p}.functionCall.args`, x.args) } : x),
      functionResponse: (x) => (isObj(x) ? { ...x, response: b.args(`${p}.functionResponse.response`, x.response) } : x),
    }),
  );
}
