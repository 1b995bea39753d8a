import { describe, expect, it } from 'vitest';
import { describeLlm } from '../../src/providers/describe.js';
import { convertResponse } from '../../src/providers/stream-convert.js';
import type { ResponseRecord } from '../../src/tape/schema.js';
import { SseSplitter, toSseEvent } from '../../src/tape/framing/sse.js';
import { anthropicMessage, anthropicStream, openaiChat, openaiChatStream, type Reply } from '../helpers/scripted-upstream.js';

const OPENAI = { provider: 'openai', api: 'chat.completions' } as const;
const ANTHROPIC = { provider: 'anthropic', api: 'messages' } as const;

/** A scripted reply as the tape would hold it. */
function recorded(reply: Reply): ResponseRecord {
  if (reply.kind === 'json')
    return { status: reply.status ?? 200, headers: { 'content-type': 'application/json' }, body: { kind: 'json', json: reply.body } };
  if (reply.kind !== 'sse') throw new Error('unexpected reply');
  return {
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    events: new SseSplitter().push(reply.events.map((e) => `${e}\n\n`).join('')).map((block) => toSseEvent(block, 0)),
  };
}

/** What the response means (text, tool calls, usage, stop reason), whatever its shape. */
function meaning(api: typeof OPENAI | typeof ANTHROPIC, response: ResponseRecord) {
  const path = api === OPENAI ? '/v1/chat/completions' : '/v1/messages';
  const m = describeLlm({
    route: api === OPENAI ? '/openai' : '/anthropic',
    request: { method: 'POST', path, query: [], headers: {}, body: { kind: 'json', json: { model: 'm' } } },
    response,
  });
  return { text: m?.outputText, tools: m?.toolCalls, usage: m?.usage, stop: m?.stopReason };
}

describe('stream shape conversion', () => {
  it.each([
    ['OpenAI text', OPENAI, openaiChat({ content: 'Hello there', usage: [10, 3] })],
    [
      'OpenAI tool call',
      OPENAI,
      openaiChat({ content: null, toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }], usage: [20, 7] }),
    ],
    ['OpenAI stream', OPENAI, openaiChatStream({ parts: ['Hel', 'lo'], usage: [10, 3] })],
    [
      'OpenAI streamed tool call',
      OPENAI,
      openaiChatStream({ toolCall: { id: 'call_2', name: 'search', argumentParts: ['{"q":', '"mcp"}'] }, usage: [5, 5] }),
    ],
    ['Anthropic message', ANTHROPIC, anthropicMessage({ text: 'Bonjour', usage: [12, 4] })],
    [
      'Anthropic stream with thinking and a tool',
      ANTHROPIC,
      anthropicStream({
        thinking: 'Let me think.',
        parts: ['Checking ', 'the clock.'],
        toolUse: { id: 'toolu_1', name: 'get_time', jsonParts: ['{"tz":', '"UTC"}'] },
        usage: [40, 20],
      }),
    ],
  ] as const)('%s keeps its meaning in the other shape and back', (_name, api, reply) => {
    const original = recorded(reply);
    const streamed = original.events !== undefined;
    const other = convertResponse(api, original, !streamed, true);
    expect(other).toBeDefined();
    expect(other!.events !== undefined).toBe(!streamed);
    expect(meaning(api, other!)).toEqual(meaning(api, original));
    const back = convertResponse(api, other!, streamed, true);
    expect(meaning(api, back!)).toEqual(meaning(api, original));
  });

  it("leaves errors as they are and refuses bodies that are not the API's", () => {
    const error: ResponseRecord = { status: 429, headers: {}, body: { kind: 'json', json: { error: { message: 'slow down' } } } };
    expect(convertResponse(OPENAI, error, true)).toBe(error);
    expect(convertResponse(OPENAI, { status: 200, headers: {}, body: { kind: 'text', text: 'not json' } }, true)).toBeUndefined();
    expect(convertResponse(ANTHROPIC, { status: 200, headers: {}, events: [{ offsetMs: 0, data: '{broken' }] }, false)).toBeUndefined();
  });
});
