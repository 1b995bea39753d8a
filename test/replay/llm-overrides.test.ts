import { describe, expect, it } from 'vitest';
import { applyOverrides } from '../../src/replay/llm-overrides.js';

const all = { model: 'm2', systemPrompt: 'Be brief.', temperature: 0, maxTokens: 50 };

describe('applyOverrides puts each override where the API keeps it', () => {
  it('OpenAI chat: model, first system message (or a new one), temperature, the max-tokens field the agent uses', () => {
    const input = {
      model: 'm1',
      max_tokens: 10,
      messages: [
        { role: 'developer', content: 'old' },
        { role: 'user', content: 'hi' },
      ],
    };
    const out = applyOverrides({ provider: 'openai', api: 'chat.completions' }, '/v1/chat/completions', input, all);
    expect(out.body).toEqual({
      model: 'm2',
      max_tokens: 50,
      temperature: 0,
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(out.applied).toMatchObject({
      model: { from: 'm1', to: 'm2' },
      system: { from: 'old', to: 'Be brief.' },
      max_tokens: { from: 10, to: 50 },
    });
    expect(input.model).toBe('m1'); // the input is untouched
    const none = applyOverrides(
      { provider: 'openai', api: 'chat.completions' },
      '/v1/chat/completions',
      { messages: [{ role: 'user', content: 'hi' }] },
      all,
    );
    expect((none.body.messages as unknown[])[0]).toEqual({ role: 'system', content: 'Be brief.' });
    expect(none.body.max_completion_tokens).toBe(50);
  });

  it('OpenAI Responses: instructions and max_output_tokens', () => {
    const out = applyOverrides({ provider: 'openai', api: 'responses' }, '/v1/responses', { model: 'm1', input: 'hi' }, all);
    expect(out.body).toEqual({ model: 'm2', input: 'hi', instructions: 'Be brief.', temperature: 0, max_output_tokens: 50 });
  });

  it('Anthropic: system and max_tokens', () => {
    const out = applyOverrides(
      { provider: 'anthropic', api: 'messages' },
      '/v1/messages',
      { model: 'm1', max_tokens: 1024, system: [{ type: 'text', text: 'old' }], messages: [] },
      all,
    );
    expect(out.body).toEqual({ model: 'm2', max_tokens: 50, system: 'Be brief.', temperature: 0, messages: [] });
  });

  it('Gemini: the model in the path, generationConfig, systemInstruction', () => {
    const out = applyOverrides(
      { provider: 'gemini', api: 'generateContent' },
      '/v1beta/models/gemini-2.5-flash:streamGenerateContent',
      { contents: [], generationConfig: { topK: 3 } },
      all,
    );
    expect(out.path).toBe('/v1beta/models/m2:streamGenerateContent');
    expect(out.body).toEqual({
      contents: [],
      generationConfig: { topK: 3, temperature: 0, maxOutputTokens: 50 },
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
    });
    expect(out.applied.model).toEqual({ from: 'gemini-2.5-flash', to: 'm2' });
  });
});
