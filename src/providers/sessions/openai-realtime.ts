/**
 * OpenAI Realtime (`wss://api.openai.com/v1/realtime?model=...`, the SDKs' `OpenAIRealtimeWS` /
 * `client.realtime.connect()`): JSON events both ways. The client configures the session (`session.update`: model,
 * instructions, tools), adds items (`conversation.item.create`: messages, function call outputs) and asks for
 * responses (`response.create`); each response streams deltas and ends with `response.done`, which carries its
 * output items and usage. Both the GA event names (`response.output_text.delta`) and the beta ones
 * (`response.text.delta`) are read.
 */
import { frameJson } from '../../tape/frame.js';
import type { LlmMeaning, RequestRecord, WsFrame } from '../../tape/schema.js';
import { finishTool, newAnswer, pushMessage } from '../answer.js';
import { isObj, num, parseArgs, str } from '../json.js';
import { OPENAI, OPENAI_OTEL_PARAMS, openaiErrorBody, openaiProvider, openaiUsage } from '../openai/openai.js';
import type {
  Answer,
  ConversationMessage,
  Json,
  PendingTool,
  ProviderAdapter,
  Rewritten,
  SessionReader,
  SessionResponse,
} from '../types.js';

const TEXT_DELTAS = new Set([
  'response.output_text.delta',
  'response.text.delta',
  'response.output_audio_transcript.delta',
  'response.audio_transcript.delta',
]);

const session: SessionReader = {
  detect: (target) => (target.method === 'GET' && /\/realtime$/.test(target.path) ? openaiProvider(target) : undefined),
  idKeys: ['event_id', 'id', 'item_id', 'previous_item_id', 'call_id', 'response_id'],

  missEvent: (message, client) => ({
    type: 'error',
    event_id: 'event_tapedeck_miss',
    error: {
      type: 'invalid_request_error',
      code: 'tapedeck_miss',
      message,
      param: null,
      event_id: isObj(client) ? (str(client.event_id) ?? null) : null,
    },
  }),

  overrideQuery(query, o) {
    const applied: Rewritten['applied'] = {};
    if (o.model === undefined) return { query, applied };
    const at = query.findIndex(([k]) => k === 'model' || k === 'deployment');
    if (at === -1) return { query: [...query, ['model', o.model]], applied: { model: { from: undefined, to: o.model } } };
    const [key, from] = query[at] as [string, string];
    if (from !== o.model) applied.model = { from, to: o.model };
    return { query: query.map((p, i) => (i === at ? [key, o.model as string] : p)), applied };
  },

  overrideMessage(json, o) {
    const applied: Rewritten['applied'] = {};
    if (json.type !== 'session.update' || !isObj(json.session)) return { json, applied };
    const s: Json = { ...json.session };
    const set = (key: string, to: unknown): void => {
      if (s[key] !== to) applied[key] = { from: s[key], to };
      s[key] = to;
    };
    if (o.model !== undefined && s.model !== undefined) set('model', o.model);
    if (o.systemPrompt !== undefined) set('instructions', o.systemPrompt);
    // `temperature` is a beta session field (GA has none): changed where the agent sets it.
    if (o.temperature !== undefined && s.temperature !== undefined) set('temperature', o.temperature);
    if (o.maxTokens !== undefined)
      set(s.max_response_output_tokens !== undefined ? 'max_response_output_tokens' : 'max_output_tokens', o.maxTokens);
    return { json: { ...json, session: s }, applied };
  },

  modelOf: (request) => request.query.find(([k]) => k === 'model' || k === 'deployment')?.[1],

  responses(provider, request, frames) {
    return readSession(provider, request, frames);
  },
};

interface Open {
  startMs: number;
  body: Json;
  answer: Answer;
  lastMs: number;
}

function readSession(provider: string, request: RequestRecord, frames: readonly WsFrame[]): SessionResponse[] {
  const out: SessionResponse[] = [];
  const config: Json = {};
  let model = session.modelOf?.(request);
  const items: Json[] = [];
  let asked: number | undefined;
  let open: Open | undefined;

  const finish = (complete: boolean): void => {
    if (open === undefined) return;
    const a = open.answer;
    const llm: LlmMeaning = {
      provider,
      api: 'realtime',
      ...(model !== undefined ? { model } : {}),
      params: paramsOf(config),
      streamed: true,
      ...(a.usage ? { usage: a.usage } : {}),
      toolCalls: a.tools.filter((t): t is PendingTool => t !== undefined).map(finishTool),
      ...(a.text !== '' ? { outputText: a.text } : {}),
      ...(a.stop ? { stopReason: a.stop } : {}),
      ...(a.error ? { errorType: a.error } : {}),
    };
    out.push({ startMs: open.startMs, endMs: open.lastMs, body: open.body, llm, complete });
    open = undefined;
  };

  for (const f of frames) {
    const ev = frameJson(f);
    if (!isObj(ev)) continue;
    const type = str(ev.type) ?? '';
    if (f.from === 'client') {
      if (type === 'session.update' && isObj(ev.session)) Object.assign(config, ev.session);
      else if (type === 'conversation.item.create' && isObj(ev.item)) items.push(ev.item);
      else if (type === 'response.create') asked ??= f.offsetMs;
      continue;
    }
    if ((type === 'session.created' || type === 'session.updated') && isObj(ev.session)) {
      model = str(ev.session.model) ?? model;
      // The server's view fills in what the client did not set (the tools and instructions are the client's when it did).
      for (const [k, v] of Object.entries(ev.session)) if (config[k] === undefined) config[k] = v;
    } else if (type === 'conversation.item.input_audio_transcription.completed' && typeof ev.transcript === 'string') {
      items.push({ type: 'message', role: 'user', content: [{ type: 'input_audio', transcript: ev.transcript }] });
    } else if (type === 'response.created') {
      finish(false);
      open = {
        startMs: asked ?? f.offsetMs,
        lastMs: f.offsetMs,
        answer: newAnswer(),
        body: {
          ...(model !== undefined ? { model } : {}),
          ...(typeof config.instructions === 'string' ? { instructions: config.instructions } : {}),
          ...(Array.isArray(config.tools) ? { tools: config.tools } : {}),
          input: [...items],
        },
      };
      asked = undefined;
    } else if (open !== undefined) {
      open.lastMs = f.offsetMs;
      if (TEXT_DELTAS.has(type)) open.answer.text += str(ev.delta) ?? '';
      else if (type === 'response.function_call_arguments.done')
        open.answer.tools.push({ id: str(ev.call_id), name: str(ev.name) ?? '', args: str(ev.arguments) ?? '' });
      else if (type === 'error') open.answer.error = (isObj(ev.error) ? str(ev.error.type) : undefined) ?? 'error';
      else if (type === 'response.done' && isObj(ev.response)) {
        responseDone(open.answer, ev.response);
        for (const item of Array.isArray(ev.response.output) ? ev.response.output : []) if (isObj(item)) items.push(item);
        finish(true);
      }
    }
  }
  finish(false);
  return out;
}

/** `response.done`: the output items (text, transcripts, function calls) replace what the deltas said; usage, status. */
function responseDone(answer: Answer, r: Json): void {
  if (Array.isArray(r.output)) {
    let text = '';
    const tools: PendingTool[] = [];
    for (const item of r.output) {
      if (!isObj(item)) continue;
      if (item.type === 'message') text += partsText(item.content);
      if (item.type === 'function_call') tools.push({ id: str(item.call_id), name: str(item.name) ?? '', args: str(item.arguments) ?? '' });
    }
    answer.text = text;
    answer.tools = tools;
  }
  const u = isObj(r.usage) ? r.usage : undefined;
  if (u !== undefined) {
    answer.usage = openaiUsage(u);
    const cached = isObj(u.input_token_details) ? num(u.input_token_details.cached_tokens) : undefined;
    if (answer.usage && cached) answer.usage.cachedInputTokens = cached;
  }
  answer.stop = str(r.status) ?? answer.stop;
  const details = isObj(r.status_details) ? r.status_details : undefined;
  if (details !== undefined && str(details.reason) !== undefined) answer.stop = str(details.reason);
  if (r.status === 'failed') answer.error = (isObj(details?.error) ? str(details.error.type) : undefined) ?? 'response.failed';
}

/** Text of a Realtime message's content parts: text, and the transcript of audio. */
function partsText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((p) => (isObj(p) ? (str(p.text) ?? str(p.transcript) ?? '') : ''))
    .filter((t) => t !== '')
    .join('\n');
}

/** Session settings that change answers, and the names of the tools offered. */
function paramsOf(config: Json): Json {
  const params: Json = {};
  for (const k of [
    'temperature',
    'max_output_tokens',
    'max_response_output_tokens',
    'tool_choice',
    'output_modalities',
    'modalities',
    'voice',
  ])
    if (config[k] !== undefined) params[k] = config[k];
  if (Array.isArray(config.tools)) {
    const names = config.tools.map((t) => (isObj(t) ? str(t.name) : undefined)).filter((n): n is string => n !== undefined);
    if (names.length > 0) params.tools = names.sort();
  }
  return params;
}

function conversation(body: unknown): ConversationMessage[] {
  const out: ConversationMessage[] = [];
  if (!isObj(body)) return out;
  if (typeof body.instructions === 'string') pushMessage(out, { role: 'system', text: body.instructions });
  for (const item of Array.isArray(body.input) ? body.input : []) {
    if (!isObj(item)) continue;
    if (item.type === 'function_call' && typeof item.name === 'string')
      pushMessage(out, {
        role: 'assistant',
        text: '',
        toolCalls: [{ id: str(item.call_id), name: item.name, arguments: parseArgs(item.arguments) }],
      });
    else if (item.type === 'function_call_output')
      pushMessage(out, {
        role: 'tool',
        text: typeof item.output === 'string' ? item.output : JSON.stringify(item.output ?? null),
        toolCallId: str(item.call_id),
      });
    else if (typeof item.role === 'string') pushMessage(out, { role: item.role, text: partsText(item.content) });
  }
  return out;
}

/** The Realtime API in the provider registry: it claims no HTTP request; its sessions are read by `session`. */
export const openaiRealtime: ProviderAdapter = {
  api: 'realtime',
  provider: OPENAI,
  otelParams: OPENAI_OTEL_PARAMS,
  detect: () => undefined,
  describeRequest: (body) => ({ model: str(body.model), streamed: true }),
  describeBody: () => undefined,
  describeEvent: () => undefined,
  conversation,
  errorBody: openaiErrorBody,
  applyOverrides: (body, path) => ({ body, path, applied: {} }),
  session,
};
