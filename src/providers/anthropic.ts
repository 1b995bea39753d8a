/**
 * Anthropic messages (`POST .../v1/messages`): `system` and `messages` of content blocks (text, thinking, tool_use,
 * tool_result) in; content blocks out. Streams: `message_start` -> per block `content_block_start` / `_delta` /
 * `_stop` by index -> `message_delta` (stop reason, cumulative usage) -> `message_stop`; `ping` and `error` anywhere.
 */
import type { ResponseRecord, SseEvent, Usage } from '../tape/schema.js';
import { bodyJson } from '../tape/body.js';
import { answerError, isErrorEvent, pushMessage } from './answer.js';
import { contentText, isObj, num, str } from './json.js';
import { topLevelOverrides } from './overrides.js';
import { listView, objectView } from './semantic.js';
import type { ConversationMessage, Json, ProviderAdapter, ProviderInfo, SemanticBuilder } from './types.js';
import { parseJson } from '../tape/json-depth.js';

export const ANTHROPIC: ProviderInfo = {
  name: 'anthropic',
  route: { prefix: '/anthropic', upstream: 'https://api.anthropic.com' },
  // The Anthropic SDKs add `/v1/messages` themselves (the Vercel AI SDK wants `${url}/anthropic/v1`).
  baseUrlEnv: [{ name: 'ANTHROPIC_BASE_URL' }],
  otelName: 'anthropic',
  modelFamilies: ['claude-'],
  secretHeaders: ['anthropic-api-key'],
};

export const anthropic: ProviderAdapter = {
  api: 'messages',
  provider: ANTHROPIC,
  otelOperation: 'chat',
  paramKeys: ['temperature', 'top_p', 'top_k', 'max_tokens', 'stop_sequences', 'tool_choice', 'thinking'],
  otelParams: { temperature: 'temperature', top_p: 'top_p', top_k: 'top_k', max_tokens: 'max_tokens', stop_sequences: 'stop_sequences' },
  // The Anthropic SDKs read ANTHROPIC_API_KEY (then ANTHROPIC_AUTH_TOKEN); newer ones send it as a bearer token,
  // older ones and curl as x-api-key.
  credentials: [
    { env: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'], header: 'authorization', scheme: 'bearer' },
    { env: ['ANTHROPIC_API_KEY'], header: 'x-api-key' },
  ],
  detect({ route, path, method, upstream }) {
    if (method !== 'POST') return undefined;
    return /(^|\/)v1\/messages$/.test(path) || (/\/messages$/.test(path) && /anthropic/i.test(route + (upstream ?? '')))
      ? 'anthropic'
      : undefined;
  },

  describeRequest: (body) => ({ model: str(body.model), streamed: body.stream === true }),

  describeBody(answer, body) {
    if (Array.isArray(body.content)) {
      for (const c of body.content) {
        if (!isObj(c)) continue;
        if (c.type === 'text') answer.text += str(c.text) ?? '';
        if (c.type === 'thinking') answer.thinking += str(c.thinking) ?? '';
        if (c.type === 'tool_use') answer.tools.push({ id: str(c.id), name: str(c.name) ?? '', args: '', parsed: c.input ?? {} });
      }
    }
    answer.stop = str(body.stop_reason) ?? answer.stop;
    answer.model = str(body.model);
    if (isObj(body.usage)) answer.usage = anthropicUsage(body.usage);
  },

  describeEvent(answer, data, ev) {
    const type = str(data.type) ?? ev.event;
    if (isErrorEvent(data, type)) return answerError(answer, data);
    if (type === 'message_start' && isObj(data.message)) {
      answer.model = str(data.message.model);
      answer.usage = anthropicUsage(data.message.usage);
    } else if (type === 'content_block_start' && isObj(data.content_block)) {
      const b = data.content_block;
      if (b.type === 'tool_use')
        answer.tools[num(data.index) ?? answer.tools.length] = { id: str(b.id), name: str(b.name) ?? '', args: '' };
      if (b.type === 'text') answer.text += str(b.text) ?? '';
    } else if (type === 'content_block_delta' && isObj(data.delta)) {
      const d = data.delta;
      if (d.type === 'text_delta') answer.text += str(d.text) ?? '';
      if (d.type === 'thinking_delta') answer.thinking += str(d.thinking) ?? '';
      if (d.type === 'input_json_delta') {
        const t = answer.tools[num(data.index) ?? -1];
        if (t) t.args += str(d.partial_json) ?? '';
      }
    } else if (type === 'message_delta') {
      if (isObj(data.delta)) answer.stop = str(data.delta.stop_reason) ?? answer.stop;
      // message_delta usage is cumulative: merge over what message_start said.
      const u = anthropicUsage(data.usage);
      if (u) {
        const input = u.inputTokens ?? answer.usage?.inputTokens ?? 0;
        answer.usage = { ...answer.usage, ...u, totalTokens: input + (u.outputTokens ?? answer.usage?.outputTokens ?? 0) };
      }
    }
  },

  conversation(body) {
    const out: ConversationMessage[] = [];
    if (!isObj(body)) return out;
    if (body.system !== undefined) pushMessage(out, { role: 'system', text: contentText(body.system) });
    if (Array.isArray(body.messages)) for (const m of body.messages) message(m, out);
    return out;
  },

  textBeforeCalls(response) {
    const blocks = contentBlocks(response);
    if (!blocks) return undefined;
    const out: string[] = [];
    let pending: string[] = [];
    for (const b of blocks) {
      if (b.type === 'text') pending.push(b.text);
      else if (b.type === 'tool_use') {
        out.push(pending.join('\n'));
        pending = [];
      }
    }
    return out;
  },

  errorBody: (_status, type, message, extra) => ({ type: 'error', error: { type, message }, ...extra }),

  applyOverrides: (body, path, o) => topLevelOverrides(body, path, o, { maxTokens: 'max_tokens', system: 'system' }),

  semantic(body, b) {
    const out: Json = {};
    for (const [k, v] of Object.entries(body)) {
      // `stream` changes the answer's shape, not the answer: tapedeck converts between the two.
      if (k === 'stream' || k === 'stream_options') continue;
      if (k === 'system') out[k] = contentView(k, v, b, false);
      else if (k === 'messages')
        out[k] = listView(v, k, (m, path) => objectView(m, path, { content: (x, p) => contentView(p, x, b, false) }));
      else out[k] = v;
    }
    return out;
  },

  // Anthropic streams always carry usage (message_start, message_delta).
  stream: { usageAsked: () => true, toEvents: (json) => anthropicEvents(json), fromEvents: anthropicMessage },
};

/** Anthropic usage: input is uncached + cache reads + cache writes; `cachedInputTokens` is the cache reads. */
function anthropicUsage(u: unknown): Usage | undefined {
  if (!isObj(u)) return undefined;
  const out: Usage = {};
  if (u.input_tokens !== undefined)
    out.inputTokens = (num(u.input_tokens) ?? 0) + (num(u.cache_read_input_tokens) ?? 0) + (num(u.cache_creation_input_tokens) ?? 0);
  const output = num(u.output_tokens);
  if (output !== undefined) out.outputTokens = output;
  if (num(u.cache_read_input_tokens)) out.cachedInputTokens = num(u.cache_read_input_tokens);
  if (out.inputTokens !== undefined && out.outputTokens !== undefined) out.totalTokens = out.inputTokens + out.outputTokens;
  return out;
}

/** A message: its text and thinking blocks, the tools it called, and tool results (each its own `tool` message). */
function message(m: unknown, out: ConversationMessage[]): void {
  if (!isObj(m)) return;
  const msg: ConversationMessage = { role: typeof m.role === 'string' ? m.role : 'unknown', text: '' };
  const texts: string[] = [];
  const thinking: string[] = [];
  const calls: NonNullable<ConversationMessage['toolCalls']> = [];
  if (typeof m.content === 'string') texts.push(m.content);
  else if (Array.isArray(m.content)) {
    for (const c of m.content) {
      if (!isObj(c)) continue;
      if (typeof c.text === 'string' && (c.type === 'text' || c.type === undefined)) texts.push(c.text);
      else if (c.type === 'thinking' && typeof c.thinking === 'string') thinking.push(c.thinking);
      else if (c.type === 'tool_use' && typeof c.name === 'string') calls.push({ id: str(c.id), name: c.name, arguments: c.input });
      else if (c.type === 'tool_result') pushMessage(out, { role: 'tool', text: contentText(c.content), toolCallId: str(c.tool_use_id) });
    }
  }
  msg.text = texts.join('\n');
  if (calls.length > 0) msg.toolCalls = calls;
  if (thinking.length > 0) msg.thinking = thinking.join('\n');
  pushMessage(out, msg);
}

/** The answer's content blocks in order (type and text), from a JSON answer or a stream. */
function contentBlocks(response: ResponseRecord): { type: string; text: string }[] | undefined {
  const body = bodyJson(response.body);
  if (isObj(body) && Array.isArray(body.content)) {
    return body.content.filter(isObj).map((b) => ({ type: String(b.type), text: typeof b.text === 'string' ? b.text : '' }));
  }
  if (!response.events) return undefined;
  const blocks: { type: string; text: string }[] = [];
  for (const e of response.events) {
    let d: unknown;
    try {
      d = parseJson(e.data);
    } catch {
      continue;
    }
    if (!isObj(d) || typeof d.index !== 'number') continue;
    if (d.type === 'content_block_start' && isObj(d.content_block)) {
      blocks[d.index] = { type: String(d.content_block.type), text: typeof d.content_block.text === 'string' ? d.content_block.text : '' };
    } else if (d.type === 'content_block_delta' && isObj(d.delta) && d.delta.type === 'text_delta' && typeof d.delta.text === 'string') {
      const b = blocks[d.index];
      if (b) b.text += d.delta.text;
    }
  }
  return blocks.filter((b) => b !== undefined);
}

/** Content as the semantic view sees it: text by position (prose, or a tool result), tool input by key. */
function contentView(path: string, v: unknown, b: SemanticBuilder, toolResult: boolean): unknown {
  const text = (x: string, p: string): unknown => (toolResult ? b.result(p, x) : b.prose(p, x));
  if (typeof v === 'string') return text(v, path);
  return listView(v, path, (part, p) =>
    objectView(part, p, {
      text: (x) => (typeof x === 'string' ? text(x, p) : x),
      input: part.type === 'tool_use' ? (x, xp) => b.args(xp, x) : undefined,
      content: part.type === 'tool_result' ? (x, xp) => contentView(xp, x, b, true) : undefined,
    }),
  );
}

const event = (data: unknown, name: string): SseEvent => ({ offsetMs: 0, data: JSON.stringify(data), event: name });

/** The events a streamed answer has, from a JSON message. */
function anthropicEvents(m: Json): SseEvent[] | undefined {
  if (m.type !== 'message' || !Array.isArray(m.content)) return undefined;
  const usage = isObj(m.usage) ? m.usage : {};
  const events: SseEvent[] = [
    event(
      {
        type: 'message_start',
        message: { ...m, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
      },
      'message_start',
    ),
  ];
  (m.content as Json[]).forEach((block, index) => {
    const ev = (type: string, data: Json): void => void events.push(event({ type, index, ...data }, type));
    if (block.type === 'text') {
      ev('content_block_start', { content_block: { type: 'text', text: '' } });
      ev('content_block_delta', { delta: { type: 'text_delta', text: block.text } });
    } else if (block.type === 'tool_use' || block.type === 'server_tool_use') {
      ev('content_block_start', { content_block: { ...block, input: {} } });
      ev('content_block_delta', { delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) } });
    } else if (block.type === 'thinking') {
      ev('content_block_start', { content_block: { type: 'thinking', thinking: '', signature: '' } });
      ev('content_block_delta', { delta: { type: 'thinking_delta', thinking: block.thinking } });
      ev('content_block_delta', { delta: { type: 'signature_delta', signature: block.signature } });
    } else {
      ev('content_block_start', { content_block: block });
    }
    ev('content_block_stop', {});
  });
  events.push(
    event(
      {
        type: 'message_delta',
        delta: { stop_reason: m.stop_reason ?? null, stop_sequence: m.stop_sequence ?? null },
        usage: { output_tokens: usage.output_tokens ?? 0 },
      },
      'message_delta',
    ),
  );
  events.push(event({ type: 'message_stop' }, 'message_stop'));
  return events;
}

/** The message a stream of events adds up to. */
function anthropicMessage(data: readonly string[]): Json | undefined {
  let message: Json | undefined;
  const blocks: Json[] = [];
  const json = new Map<number, string>();
  for (const d of data) {
    let ev: unknown;
    try {
      ev = parseJson(d);
    } catch {
      return undefined;
    }
    if (!isObj(ev)) continue;
    const index = typeof ev.index === 'number' ? ev.index : 0;
    if (ev.type === 'message_start' && isObj(ev.message)) message = { ...ev.message, content: blocks };
    else if (ev.type === 'content_block_start' && isObj(ev.content_block)) blocks[index] = { ...ev.content_block };
    else if (ev.type === 'content_block_delta' && isObj(ev.delta)) {
      const b = blocks[index] ?? (blocks[index] = {});
      const d2 = ev.delta;
      if (d2.type === 'text_delta') b.text = `${(b.text as string | undefined) ?? ''}${String(d2.text ?? '')}`;
      else if (d2.type === 'thinking_delta') b.thinking = `${(b.thinking as string | undefined) ?? ''}${String(d2.thinking ?? '')}`;
      else if (d2.type === 'signature_delta') b.signature = d2.signature;
      else if (d2.type === 'input_json_delta') json.set(index, (json.get(index) ?? '') + String(d2.partial_json ?? ''));
    } else if (ev.type === 'message_delta' && message !== undefined) {
      if (isObj(ev.delta)) Object.assign(message, ev.delta);
      if (isObj(ev.usage)) message.usage = { ...(isObj(message.usage) ? message.usage : {}), ...ev.usage };
    }
  }
  if (message === undefined) return undefined;
  for (const [i, text] of json) {
    const b = blocks[i];
    if (b === undefined) continue;
    try {
      b.input = text === '' ? {} : parseJson(text);
    } catch {
      return undefined;
    }
  }
  return message;
}
