/**
 * A scripted LLM upstream for tests: a real HTTP server on 127.0.0.1, port 0, that answers like the OpenAI and
 * Anthropic APIs (JSON and SSE) from a script, counts what it receives, and can misbehave on purpose
 * (reset mid-stream, hold a stream open until the test releases it).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, startLocalServer } from './local-server.js';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export type Reply =
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string> }
  /** SSE: each entry is one event block's text (without the blank line). `gate` holds the stream after event `gate.after` (0: after the head, before any event). */
  | { kind: 'sse'; events: string[]; gate?: { after: number; until: Promise<void> }; resetAfter?: number; status?: number }
  | { kind: 'reset' };

export type Script = (req: SeenRequest) => Reply | Promise<Reply>;

export interface ScriptedUpstream {
  url: string;
  port: number;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export async function startScriptedUpstream(script: Script): Promise<ScriptedUpstream> {
  const requests: SeenRequest[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const text = (await readBody(req)).toString('utf8');
    let body: unknown = text;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      // keep text
    }
    const seen: SeenRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body };
    requests.push(seen);
    const reply = await script(seen);
    if (reply.kind === 'reset') {
      req.socket.destroy();
      return;
    }
    if (reply.kind === 'json') {
      const payload = JSON.stringify(reply.body, null, 2);
      res.writeHead(reply.status ?? 200, {
        'content-type': 'application/json',
        'x-request-id': `req_${requests.length}`,
        'set-cookie': 'session=upstream-secret-cookie; HttpOnly',
        ...reply.headers,
      });
      res.end(payload);
      return;
    }
    res.writeHead(reply.status ?? 200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-request-id': `req_${requests.length}`,
    });
    res.flushHeaders();
    if (reply.gate?.after === 0) await reply.gate.until;
    for (let i = 0; i < reply.events.length; i++) {
      if (reply.resetAfter !== undefined && i === reply.resetAfter) {
        res.socket?.destroy();
        return;
      }
      // Wait for each write to be flushed, so a reset after it cannot swallow it.
      await new Promise<void>((resolve) => res.write(`${reply.events[i]}\n\n`, () => resolve()));
      if (reply.gate && i + 1 === reply.gate.after) await reply.gate.until;
    }
    res.end();
  };
  const { url, port, close } = await startLocalServer((req, res) => void handle(req, res));
  return { url, port, requests, close };
}

// ---- reply builders, shaped like the real APIs

export function openaiChat(opts: {
  model?: string;
  content?: string | null;
  toolCalls?: { id: string; name: string; arguments: string }[];
  usage?: [number, number];
}): Reply {
  const [prompt, completion] = opts.usage ?? [12, 7];
  return {
    kind: 'json',
    body: {
      id: 'chatcmpl-test1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: opts.model ?? 'gpt-4o-mini',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: opts.content ?? null,
            refusal: null,
            ...(opts.toolCalls
              ? {
                  tool_calls: opts.toolCalls.map((t) => ({
                    id: t.id,
                    type: 'function',
                    function: { name: t.name, arguments: t.arguments },
                  })),
                }
              : {}),
          },
          logprobs: null,
          finish_reason: opts.toolCalls ? 'tool_calls' : 'stop',
        },
      ],
      usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    },
  };
}

export function openaiChatStream(opts: {
  model?: string;
  parts?: string[];
  toolCall?: { id: string; name: string; argumentParts: string[] };
  usage?: [number, number];
  gate?: { after: number; until: Promise<void> };
  resetAfter?: number;
}): Reply {
  const model = opts.model ?? 'gpt-4o-mini';
  const base = { id: 'chatcmpl-stream1', object: 'chat.completion.chunk', created: 1_700_000_000, model, system_fingerprint: 'fp_test' };
  const chunk = (delta: unknown, finish: string | null = null): string =>
    `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null })}`;
  const events: string[] = [chunk({ role: 'assistant', content: opts.toolCall ? null : '', refusal: null })];
  for (const p of opts.parts ?? []) events.push(chunk({ content: p }));
  if (opts.toolCall) {
    const t = opts.toolCall;
    events.push(chunk({ tool_calls: [{ index: 0, id: t.id, type: 'function', function: { name: t.name, arguments: '' } }] }));
    for (const a of t.argumentParts) events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: a } }] }));
  }
  events.push(chunk({}, opts.toolCall ? 'tool_calls' : 'stop'));
  if (opts.usage) {
    const [p, c] = opts.usage;
    events.push(
      `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: p, completion_tokens: c, total_tokens: p + c } })}`,
    );
  }
  events.push('data: [DONE]');
  return {
    kind: 'sse',
    events,
    ...(opts.gate ? { gate: opts.gate } : {}),
    ...(opts.resetAfter !== undefined ? { resetAfter: opts.resetAfter } : {}),
  };
}

export function anthropicMessage(opts: { model?: string; text: string; usage?: [number, number] }): Reply {
  const [input, output] = opts.usage ?? [20, 9];
  return {
    kind: 'json',
    body: {
      id: 'msg_test1',
      type: 'message',
      role: 'assistant',
      model: opts.model ?? 'claude-sonnet-4-6',
      content: [{ type: 'text', text: opts.text }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: input, output_tokens: output },
    },
  };
}

export function anthropicStream(opts: {
  model?: string;
  thinking?: string;
  parts: string[];
  toolUse?: { id: string; name: string; jsonParts: string[] };
  usage?: [number, number];
}): Reply {
  const [input, output] = opts.usage ?? [25, 11];
  const ev = (name: string, data: unknown): string => `event: ${name}\ndata: ${JSON.stringify(data)}`;
  const events = [
    ev('message_start', {
      type: 'message_start',
      message: {
        id: 'msg_stream1',
        type: 'message',
        role: 'assistant',
        model: opts.model ?? 'claude-sonnet-4-6',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: input, output_tokens: 1 },
      },
    }),
  ];
  let index = 0;
  if (opts.thinking !== undefined) {
    events.push(
      ev('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }),
    );
    events.push(
      ev('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: opts.thinking } }),
    );
    events.push(ev('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: 'sig' } }));
    events.push(ev('content_block_stop', { type: 'content_block_stop', index }));
    index++;
  }
  events.push(ev('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
  events.push(ev('ping', { type: 'ping' }));
  for (const p of opts.parts)
    events.push(ev('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: p } }));
  events.push(ev('content_block_stop', { type: 'content_block_stop', index }));
  if (opts.toolUse) {
    index++;
    const t = opts.toolUse;
    events.push(
      ev('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: t.id, name: t.name, input: {} },
      }),
    );
    for (const j of t.jsonParts)
      events.push(ev('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: j } }));
    events.push(ev('content_block_stop', { type: 'content_block_stop', index }));
  }
  events.push(
    ev('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: opts.toolUse ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: output },
    }),
  );
  events.push(ev('message_stop', { type: 'message_stop' }));
  return { kind: 'sse', events };
}

/** The text of the last user message of an OpenAI or Anthropic request body. */
export function lastUserText(body: unknown): string {
  const messages = (body as { messages?: { role: string; content: unknown }[] } | undefined)?.messages ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content))
      return m.content
        .map((p: { text?: string; content?: unknown }) => p.text ?? (typeof p.content === 'string' ? p.content : ''))
        .join(' ');
  }
  return '';
}
