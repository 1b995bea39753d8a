/**
 * Serve a streamed request from a non-streamed recording and the other way round: `stream` does not change the
 * answer, only its shape. OpenAI chat completions and Anthropic messages are converted (a JSON completion becomes
 * the chunks / events the SDKs expect, a recorded stream is assembled into the JSON body); other APIs are not, and
 * semantic matching keeps `stream` exact for them.
 */
import { bodyJson } from '../tape/body.js';
import type { ResponseRecord, SseEvent } from '../tape/schema.js';
import type { ApiId } from './types.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** APIs whose responses convert between streamed and not. */
export function streamConvertible(api: ApiId | undefined): boolean {
  return api?.api === 'chat.completions' || api?.api === 'messages';
}

/**
 * The recorded response in the shape the request asked for (`stream` true or false), or undefined when it cannot
 * be converted (a body that is not what the API returns). `includeUsage` is OpenAI's
 * `stream_options.include_usage`.
 */
export function convertResponse(
  api: ApiId,
  recorded: ResponseRecord,
  wantStream: boolean,
  includeUsage = false,
): ResponseRecord | undefined {
  if (recorded.status >= 400) return recorded; // an error is JSON whichever shape was asked for
  const streamed = recorded.events !== undefined;
  if (streamed === wantStream) return recorded;
  const headers = Object.fromEntries(
    Object.entries(recorded.headers).filter(
      ([k]) => k !== 'content-type' && k !== 'content-length' && k !== 'transfer-encoding' && k !== 'content-encoding',
    ),
  );
  if (wantStream) {
    const json = bodyJson(recorded.body);
    if (!isObj(json)) return undefined;
    const events = api.api === 'messages' ? anthropicEvents(json) : openaiChunks(json, includeUsage);
    if (events === undefined) return undefined;
    return {
      status: recorded.status,
      headers: { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
      events,
    };
  }
  const data = (recorded.events ?? []).map((e) => e.data);
  const json = api.api === 'messages' ? anthropicMessage(data) : openaiCompletion(data);
  if (json === undefined) return undefined;
  return { status: recorded.status, headers: { ...headers, 'content-type': 'application/json' }, body: { kind: 'json', json } };
}

const event = (data: unknown, name?: string): SseEvent => ({
  offsetMs: 0,
  data: typeof data === 'string' ? data : JSON.stringify(data),
  ...(name ? { event: name } : {}),
});

function openaiChunks(c: Obj, includeUsage: boolean): SseEvent[] | undefined {
  if (!Array.isArray(c.choices)) return undefined;
  const base = {
    id: c.id,
    object: 'chat.completion.chunk',
    created: c.created,
    model: c.model,
    ...(c.system_fingerprint !== undefined ? { system_fingerprint: c.system_fingerprint } : {}),
  };
  const chunk = (choices: unknown[], extra: Obj = {}): SseEvent => event({ ...base, choices, ...extra });
  const events: SseEvent[] = [];
  for (const ch of c.choices as Obj[]) {
    const m = isObj(ch.message) ? ch.message : {};
    const index = ch.index ?? 0;
    events.push(chunk([{ index, delta: { role: m.role ?? 'assistant', content: '' }, logprobs: null, finish_reason: null }]));
    if (typeof m.content === 'string' && m.content !== '')
      events.push(chunk([{ index, delta: { content: m.content }, logprobs: null, finish_reason: null }]));
    if (typeof m.refusal === 'string') events.push(chunk([{ index, delta: { refusal: m.refusal }, logprobs: null, finish_reason: null }]));
    if (Array.isArray(m.tool_calls)) {
      (m.tool_calls as Obj[]).forEach((tc, i) =>
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

function openaiCompletion(data: string[]): Obj | undefined {
  let head: Obj | undefined;
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
      chunk = JSON.parse(d);
    } catch {
      return undefined;
    }
    if (!isObj(chunk)) continue;
    head ??= chunk;
    if (chunk.usage !== undefined && chunk.usage !== null) usage = chunk.usage;
    for (const ch of Array.isArray(chunk.choices) ? (chunk.choices as Obj[]) : []) {
      const i = typeof ch.index === 'number' ? ch.index : 0;
      let acc = choices.get(i);
      if (acc === undefined) choices.set(i, (acc = { role: 'assistant', content: '', finish: null, tools: new Map() }));
      const delta = isObj(ch.delta) ? ch.delta : {};
      if (typeof delta.role === 'string') acc.role = delta.role;
      if (typeof delta.content === 'string') acc.content += delta.content;
      if (typeof delta.refusal === 'string') acc.refusal = (acc.refusal ?? '') + delta.refusal;
      for (const tc of Array.isArray(delta.tool_calls) ? (delta.tool_calls as Obj[]) : []) {
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
      const message: Obj = {
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

function anthropicEvents(m: Obj): SseEvent[] | undefined {
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
  (m.content as Obj[]).forEach((block, index) => {
    const ev = (type: string, data: Obj): void => void events.push(event({ type, index, ...data }, type));
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

function anthropicMessage(data: string[]): Obj | undefined {
  let message: Obj | undefined;
  const blocks: Obj[] = [];
  const json = new Map<number, string>();
  for (const d of data) {
    let ev: unknown;
    try {
      ev = JSON.parse(d);
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
      b.input = text === '' ? {} : JSON.parse(text);
    } catch {
      return undefined;
    }
  }
  return message;
}
