/**
 * What the cloud and local providers' calls mean, read by their adapters: Bedrock Converse and InvokeModel (JSON and
 * event-stream frames), Anthropic on Vertex, Azure OpenAI deployments, Ollama (JSON and NDJSON lines). `show` names
 * each call's model from these.
 */
import { describe, expect, it } from 'vitest';
import { describeLlm, conversationOf } from '../../src/providers/index.js';
import type { ResponseRecord, SseEvent } from '../../src/tape/schema.js';

const ex = (route: string, path: string, body: unknown, response: ResponseRecord) => ({
  route,
  request: { method: 'POST', path, query: [], headers: {}, body: { kind: 'json' as const, json: body } },
  response,
});
const events = (list: [string | undefined, unknown][]): SseEvent[] =>
  list.map(([event, d]) => ({ offsetMs: 0, ...(event ? { event } : {}), data: JSON.stringify(d) }));
const json = (body: unknown): ResponseRecord => ({ status: 200, headers: {}, body: { kind: 'json', json: body } });
const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';

describe('Bedrock', () => {
  const req = {
    system: [{ text: 'Be brief.' }],
    messages: [{ role: 'user', content: [{ text: 'weather?' }] }],
    inferenceConfig: { maxTokens: 100, temperature: 0.1 },
  };

  it('Converse: model from the path, parameters, text, tool use, usage, stop reason', () => {
    const m = describeLlm(
      ex(
        '/bedrock',
        `/model/${encodeURIComponent(MODEL)}/converse`,
        req,
        json({
          output: {
            message: {
              role: 'assistant',
              content: [{ text: 'Checking.' }, { toolUse: { toolUseId: 't1', name: 'get_weather', input: { city: 'Paris' } } }],
            },
          },
          stopReason: 'tool_use',
          usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
        }),
      ),
    );
    expect(m).toMatchObject({
      provider: 'bedrock',
      api: 'converse',
      model: MODEL,
      streamed: false,
      params: { maxTokens: 100, temperature: 0.1 },
      outputText: 'Checking.',
      stopReason: 'tool_use',
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
    });
    expect(m?.toolCalls).toEqual([{ id: 't1', name: 'get_weather', arguments: { city: 'Paris' } }]);
    expect(
      conversationOf({ llm: m, request: { method: 'POST', path: '/', query: [], headers: {}, body: { kind: 'json', json: req } } }).map(
        (c) => [c.role, c.text],
      ),
    ).toEqual([
      ['system', 'Be brief.'],
      ['user', 'weather?'],
    ]);
  });

  it('ConverseStream: frames by event type, tool input in pieces, an exception frame', () => {
    const m = describeLlm(
      ex('/bedrock', `/model/${MODEL}/converse-stream`, req, {
        status: 200,
        headers: {},
        events: events([
          ['messageStart', { role: 'assistant' }],
          ['contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi ' } }],
          ['contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 't2', name: 'get_weather' } } }],
          ['contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"city":' } } }],
          ['contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '"Oslo"}' } } }],
          ['messageStop', { stopReason: 'tool_use' }],
          ['metadata', { usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 } }],
        ]),
      }),
    );
    expect(m).toMatchObject({ model: MODEL, streamed: true, outputText: 'Hi ', stopReason: 'tool_use', usage: { totalTokens: 7 } });
    expect(m?.toolCalls).toEqual([{ id: 't2', name: 'get_weather', arguments: { city: 'Oslo' } }]);
    const failed = describeLlm(
      ex('/bedrock', `/model/${MODEL}/converse-stream`, req, {
        status: 200,
        headers: {},
        events: events([['modelStreamErrorException', { message: 'boom' }]]),
      }),
    );
    expect(failed).toMatchObject({ errorType: 'modelStreamErrorException', stopReason: 'error' });
  });

  it('InvokeModel with an Anthropic body, JSON and streamed as base64 chunks', () => {
    const body = { anthropic_version: 'bedrock-2023-05-31', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] };
    const whole = describeLlm(
      ex(
        '/bedrock',
        `/model/${MODEL}/invoke`,
        body,
        json({
          type: 'message',
          model: MODEL,
          content: [{ type: 'text', text: 'Hello' }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 2, output_tokens: 1 },
        }),
      ),
    );
    expect(whole).toMatchObject({
      provider: 'bedrock',
      api: 'invoke',
      model: MODEL,
      outputText: 'Hello',
      stopReason: 'end_turn',
      params: { max_tokens: 50 },
    });
    const chunk = (d: unknown): [string, unknown] => ['chunk', { bytes: Buffer.from(JSON.stringify(d)).toString('base64') }];
    const streamed = describeLlm(
      ex('/bedrock', `/model/${MODEL}/invoke-with-response-stream`, body, {
        status: 200,
        headers: {},
        events: events([
          chunk({ type: 'message_start', message: { model: MODEL, usage: { input_tokens: 2, output_tokens: 1 } } }),
          chunk({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } }),
          chunk({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'lo' } }),
          chunk({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }),
        ]),
      }),
    );
    expect(streamed).toMatchObject({
      streamed: true,
      outputText: 'Hello',
      stopReason: 'end_turn',
      usage: { inputTokens: 2, outputTokens: 2 },
    });
  });
});

describe('Anthropic on Vertex, Azure OpenAI, Ollama', () => {
  it('Vertex rawPredict: the model from the path, the answer read as Anthropic', () => {
    const m = describeLlm(
      ex(
        '/vertex',
        '/v1/projects/p1/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict',
        { anthropic_version: 'vertex-2023-10-16', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
        json({
          type: 'message',
          content: [{ type: 'text', text: 'Hey' }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 1, output_tokens: 1 },
        }),
      ),
    );
    expect(m).toMatchObject({
      provider: 'vertex',
      api: 'vertex-messages',
      model: 'claude-sonnet-4@20250514',
      streamed: false,
      outputText: 'Hey',
    });
  });

  it('Gemini on Vertex: the model from the publisher path', () => {
    const m = describeLlm(
      ex(
        '/vertex',
        '/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent',
        { contents: [] },
        json({ candidates: [{ content: { parts: [{ text: 'ok' }] } }] }),
      ),
    );
    expect(m).toMatchObject({ api: 'generateContent', model: 'gemini-2.5-flash', outputText: 'ok' });
  });

  it('Azure OpenAI: the deployment is the model where the body names none', () => {
    const m = describeLlm(
      ex(
        '/azure',
        '/openai/deployments/gpt4o-prod/chat/completions',
        { messages: [{ role: 'user', content: 'hi' }] },
        json({ model: 'gpt-4o-2024-08-06', choices: [{ message: { content: 'Hello' }, finish_reason: 'stop' }] }),
      ),
    );
    expect(m).toMatchObject({ provider: 'azure-openai', api: 'chat.completions', model: 'gpt4o-prod', outputText: 'Hello' });
  });

  it('Ollama chat streamed as NDJSON lines, generate as JSON, embed', () => {
    const chat = describeLlm(
      ex(
        '/ollama',
        '/api/chat',
        { model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }], options: { temperature: 0 } },
        {
          status: 200,
          headers: {},
          events: events([
            [undefined, { model: 'llama3.2', message: { role: 'assistant', content: 'Hel' }, done: false }],
            [
              undefined,
              {
                model: 'llama3.2',
                message: {
                  role: 'assistant',
                  content: 'lo',
                  tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Rome' } } }],
                },
                done: false,
              },
            ],
            [
              undefined,
              {
                model: 'llama3.2',
                message: { role: 'assistant', content: '' },
                done: true,
                done_reason: 'stop',
                prompt_eval_count: 5,
                eval_count: 2,
              },
            ],
          ]),
        },
      ),
    );
    expect(chat).toMatchObject({
      provider: 'ollama',
      api: 'ollama',
      model: 'llama3.2',
      streamed: true,
      params: { temperature: 0 },
      outputText: 'Hello',
      stopReason: 'stop',
      usage: { inputTokens: 5, outputTokens: 2 },
    });
    expect(chat?.toolCalls).toEqual([{ name: 'get_weather', arguments: { city: 'Rome' } }]);
    const gen = describeLlm(
      ex(
        '/ollama',
        '/api/generate',
        { model: 'llama3.2', prompt: 'hi', stream: false },
        json({ model: 'llama3.2', response: 'Hey', done: true, done_reason: 'stop' }),
      ),
    );
    expect(gen).toMatchObject({ streamed: false, outputText: 'Hey' });
    expect(describeLlm(ex('/ollama', '/api/embed', { model: 'all-minilm', input: 'hi' }, json({ embeddings: [[0.1]] })))).toMatchObject({
      model: 'all-minilm',
      streamed: false,
    });
  });
});
