import { describe, expect, it } from 'vitest';
import { failingSteps, resolveStepIndex, stepState } from '../../src/inspect/step-state.js';
import { toSteps } from '../../src/inspect/steps.js';
import { exchange } from './exchanges.js';

const userAsk = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Weather in Paris?' },
  ],
};
const followUp = {
  model: 'gpt-4o-mini',
  messages: [
    ...userAsk.messages,
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
    },
    { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c":21}' },
  ],
};

function tape() {
  // Completed out of order: the timeline follows offsetMs, not seq.
  const second = exchange({
    offsetMs: 50,
    body: followUp,
    llm: { model: 'gpt-4o-mini', outputText: 'It is 21°C.', stopReason: 'stop', usage: { inputTokens: 40, outputTokens: 8 } },
  });
  const first = exchange({
    offsetMs: 0,
    body: userAsk,
    llm: {
      model: 'gpt-4o-mini',
      toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
      usage: { inputTokens: 12, outputTokens: 4, totalTokens: 16 },
    },
  });
  const tool = exchange({
    offsetMs: 20,
    mcp: { toolName: 'get_weather', arguments: { city: 'Paris' }, result: { content: [{ type: 'text', text: '21' }] } },
  });
  const failed = exchange({ offsetMs: 70, path: '/v1/other', status: 503, response: { error: 'down' } });
  return toSteps([second, failed, first, tool]);
}

describe('steps', () => {
  it('orders exchanges by offset and describes each', () => {
    const steps = tape();
    expect(steps.map((s) => [s.index, s.kind, s.target])).toEqual([
      [0, 'LLM', 'gpt-4o-mini'],
      [1, 'MCP', 'get_weather'],
      [2, 'LLM', 'gpt-4o-mini'],
      [3, 'HTTP', '/v1/other'],
    ]);
    expect(steps[0]?.tokens).toEqual({ input: 12, output: 4, total: 16 });
    expect(steps[2]?.tokens).toEqual({ input: 40, output: 8, total: 48 });
    expect(steps[0]?.args).toBe('Weather in Paris?');
    expect(steps[0]?.result).toBe('get_weather({"city":"Paris"})');
    expect(steps[1]?.args).toEqual({ city: 'Paris' });
    expect(steps[3]?.error).toBe('HTTP 503 down');
    expect(failingSteps(steps).map((s) => s.index)).toEqual([3]);
  });

  it('resolves negative steps from the end and rejects out-of-range ones with the valid range', () => {
    expect(resolveStepIndex(-1, 4)).toBe(3);
    expect(resolveStepIndex(0, 4)).toBe(0);
    expect(() => resolveStepIndex(4, 4)).toThrow(/out of range: the tape has 4 step\(s\) \(0\.\.3, or -1\.\.-4/);
    expect(() => resolveStepIndex(-5, 4)).toThrow(/out of range/);
  });

  it('gives the conversation as the model saw it, its answer, and the tool results so far', () => {
    const steps = tape();
    const atTool = stepState(steps, 1);
    expect(atTool.conversationFrom).toBe(0);
    expect(atTool.conversation.map((m) => m.role)).toEqual(['system', 'user', 'assistant']);
    expect(atTool.conversation[2]?.toolCalls?.[0]?.name).toBe('get_weather');
    expect(atTool.toolResults).toEqual([
      { source: 'mcp', step: 1, name: 'get_weather', result: { content: [{ type: 'text', text: '21' }] } },
    ]);

    const last = stepState(steps, -2);
    expect(last.index).toBe(2);
    expect(last.conversation.map((m) => `${m.role}:${m.text}`)).toEqual([
      'system:Be brief.',
      'user:Weather in Paris?',
      'assistant:',
      'tool:{"temp_c":21}',
      'assistant:It is 21°C.',
    ]);
    expect(last.toolResults[0]).toEqual({
      source: 'conversation',
      step: 2,
      name: 'get_weather',
      toolCallId: 'call_1',
      result: '{"temp_c":21}',
    });
    expect(last.exchange.id).toBe(steps[2]?.exchangeId);
  });
});
