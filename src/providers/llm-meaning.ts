/**
 * An LLM call's meaning from a known adapter (no detection, no registry): the request side of a body, an answer folded
 * event by event, and the two made one `LlmMeaning`. `describe.ts` uses these for HTTP exchanges, the session readers
 * (`sessions/`) for the calls a WebSocket session holds, so one adapter reads both.
 */
import type { LlmMeaning, SseEvent } from '../tape/schema.js';
import { finishTool } from './answer.js';
import { isObj, str } from './json.js';
import { parseJson } from '../tape/json-depth.js';
import type { Answer, Json, LlmProvider, PendingTool, ProviderAdapter } from './types.js';

/** The request side (provider, api, model, params, tools offered, streamed) of a body `adapter` reads. */
export function requestSideOf(provider: LlmProvider, adapter: ProviderAdapter, b: Json, path: string): LlmMeaning {
  const side = adapter.describeRequest(b, path);
  const params: Record<string, unknown> = {};
  // The parameters that change the answer, other than the conversation, where this API keeps them at the top.
  for (const k of adapter.paramKeys ?? []) if (b[k] !== undefined) params[k] = b[k];
  Object.assign(params, side.params);
  const tools = toolNames(b.tools);
  if (tools.length > 0) params.tools = tools;
  // Built in the schema's key order, so the tape line needs no reordering copy.
  return {
    provider,
    api: adapter.api,
    ...(side.model !== undefined ? { model: side.model } : {}),
    params,
    streamed: side.streamed,
    toolCalls: [],
  };
}

/** The names of the tools a request offers the model, sorted (OpenAI, Anthropic and Gemini shapes). */
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

/** One streamed event into the answer, read by the adapter (empty data, `[DONE]` and non-JSON are skipped). */
export function foldEvent(adapter: ProviderAdapter, answer: Answer, ev: SseEvent): void {
  if (ev.data === '' || ev.data === '[DONE]') return;
  let data: unknown;
  try {
    data = parseJson(ev.data);
  } catch {
    return;
  }
  if (isObj(data)) adapter.describeEvent(answer, data, ev);
}

/** The request side with what the answer said. */
export function withAnswer(meaning: LlmMeaning, answer: Answer): LlmMeaning {
  // In the schema's key order (see requestSideOf).
  const model = meaning.model ?? (answer.model || undefined);
  return {
    provider: meaning.provider,
    api: meaning.api,
    ...(model !== undefined ? { model } : {}),
    params: meaning.params,
    streamed: meaning.streamed,
    ...(answer.usage ? { usage: answer.usage } : {}),
    toolCalls: answer.tools.filter((t): t is PendingTool => t !== undefined).map(finishTool),
    ...(answer.text !== '' ? { outputText: answer.text } : {}),
    ...(answer.thinking !== '' ? { thinking: answer.thinking } : {}),
    ...(answer.stop ? { stopReason: answer.stop } : {}),
    ...(answer.error ? { errorType: answer.error } : {}),
  };
}
