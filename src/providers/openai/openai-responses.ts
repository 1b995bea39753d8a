/**
 * OpenAI Responses (`POST .../responses`): `instructions` and `input` items in; `output` items out (messages,
 * function calls, reasoning). Streams are typed events with `sequence_number`, ending with `response.completed`,
 * `response.incomplete` or `response.failed` (which carry the whole response); there is no `[DONE]`.
 */
import { answerError, pushMessage } from '../answer.js';
import { contentText, isObj, parseArgs, str } from '../json.js';
import { openaiDetector, openaiErrorBody, openaiUsage, OPENAI, OPENAI_CREDENTIALS, OPENAI_OTEL_PARAMS } from './openai.js';
import { topLevelOverrides } from '../overrides.js';
import { listView, objectView } from '../semantic.js';
import type { Answer, ConversationMessage, Json, ProviderAdapter, SemanticBuilder } from '../types.js';

export const openaiResponses: ProviderAdapter = {
  api: 'responses',
  provider: OPENAI,
  otelParams: OPENAI_OTEL_PARAMS,
  otelOperation: 'chat',
  paramKeys: ['temperature', 'top_p', 'max_output_tokens', 'tool_choice', 'reasoning', 'parallel_tool_calls'],
  credentials: OPENAI_CREDENTIALS,
  detect: openaiDetector(/\/responses$/),

  describeRequest(body) {
    const params: Json = {};
    if (isObj(body.text) && body.text.format !== undefined) params.text_format = body.text.format;
    return { model: str(body.model), streamed: body.stream === true, params };
  },

  describeBody(answer, body) {
    responseOutput(answer, body);
    if (isObj(body.usage)) answer.usage = openaiUsage(body.usage);
  },

  describeEvent(answer, data, ev) {
    const type = str(data.type) ?? ev.event;
    // Only an `error` event is an error here: `response.failed` carries the response, with its error, as a body.
    if (type === 'error') return answerError(answer, data);
    if (type === 'response.output_text.delta') answer.text += str(data.delta) ?? '';
    if (type === 'response.reasoning_summary_text.delta') answer.thinking += str(data.delta) ?? '';
    if ((type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') && isObj(data.response)) {
      const r = data.response;
      answer.text = '';
      answer.thinking = '';
      answer.tools = [];
      responseOutput(answer, r);
      if (isObj(r.usage)) answer.usage = openaiUsage(r.usage);
      if (type === 'response.failed') answer.error = (isObj(r.error) ? str(r.error.code) : undefined) ?? 'response.failed';
    }
  },

  conversation(body) {
    const out: ConversationMessage[] = [];
    if (!isObj(body)) return out;
    if (typeof body.instructions === 'string') pushMessage(out, { role: 'system', text: body.instructions });
    if (typeof body.input === 'string') pushMessage(out, { role: 'user', text: body.input });
    else if (Array.isArray(body.input)) for (const item of body.input) inputItem(item, out);
    return out;
  },

  errorBody: openaiErrorBody,

  applyOverrides: (body, path, o) => topLevelOverrides(body, path, o, { maxTokens: 'max_output_tokens', system: 'instructions' }),

  semantic(body, b) {
    const out: Json = {};
    for (const [k, v] of Object.entries(body)) {
      if (k === 'instructions') out[k] = textView(k, v, b, false);
      else if (k === 'input') out[k] = typeof v === 'string' ? b.prose(k, v) : listView(v, k, (item, path) => inputItemView(item, path, b));
      else out[k] = v;
    }
    return out;
  },
};

/** The output items of a response: message text, function calls, reasoning summaries; status and stop reason. */
function responseOutput(answer: Answer, body: Json): void {
  if (Array.isArray(body.output)) {
    for (const item of body.output) {
      if (!isObj(item)) continue;
      if (item.type === 'message' && Array.isArray(item.content)) {
        for (const c of item.content) if (isObj(c) && c.type === 'output_text') answer.text += str(c.text) ?? '';
      }
      if (item.type === 'function_call')
        answer.tools.push({ id: str(item.call_id) ?? str(item.id), name: str(item.name) ?? '', args: str(item.arguments) ?? '' });
      if (item.type === 'reasoning' && Array.isArray(item.summary))
        for (const s of item.summary) if (isObj(s)) answer.thinking += str(s.text) ?? '';
    }
  }
  answer.stop = str(body.status) ?? answer.stop;
  if (isObj(body.incomplete_details)) answer.stop = str(body.incomplete_details.reason) ?? answer.stop;
  if (isObj(body.error)) answer.error = str(body.error.code) ?? 'error';
}

function inputItem(item: unknown, out: ConversationMessage[]): void {
  if (!isObj(item)) return;
  if (item.type === 'function_call' && typeof item.name === 'string') {
    pushMessage(out, {
      role: 'assistant',
      text: '',
      toolCalls: [{ id: str(item.call_id), name: item.name, arguments: parseArgs(item.arguments) }],
    });
  } else if (item.type === 'function_call_output') {
    pushMessage(out, {
      role: 'tool',
      text: typeof item.output === 'string' ? item.output : JSON.stringify(item.output ?? null),
      toolCallId: str(item.call_id),
    });
  } else if (item.type === 'reasoning') {
    const summary = Array.isArray(item.summary)
      ? item.summary.map((s) => (isObj(s) && typeof s.text === 'string' ? s.text : '')).join('\n')
      : '';
    pushMessage(out, { role: 'assistant', text: '', thinking: summary });
  } else if (typeof item.role === 'string') {
    pushMessage(out, { role: item.role, text: contentText(item.content) });
  }
}

/** Text that may be a string or a list of text parts (`input_text`, ...): prose, or a tool result. */
function textView(path: string, v: unknown, b: SemanticBuilder, toolResult: boolean): unknown {
  const text = (x: string, p: string): unknown => (toolResult ? b.result(p, x) : b.prose(p, x));
  if (typeof v === 'string') return text(v, path);
  return listView(v, path, (part, pp) => objectView(part, pp, { text: (t) => (typeof t === 'string' ? text(t, pp) : t) }));
}

/** An input item: a message by role and position, a function call's arguments by key, a function output as a result. */
function inputItemView(item: Json, path: string, b: SemanticBuilder): Json {
  const toolResult = item.role === 'tool' || item.role === 'function' || item.type === 'function_call_output';
  return objectView(item, path, {
    content: (x, p) => textView(p, x, b, toolResult),
    output: toolResult ? (x, p) => b.result(p, x) : undefined,
    arguments: (x, p) => b.jsonArgs(p, x),
  });
}
