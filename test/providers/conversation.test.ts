import { describe, expect, it } from 'vitest';
import { anthropic } from '../../src/providers/anthropic.js';
import { gemini } from '../../src/providers/gemini.js';
import { openaiResponses } from '../../src/providers/openai/openai-responses.js';

describe('the conversation as the model saw it, per API', () => {
  it('reads Anthropic system, thinking, tool_use and tool_result blocks', () => {
    const c = anthropic.conversation({
      system: [{ type: 'text', text: 'You are terse.' }],
      messages: [
        { role: 'user', content: 'Time in Paris?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Need the clock.' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_time', input: { tz: 'Europe/Paris' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '14:00' }] },
      ],
    });
    expect(c).toEqual([
      { role: 'system', text: 'You are terse.' },
      { role: 'user', text: 'Time in Paris?' },
      {
        role: 'assistant',
        text: 'Checking.',
        thinking: 'Need the clock.',
        toolCalls: [{ id: 'toolu_1', name: 'get_time', arguments: { tz: 'Europe/Paris' } }],
      },
      { role: 'tool', text: '14:00', toolCallId: 'toolu_1' },
    ]);
  });

  it('reads Gemini contents and Responses input', () => {
    const g = gemini.conversation({
      systemInstruction: { parts: [{ text: 'Be kind.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ functionCall: { name: 'lookup', args: { q: 'x' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { ok: true } } }] },
      ],
    });
    expect(g.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(g[2]?.toolCalls).toEqual([{ id: undefined, name: 'lookup', arguments: { q: 'x' } }]);
    const r = openaiResponses.conversation({
      instructions: 'Sys',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'Go' }] },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{"a":1}' },
        { type: 'function_call_output', call_id: 'c1', output: 'done' },
      ],
    });
    expect(r).toEqual([
      { role: 'system', text: 'Sys' },
      { role: 'user', text: 'Go' },
      { role: 'assistant', text: '', toolCalls: [{ id: 'c1', name: 'f', arguments: { a: 1 } }] },
      { role: 'tool', text: 'done', toolCallId: 'c1' },
    ]);
  });
});
