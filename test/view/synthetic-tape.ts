/** Hand-made tapes for the viewer's API tests and the exporters' edge cases, written with the real tape writer. */
import { createTapeWriter, type NewExchange } from '../../src/tape/stores/tape-writer.js';
import type { TapeHeader } from '../../src/tape/schema.js';

export async function writeTape(
  dir: string,
  name: string,
  exchanges: NewExchange[],
  header: Partial<Pick<TapeHeader, 'mode' | 'replayOf'>> = {},
): Promise<void> {
  const writer = await createTapeWriter({
    dir,
    name,
    ifExists: 'overwrite',
    header: {
      mode: header.mode ?? 'record',
      routes: [{ prefix: '/openai', upstream: 'https://api.openai.com' }],
      ...(header.replayOf ? { replayOf: header.replayOf } : {}),
    },
  });
  for (const ex of exchanges) void writer.append(ex);
  await writer.close();
}

const T0 = Date.parse('2026-11-20T10:00:00.000Z');

/** An LLM call (OpenAI chat), streamed when `events` is given. */
export function llmCall(
  offsetMs: number,
  opts: { question?: string; answer?: string; events?: number; status?: number } = {},
): NewExchange {
  const question = opts.question ?? `question ${offsetMs}`;
  const answer = opts.answer ?? `answer ${offsetMs}`;
  const streamed = opts.events !== undefined;
  return {
    startedAt: new Date(T0 + offsetMs).toISOString(),
    offsetMs,
    transport: 'http',
    route: '/openai',
    upstream: 'https://api.openai.com',
    request: {
      method: 'POST',
      path: '/v1/chat/completions',
      query: [],
      headers: { authorization: 'Bearer sk-live-secret', 'content-type': 'application/json' },
      body: {
        kind: 'json',
        json: { model: 'gpt-4o-mini', temperature: 0, stream: streamed, messages: [{ role: 'user', content: question }] },
      },
    },
    response: streamed
      ? {
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          events: [
            ...Array.from({ length: opts.events ?? 0 }, (_, k) => ({
              offsetMs: 5 + k,
              data: JSON.stringify({
                id: 'chatcmpl-1',
                model: 'gpt-4o-mini-2024-07-18',
                choices: [{ index: 0, delta: { content: `${k} ` } }],
              }),
            })),
            { offsetMs: 6 + (opts.events ?? 0), data: '[DONE]' },
          ],
        }
      : {
          status: opts.status ?? 200,
          headers: { 'content-type': 'application/json', 'set-cookie': 'session=abc' },
          body: {
            kind: 'json',
            json:
              (opts.status ?? 200) >= 400
                ? { error: { type: 'invalid_request_error', message: 'bad' } }
                : {
                    id: 'chatcmpl-1',
                    model: 'gpt-4o-mini-2024-07-18',
                    choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
                  },
          },
        },
    timing: { ttfbMs: 4, durationMs: streamed ? 8 + (opts.events ?? 0) : 6 },
    llm: {
      provider: 'openai',
      api: 'chat.completions',
      model: 'gpt-4o-mini',
      params: { temperature: 0 },
      streamed,
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
      toolCalls: [],
      outputText: answer,
      stopReason: 'stop',
      ...((opts.status ?? 200) >= 400 ? { errorType: 'invalid_request_error' } : {}),
    },
  };
}

/** An MCP tools/call over HTTP. */
export function toolCall(
  offsetMs: number,
  opts: { tool?: string; isError?: boolean; rpcError?: boolean; transport?: 'http' | 'stdio' } = {},
): NewExchange {
  const tool = opts.tool ?? 'echo';
  const result = {
    content: [{ type: 'text', text: opts.isError ? 'it failed' : `Echo: ${offsetMs}` }],
    ...(opts.isError ? { isError: true } : {}),
  };
  const error = { code: -32602, message: `Tool ${tool} not found` };
  const stdio = opts.transport === 'stdio';
  return {
    startedAt: new Date(T0 + offsetMs).toISOString(),
    offsetMs,
    transport: stdio ? 'stdio' : 'http',
    route: stdio ? 'stdio:server-everything' : '/mcp',
    upstream: stdio ? 'npx server-everything' : 'http://127.0.0.1:3001/mcp',
    request: {
      method: 'POST',
      path: '/',
      query: [],
      headers: stdio ? {} : { 'content-type': 'application/json', 'mcp-session-id': 'sess-1' },
      body: { kind: 'json', json: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: tool, arguments: { message: 'hi' } } } },
    },
    response: {
      status: 200,
      headers: stdio ? {} : { 'content-type': 'application/json' },
      body: { kind: 'json', json: opts.rpcError ? { jsonrpc: '2.0', id: 7, error } : { jsonrpc: '2.0', id: 7, result } },
    },
    timing: { ttfbMs: 2, durationMs: 3 },
    mcp: {
      direction: 'client-to-server',
      method: 'tools/call',
      jsonrpcId: 7,
      toolName: tool,
      arguments: { message: 'hi' },
      ...(opts.rpcError ? { error } : { result, isError: opts.isError === true }),
      notifications: [{ offsetMs: 1, message: { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } } }],
      ...(stdio ? {} : { sessionId: 'sess-1', protocolVersion: '2025-06-18' }),
      transport: stdio ? 'stdio' : 'streamable-http',
    },
  };
}

/** A plain HTTP exchange with a binary answer. */
export function binaryCall(offsetMs: number): NewExchange {
  return {
    startedAt: new Date(T0 + offsetMs).toISOString(),
    offsetMs,
    transport: 'http',
    route: '/files',
    upstream: 'http://127.0.0.1:9000/base?v=1',
    request: {
      method: 'GET',
      path: '/img.png',
      query: [
        ['size', 'large'],
        ['key', '[REDACTED]'],
      ],
      headers: {},
      body: { kind: 'empty' },
    },
    response: {
      status: 200,
      headers: { 'content-type': 'image/png' },
      body: { kind: 'base64', base64: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]).toString('base64') },
    },
    timing: { ttfbMs: 1, durationMs: 2 },
  };
}
