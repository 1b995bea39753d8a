/**
 * OpenAI chat completions (`POST .../chat/completions`), and every OpenAI-compatible server that speaks it.
 * Streams are `data: {chunk}` lines ending with `data: [DONE]`; tool calls stream as argument fragments by index;
 * with `stream_options.include_usage` one last chunk carries usage with `choices: []`.
 */
import type { SseEvent } from '../../tape/schema.js';
import { answerError, isErrorEvent, pushMessage } from '../answer.js';
import { contentText, isObj, num, parseArgs, str } from '../json.js';
import { openaiDetector, openaiErrorBody, openaiUsage, OPENAI, OPENAI_CREDENTIALS, OPENAI_OTEL_PARAMS, azureModel } from './openai.js';
import { setTracked } from '../overrides.js';
import { listView, objectView } from '../semantic.js';
import type {
  Answer,
  ConversationMessage,
  Json,
  LlmOverrides,
  LlmProvider,
  ProviderAdapter,
  Rewritten,
  SemanticBuilder,
} from '../types.js';
import { parseJson } from '../../tape/json-depth.js';

export const openaiChat: ProviderAdapter = {
  api: 'chat.completions',
  provider: OPENAI,
  otelParams: OPENAI_OTEL_PARAMS,
  otelOperation: 'chat',
  paramKeys: [
    'temperature',
    'top_p',
    'top_k',
    'max_tokens',
    'max_completion_tokens',
    'seed',
    'stop',
    'n',
    'presence_penalty',
    'frequency_penalty',
    'tool_choice',
    'response_format',
    'reasoning_effort',
    'parallel_tool_calls',
  ],
  credentials: OPENAI_CREDENTIALS,
  detect: openaiDetector(/\/chat\/completions$/),

  describeRequest: (body, path) => ({ model: azureModel(body, path), streamed: body.stream === true }),

  describeBody(answer, body) {
    const choice = Array.isArray(body.choices) && isObj(body.choices[0]) ? body.choices[0] : undefined;
    const msg = isObj(choice?.message) ? choice.message : {};
    answer.text += str(msg.content) ?? '';
    answer.thinking += str(msg.reasoning_content) ?? str(msg.reasoning) ?? '';
    if (Array.isArray(msg.tool_calls)) {
      for (const t of msg.tool_calls) {
        if (isObj(t) && isObj(t.function))
          answer.tools.push({ id: str(t.id), name: str(t.function.name) ?? '', args: str(t.function.arguments) ?? '' });
      }
    }
    answer.stop = str(choice?.finish_reason) ?? answer.stop;
    answer.model = str(body.model);
    if (isObj(body.usage)) answer.usage = openaiUsage(body.usage);
  },

  describeEvent(answer, data, ev) {
    if (isErrorEvent(data, str(data.type) ?? ev.event)) return answerError(answer, data);
    chatChunk(answer, data);
  },

  conversation(body) {
    const out: ConversationMessage[] = [];
    if (isObj(body) && Array.isArray(body.messages)) for (const m of body.messages) chatMessage(m, out);
    return out;
  },

  errorBody: openaiErrorBody,

  applyOverrides: chatOverrides,

  semantic(body, b) {
    const out: Json = {};
    for (const [k, v] of Object.entries(body)) {
      // `stream` changes the answer's shape, not the answer: tapedeck converts between the two.
      if (k === 'stream' || k === 'stream_options') continue;
      out[k] = k === 'messages' ? listView(v, k, (m, path) => chatMessageView(m, path, b)) : v;
    }
    return out;
  },

  stream: {
    usageAsked: (request) =>
      (request as { stream_options?: { include_usage?: unknown } } | undefined)?.stream_options?.include_usage === true,
    toEvents: (json, opts) => openaiChunks(json, opts.includeUsage),
    fromEvents: openaiCompletion,
  },
};

/** One streamed chunk (chat completions, and the legacy completions API that streams the same way). */
export function chatChunk(answer: Answer, data: Json): void {
  answer.model ??= str(data.model);
  if (isObj(data.usage)) answer.usage = openaiUsage(data.usage);
  const choice = Array.isArray(data.choices) && isObj(data.choices[0]) ? data.choices[0] : undefined;
  if (!choice) return;
  const delta = isObj(choice.delta) ? choice.delta : {};
  answer.text += str(delta.content) ?? str(choice.text) ?? '';
  answer.thinking += str(delta.reasoning_content) ?? str(delta.reasoning) ?? '';
  if (Array.isArray(delta.tool_calls)) {
    for (const t of delta.tool_calls) {
      if (!isObj(t)) continue;
      const i = num(t.index) ?? answer.tools.length;
      const fn = isObj(t.function) ? t.function : {};
      const cur = answer.tools[i] ?? { name: '', args: '' };
      if (str(t.id)) cur.id = t.id as string;
      cur.name += str(fn.name) ?? '';
      cur.args += str(fn.arguments) ?? '';
      answer.tools[i] = cur;
    }
  }
  answer.stop = str(choice.finish_reason) ?? answer.stop;
}

function chatMessage(m: unknown, out: ConversationMessage[]): void {
  if (!isObj(m)) return;
  const role = typeof m.role === 'string' ? m.role : 'unknown';
  if (role === 'tool') {
    pushMessage(out, { role: 'tool', text: contentText(m.content), toolCallId: str(m.tool_call_id) });
    return;
  }
  const msg: ConversationMessage = { role, text: contentText(m.content) };
  const calls: NonNullable<ConversationMessage['toolCalls']> = [];
  if (Array.isArray(m.tool_calls)) {
    for (const c of m.tool_calls) {
      if (isObj(c) && isObj(c.function) && typeof c.function.name === 'string') {
        calls.push({ id: str(c.id), name: c.function.name, arguments: parseArgs(c.function.arguments) });
      }
    }
  }
  if (calls.length > 0) msg.toolCalls = calls;
  pushMessage(out, msg);
}

/** Chat completions keeps the model, temperature and max tokens at the top, and the system prompt as a message. */
export function chatOverrides(body: Json, path: string, o: LlmOverrides, provider: LlmProvider): Rewritten {
  const applied: Rewritten['applied'] = {};
  if (o.model !== undefined) setTracked(applied, body, 'model', 'model', o.model);
  if (o.temperature !== undefined) setTracked(applied, body, 'temperature', 'temperature', o.temperature);
  if (o.maxTokens !== undefined) {
    // Keep the field the agent uses; newer OpenAI models only take max_completion_tokens, compatible servers max_tokens.
    const key =
      body.max_completion_tokens !== undefined
        ? 'max_completion_tokens'
        : body.max_tokens !== undefined || provider === 'openai-compatible'
          ? 'max_tokens'
          : 'max_completion_tokens';
    setTracked(applied, body, key, key, o.maxTokens);
  }
  if (o.systemPrompt !== undefined && Array.isArray(body.messages)) {
    const messages = body.messages as Json[];
    const i = messages.findIndex((m) => isObj(m) && (m.role === 'system' || m.role === 'developer'));
    if (i === -1) {
      applied.system = { from: undefined, to: o.systemPrompt };
      messages.unshift({ role: 'system', content: o.systemPrompt });
    } else {
      applied.system = { from: (messages[i] as Json).content, to: o.systemPrompt };
      messages[i] = { ...(messages[i] as Json), content: o.systemPrompt };
    }
  }
  return { body, path, applied };
}

/** A chat message: prose by position, tool results by key, tool call arguments by key, call ids left out. */
function chatMessageView(m: Json, path: string, b: SemanticBuilder): Json {
  const toolResult = m.role === 'tool' || m.role === 'function';
  const text = (x: unknown, p: string): unknown => (toolResult ? b.result(p, x) : b.prose(p, x as string));
  return objectView(m, path, {
    content: (x, p) =>
      typeof x === 'string'
        ? text(x, p)
        : listView(x, p, (part, pp) => objectView(part, pp, { text: (t) => (typeof t === 'string' ? text(t, pp) : t) })),
    tool_calls: (x, p) =>
      listView(x, p, (tc, pp) => {
        const fn = isObj(tc.function) ? tc.function : {};
        return { type: tc.type, function: { name: fn.name, arguments: b.jsonArgs(`${pp}.arguments`, fn.arguments) } };
      }),
  });
}

const event = (data: unknown): SseEvent => ({ offsetMs: 0, data: typeof data === 'string' ? data : JSON.stringify(data) });

/** The chunks a streamed answer has: role, content, refusal, tool calls, finish reason, usage if asked, `[DONE]`. */
function openaiChunks(c: Json, includeUsage: boolean): SseEvent[] | undefined {
  if (!Array.isArray(c.choices)) return undefined;
  const base = {
    id: c.id,
    object: 'chat.completion.chunk',
    created: c.created,
    model: c.model,
    ...(c.system_fingerprint !== undefined ? { system_fingerprint: c.system_fingerprint } : {}),
  };
  const chunk = (choices: unknown[], extra: Json = {}): SseEvent => event({ ...base, choices, ...extra });
  const events: SseEvent[] = [];
  for (const ch of c.choices as Json[]) {
    const m = isObj(ch.message) ? ch.message : {};
    const index = ch.index ?? 0;
    events.push(chunk([{ index, delta: { role: m.role ?? 'assistant', content: '' }, logprobs: null, finish_reason: null }]));
    if (typeof m.content === 'string' && m.content !== '')
      events.push(chunk([{ index, delta: { content: m.content }, logprobs: null, finish_reason: null }]));
    if (typeof m.refusal === 'string') events.push(chunk([{ index, delta: { refusal: m.refusal }, logprobs: null, finish_reason: null }]));
    if (Array.isArray(m.tool_calls)) {
      (m.tool_calls as Json[]).forEach((tc, i) =>
        events.push(
          chunk([
            {
              index,
              delta: { tool_calls: [{ index: i, id: tc.id, type: tc.type ?? 'function', function: tc.function }] },
              logprobs: null,
              finish_reason: null,
            },
          ]),
        ),
      );
    }
    events.push(chunk([{ index, delta: {}, logprobs: null, finish_reason: ch.finish_reason ?? 'stop' }]));
  }
  if (includeUsage && c.usage !== undefined) events.push(chunk([], { usage: c.usage }));
  events.push(event('[DONE]'));
  return events;
}

/** The chat completion a stream of chunks adds up to. */
function openaiCompletion(data: readonly string[]): Json | undefined {
  let head: Json | undefined;
  let usage: unknown;
  const choices = new Map<
    number,
    {
      role: string;
      content: string;
      refusal?: string;
      finish: unknown;
      tools: Map<number, { id?: unknown; type?: unknown; name: string; args: string }>;
    }
  >();
  for (const d of data) {
    if (d.trim() === '[DONE]') continue;
    let chunk: unknown;
    try {
      chunk = parseJson(d);
    } catch {
      return undefined;
    }
    if (!isObj(chunk)) continue;
    head ??= chunk;
    if (chunk.usage !== undefined && chunk.usage !== null) usage = chunk.usage;
    for (const ch of Array.isArray(chunk.choices) ? (chunk.choices as Json[]) : []) {
      const i = typeof ch.index === 'number' ? ch.index : 0;
      let acc = choices.get(i);
      if (acc === undefined) choices.set(i, (acc = { role: 'assistant', content: '', finish: null, tools: new Map() }));
      const delta = isObj(ch.delta) ? ch.delta : {};
      if (typeof delta.role === 'string') acc.role = delta.role;
      if (typeof delta.content === 'string') acc.content += delta.content;
      if (typeof delta.refusal === 'string') acc.refusal = (acc.refusal ?? '') + delta.refusal;
      for (const tc of Array.isArray(delta.tool_calls) ? (delta.tool_calls as Json[]) : []) {
        const ti = typeof tc.index === 'number' ? tc.index : 0;
        let t = acc.tools.get(ti);
        if (t === undefined) acc.tools.set(ti, (t = { name: '', args: '' }));
        if (tc.id !== undefined) t.id = tc.id;
        if (tc.type !== undefined) t.type = tc.type;
        const fn = isObj(tc.function) ? tc.function : {};
        if (typeof fn.name === 'string') t.name += fn.name;
        if (typeof fn.arguments === 'string') t.args += fn.arguments;
      }
      if (ch.finish_reason !== undefined && ch.finish_reason !== null) acc.finish = ch.finish_reason;
    }
  }
  if (head === undefined) return undefined;
  return {
    id: head.id,
    object: 'chat.completion',
    created: head.created,
    model: head.model,
    choices: [...choices.entries()].map(([index, acc]) => {
      const message: Json = {
        role: acc.role,
        content: acc.content === '' && acc.tools.size > 0 ? null : acc.content,
        refusal: acc.refusal ?? null,
      };
      if (acc.tools.size > 0)
        message.tool_calls = [...acc.tools.values()].map((t) => ({
          id: t.id,
          type: t.type ?? 'function',
          function: { name: t.name, arguments: t.args },
        }));
      return { index, message, logprobs: null, finish_reason: acc.finish };
    }),
    ...(usage !== undefined ? { usage } : {}),
    ...(head.system_fingerprint !== undefined ? { system_fingerprint: head.system_fingerprint } : {}),
  };
}
