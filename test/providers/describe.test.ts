import { describe, expect, it } from 'vitest';
import { describeLlm, detectLlmApi, providerErrorBody, requestSideLlm } from '../../src/providers/index.js';
import type { Exchange, SseEvent } from '../../src/tape/schema.js';

const ex = (
  route: string,
  path: string,
  body: unknown,
  response: Exchange['response'],
): Pick<Exchange, 'route' | 'request' | 'response'> => ({
  route,
  request: { method: 'POST', path, query: [], headers: {}, body: { kind: 'json', json: body } },
  response,
});
const sse = (events: [string | undefined, unknown][]): SseEvent[] =>
  events.map(([event, data], i) => ({
    offsetMs: i,
    ...(event ? { event } : {}),
    data: typeof data === 'string' ? data : JSON.stringify(data),
  }));

describe('detectLlmApi', () => {
  it('recognises each API by path, and the provider by route or upstream', () => {
    expect(detectLlmApi('/openai', '/v1/chat/completions', 'POST')).toEqual({ provider: 'openai', api: 'chat.completions' });
    expect(detectLlmApi('/local', '/api/v1/chat/completions', 'POST')).toEqual({ provider: 'openai-compatible', api: 'chat.completions' });
    expect(detectLlmApi('/x', '/v1/responses', 'POST', 'https://api.openai.com')).toEqual({ provider: 'openai', api: 'responses' });
    expect(detectLlmApi('/anthropic', '/v1/messages', 'POST')).toEqual({ provider: 'anthropic', api: 'messages' });
    expect(detectLlmApi('/anthropic', '/v1/messages/count_tokens', 'POST')).toBeUndefined();
    expect(detectLlmApi('/gemini', '/v1beta/models/gemini-2.5-flash:streamGenerateContent', 'POST')).toEqual({
      provider: 'gemini',
      api: 'generateContent',
    });
    expect(detectLlmApi('/mcp', '/', 'POST')).toBeUndefined();
    expect(detectLlmApi('/openai', '/v1/responses/resp_1', 'GET')).toBeUndefined();
  });
});

describe('describeLlm', () => {
  it('reads an OpenAI stream: text, tool-call fragments by index, the usage chunk', () => {
    const chunk = (delta: unknown, finish: string | null = null): unknown => ({
      object: 'chat.completion.chunk',
      model: 'gpt-4o-mini',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const m = describeLlm(
      ex(
        '/openai',
        '/v1/chat/completions',
        {
          model: 'gpt-4o-mini',
          stream: true,
          temperature: 0.2,
          tools: [{ type: 'function', function: { name: 'get_weather' } }],
          messages: [],
        },
        {
          status: 200,
          headers: {},
          events: sse([
            [undefined, chunk({ role: 'assistant', content: 'Let me check.' })],
            [
              undefined,
              chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"ci' } }] }),
            ],
            [undefined, chunk({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Paris"}' } }] })],
            [undefined, chunk({}, 'tool_calls')],
            [
              undefined,
              {
                object: 'chat.completion.chunk',
                choices: [],
                usage: { prompt_tokens: 30, completion_tokens: 9, total_tokens: 39, prompt_tokens_details: { cached_tokens: 10 } },
              },
            ],
            [undefined, '[DONE]'],
          ]),
        },
      ),
    );
    expect(m).toEqual({
      provider: 'openai',
      api: 'chat.completions',
      model: 'gpt-4o-mini',
      params: { temperature: 0.2, tools: ['get_weather'] },
      streamed: true,
      toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
      outputText: 'Let me check.',
      usage: { inputTokens: 30, outputTokens: 9, cachedInputTokens: 10, totalTokens: 39 },
      stopReason: 'tool_calls',
    });
  });

  it('reads an Anthropic stream: thinking, text, tool_use input deltas, cumulative usage', () => {
    const m = describeLlm(
      ex(
        '/anthropic',
        '/v1/messages',
        { model: 'claude-sonnet-4-6', stream: true, max_tokens: 100, messages: [] },
        {
          status: 200,
          headers: {},
          events: sse([
            [
              'message_start',
              {
                type: 'message_start',
                message: { model: 'claude-sonnet-4-6', usage: { input_tokens: 20, cache_read_input_tokens: 5, output_tokens: 1 } },
              },
            ],
            ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }],
            [
              'content_block_delta',
              { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'The user wants weather.' } },
            ],
            ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }],
            ['ping', { type: 'ping' }],
            ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Checking.' } }],
            [
              'content_block_start',
              { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} } },
            ],
            [
              'content_block_delta',
              { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"city":' } },
            ],
            [
              'content_block_delta',
              { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } },
            ],
            ['some_future_event', { type: 'some_future_event' }],
            ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 15 } }],
            ['message_stop', { type: 'message_stop' }],
          ]),
        },
      ),
    );
    expect(m).toMatchObject({
      provider: 'anthropic',
      model: 'claude-sonnet-4-6',
      params: { max_tokens: 100 },
      outputText: 'Checking.',
      thinking: 'The user wants weather.',
      stopReason: 'tool_use',
    });
    expect(m?.toolCalls).toEqual([{ id: 'toolu_1', name: 'get_weather', arguments: { city: 'Paris' } }]);
    expect(m?.usage).toEqual({ inputTokens: 25, cachedInputTokens: 5, outputTokens: 15, totalTokens: 40 });
  });

  it('records an error event mid-stream and HTTP error bodies', () => {
    const mid = describeLlm(
      ex(
        '/anthropic',
        '/v1/messages',
        { model: 'claude-sonnet-4-6', stream: true },
        {
          status: 200,
          headers: {},
          events: sse([['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]]),
        },
      ),
    );
    expect(mid).toMatchObject({ errorType: 'overloaded_error', stopReason: 'error' });
    const http = describeLlm(
      ex(
        '/openai',
        '/v1/chat/completions',
        { model: 'gpt-4o' },
        { status: 429, headers: {}, body: { kind: 'json', json: { error: { type: 'rate_limit_exceeded', message: 'slow down' } } } },
      ),
    );
    expect(http).toMatchObject({ errorType: 'rate_limit_exceeded' });
  });

  it('reads Responses API and Gemini answers', () => {
    const responses = describeLlm(
      ex(
        '/openai',
        '/v1/responses',
        { model: 'gpt-5', input: 'hi', stream: true },
        {
          status: 200,
          headers: {},
          events: sse([
            ['response.output_text.delta', { type: 'response.output_text.delta', delta: 'Hel' }],
            [
              'response.completed',
              {
                type: 'response.completed',
                response: {
                  status: 'completed',
                  output: [
                    { type: 'message', content: [{ type: 'output_text', text: 'Hello' }] },
                    { type: 'function_call', call_id: 'c1', name: 'lookup', arguments: '{"q":1}' },
                  ],
                  usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 },
                },
              },
            ],
          ]),
        },
      ),
    );
    expect(responses).toMatchObject({
      api: 'responses',
      outputText: 'Hello',
      stopReason: 'completed',
      usage: { inputTokens: 5, outputTokens: 2, totalTokens: 7 },
      toolCalls: [{ id: 'c1', name: 'lookup', arguments: { q: 1 } }],
    });
    const gemini = describeLlm(
      ex(
        '/gemini',
        '/v1beta/models/gemini-2.5-flash:generateContent',
        { contents: [], generationConfig: { temperature: 0 } },
        {
          status: 200,
          headers: {},
          body: {
            kind: 'json',
            json: {
              candidates: [
                { content: { parts: [{ text: 'Bonjour' }, { functionCall: { name: 'f', args: { a: 1 } } }] }, finishReason: 'STOP' },
              ],
              usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
            },
          },
        },
      ),
    );
    expect(gemini).toMatchObject({
      provider: 'gemini',
      model: 'gemini-2.5-flash',
      params: { temperature: 0 },
      streamed: false,
      outputText: 'Bonjour',
      stopReason: 'STOP',
      toolCalls: [{ name: 'f', arguments: { a: 1 } }],
      usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 },
    });
  });

  it('gives a partial meaning, never an exception, for malformed input', () => {
    const m = describeLlm(
      ex('/openai', '/v1/chat/completions', 'not json at all', {
        status: 200,
        headers: {},
        events: sse([
          [undefined, '{broken'],
          [undefined, '[DONE]'],
        ]),
      }),
    );
    expect(m).toMatchObject({ provider: 'openai', api: 'chat.completions', toolCalls: [] });
    expect(describeLlm(ex('/x', '/unknown', {}, undefined))).toBeUndefined();
    expect(
      requestSideLlm('/openai', { method: 'POST', path: '/v1/chat/completions', query: [], headers: {}, body: { kind: 'empty' } }),
    ).toMatchObject({ streamed: false, params: {} });
  });
});

describe('providerErrorBody', () => {
  it("uses each provider's own shape with extra details at the top level", () => {
    expect(providerErrorBody({ provider: 'openai', api: 'chat.completions' }, 404, 'tapedeck_miss', 'm', { tapedeck: { x: 1 } })).toEqual({
      error: { message: 'm', type: 'tapedeck_miss', param: null, code: 'tapedeck_miss' },
      tapedeck: { x: 1 },
    });
    expect(providerErrorBody({ provider: 'anthropic', api: 'messages' }, 404, 't', 'm')).toEqual({
      type: 'error',
      error: { type: 't', message: 'm' },
    });
    expect(providerErrorBody({ provider: 'gemini', api: 'generateContent' }, 404, 't', 'm')).toEqual({
      error: { code: 404, message: 'm', status: 'NOT_FOUND' },
    });
  });
});

describe('describeLlm with the request side already known', () => {
  const chat = ex(
    '/local',
    '/v1/chat/completions',
    { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
    {
      status: 200,
      headers: {},
      body: { kind: 'json', json: { model: 'm', choices: [{ message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }] } },
    },
  );

  it('reads only the answer: the request side is the one computed for the request', () => {
    const detected = requestSideLlm(chat.route, chat.request);
    expect(detected?.provider).toBe('openai-compatible');
    const known = { ...detected!, provider: 'openai' };
    const meaning = describeLlm(chat, { llm: known });
    expect(meaning).toMatchObject({ provider: 'openai', api: 'chat.completions', model: 'm', outputText: 'hello' });
    expect(describeLlm(chat)?.provider).toBe('openai-compatible');
  });

  it('describes nothing for a request known not to be an LLM call', () => {
    expect(describeLlm(chat, { llm: undefined })).toBeUndefined();
  });
});
