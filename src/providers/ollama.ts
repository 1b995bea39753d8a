/**
 * Ollama's own API (`POST /api/chat`, `/api/generate`, `/api/embed` and the older `/api/embeddings`): `model`,
 * `messages` (or `prompt` and `system`), `options` and `tools` in. Answers stream by default, as NDJSON
 * (`application/x-ndjson`, one JSON object a line: `tape/framing/ndjson.ts`, each line an event), each line a piece of the answer (`message.content`
 * or `response`), the last one `done: true` with the stop reason and the token counts; `stream: false` gives that
 * last object whole. Errors are `{"error": "..."}`. (Ollama's OpenAI-compatible `/v1` endpoints are read by the OpenAI
 * adapters.)
 */
import { pushMessage } from './answer.js';
import { isObj, num, parseArgs, str } from './json.js';
import { objectAt, setTracked } from './overrides.js';
import { listView, objectView } from './semantic.js';
import type { Answer, ConversationMessage, Json, ProviderAdapter, ProviderInfo, Rewritten } from './types.js';

export const OLLAMA: ProviderInfo = {
  name: 'ollama',
  route: { prefix: '/ollama', upstream: 'http://127.0.0.1:11434' },
  // The `ollama` clients (Python and JavaScript) read OLLAMA_HOST; wrapper mode leaves it alone, as no `/ollama`
  // route is there by default (`--route /ollama=http://127.0.0.1:11434`, then OLLAMA_HOST=http://127.0.0.1:8787/ollama).
  otelName: 'ollama',
};

const OLLAMA_PATH = /^\/api\/(chat|generate|embed|embeddings)$/;

export const ollama: ProviderAdapter = {
  api: 'ollama',
  provider: OLLAMA,
  paramKeys: ['options', 'format', 'tools', 'think', 'keep_alive', 'raw', 'template', 'truncate', 'dimensions'],
  otelParams: {},
  detect: ({ path, method }) => (method === 'POST' && OLLAMA_PATH.test(path) ? 'ollama' : undefined),

  describeRequest(body, path) {
    const params: Json = {};
    if (isObj(body.options)) for (const [k, v] of Object.entries(body.options)) params[k] = v;
    const kind = OLLAMA_PATH.exec(path)?.[1];
    // Chat and generate stream unless told not to; the embedding endpoints never do.
    const streamed = kind === 'chat' || kind === 'generate' ? body.stream !== false : false;
    return { model: str(body.model), streamed, params };
  },

  describeBody: (answer, body) => chunk(answer, body),

  describeEvent: (answer, data) => chunk(answer, data),

  conversation(body) {
    const out: ConversationMessage[] = [];
    if (!isObj(body)) return out;
    if (typeof body.system === 'string') pushMessage(out, { role: 'system', text: body.system });
    if (Array.isArray(body.messages)) for (const m of body.messages) message(m, out);
    if (typeof body.prompt === 'string') pushMessage(out, { role: 'user', text: body.prompt });
    const input = body.input;
    if (typeof input === 'string') pushMessage(out, { role: 'user', text: input });
    else if (Array.isArray(input)) pushMessage(out, { role: 'user', text: input.filter((x) => typeof x === 'string').join('\n') });
    return out;
  },

  errorBody: (_status, _type, message, extra) => ({ error: message, ...extra }),

  applyOverrides(body, path, o) {
    const applied: Rewritten['applied'] = {};
    if (o.model !== undefined) setTracked(applied, body, 'model', 'model', o.model);
    if (o.temperature !== undefined) setTracked(applied, objectAt(body, 'options'), 'temperature', 'temperature', o.temperature);
    if (o.maxTokens !== undefined) setTracked(applied, objectAt(body, 'options'), 'num_predict', 'num_predict', o.maxTokens);
    if (o.systemPrompt !== undefined) {
      if (Array.isArray(body.messages)) {
        const rest = body.messages.filter((m) => !(isObj(m) && m.role === 'system'));
        applied.system = { from: body.messages.find((m) => isObj(m) && m.role === 'system'), to: o.systemPrompt };
        body.messages = [{ role: 'system', content: o.systemPrompt }, ...rest];
      } else setTracked(applied, body, 'system', 'system', o.systemPrompt);
    }
    return { body, path, applied };
  },

  semantic(body, b) {
    const out: Json = {};
    for (const [k, v] of Object.entries(body)) {
      if (k === 'stream') continue;
      if (k === 'messages')
        out[k] = listView(v, k, (m, p) =>
          objectView(m, p, {
            content: (x, xp) => (typeof x !== 'string' ? x : m.role === 'tool' ? b.result(xp, x) : b.prose(xp, x)),
            tool_calls: (x, xp) =>
              listView(x, xp, (c, cp) =>
                objectView(c, cp, { function: (f, fp) => (isObj(f) ? { ...f, arguments: b.args(`${fp}.arguments`, f.arguments) } : f) }),
              ),
          }),
        );
      else if ((k === 'prompt' || k === 'system') && typeof v === 'string') out[k] = b.prose(k, v);
      else out[k] = v;
    }
    return out;
  },
};

/** One line of a stream, or a whole answer (the same shape): a chat message's piece, a generation's, the final counts. */
function chunk(answer: Answer, data: Json): void {
  if (typeof data.error === 'string') {
    answer.error = data.error;
    answer.stop ??= 'error';
    return;
  }
  answer.model = str(data.model) ?? answer.model;
  if (isObj(data.message)) {
    answer.text += str(data.message.content) ?? '';
    answer.thinking += str(data.message.thinking) ?? '';
    if (Array.isArray(data.message.tool_calls))
      for (const c of data.message.tool_calls)
        if (isObj(c) && isObj(c.function))
          answer.tools.push({ id: str(c.id), name: str(c.function.name) ?? '', args: '', parsed: parseArgs(c.function.arguments) ?? {} });
  }
  if (typeof data.response === 'string') answer.text += data.response;
  if (typeof data.thinking === 'string') answer.thinking += data.thinking;
  if (data.done === true) answer.stop = str(data.done_reason) ?? 'stop';
  const input = num(data.prompt_eval_count);
  const output = num(data.eval_count);
  if (input !== undefined || output !== undefined) {
    answer.usage = { inputTokens: input ?? 0, outputTokens: output ?? 0, totalTokens: (input ?? 0) + (output ?? 0) };
  }
}

/** A chat message: its text, thinking and tool calls; a `tool` message is a tool's result. */
function message(m: unknown, out: ConversationMessage[]): void {
  if (!isObj(m)) return;
  const msg: ConversationMessage = { role: str(m.role) ?? 'unknown', text: str(m.content) ?? '' };
  if (typeof m.thinking === 'string' && m.thinking !== '') msg.thinking = m.thinking;
  if (Array.isArray(m.tool_calls)) {
    const calls = m.tool_calls.filter((c): c is Json => isObj(c) && isObj(c.function));
    msg.toolCalls = calls.map((c) => ({
      id: str(c.id),
      name: str((c.function as Json).name) ?? '',
      arguments: (c.function as Json).arguments,
    }));
  }
  if (m.role === 'tool') msg.toolCallId = str(m.tool_call_id) ?? str(m.tool_name);
  pushMessage(out, msg);
}
