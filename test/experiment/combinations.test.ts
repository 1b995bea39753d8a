import { describe, expect, it } from 'vitest';
import { combinations } from '../../src/experiment/combinations.js';

describe('experiment configurations', () => {
  it('one per combination of the values given, labelled for the table', () => {
    const c = combinations({ model: ['gpt-4.1', { route: '/anthropic', value: 'claude-haiku-4-5' }], temperature: [0, 0.7] });
    expect(c.map((x) => x.label)).toEqual([
      'model gpt-4.1, temperature 0',
      'model gpt-4.1, temperature 0.7',
      'model /anthropic=claude-haiku-4-5, temperature 0',
      'model /anthropic=claude-haiku-4-5, temperature 0.7',
    ]);
    expect(c[3]!.overrides).toEqual({ model: [{ route: '/anthropic', value: 'claude-haiku-4-5' }], temperature: [0.7] });
    expect(combinations({ systemPrompt: ['You are a very careful and terse assistant.'] })[0]!.label).toBe(
      'system prompt "You are a very carefu..."',
    );
    expect(combinations({})).toEqual([{ label: 'as recorded (re-asked)', overrides: {} }]);
  });
});
