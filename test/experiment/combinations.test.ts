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

  it('never cuts two prompts into the same label: as much of each as tells them apart, else their place', () => {
    const labels = (prompts: string[]): string[] => combinations({ systemPrompt: prompts }).map((c) => c.label);
    expect(labels(['You are a careful assistant. Answer in English.', 'You are a careful assistant. Answer in French.'])).toEqual([
      'system prompt "You are a careful assistant. Answer in E..."',
      'system prompt "You are a careful assistant. Answer in F..."',
    ]);
    const long = 'You are a careful assistant who checks every figure twice before answering the user: ';
    expect(labels([`${long}be terse.`, `${long}be thorough.`, 'Be brief.'])).toEqual([
      `system prompt #1 ${JSON.stringify(long.slice(0, 57) + '...')}`,
      `system prompt #2 ${JSON.stringify(long.slice(0, 57) + '...')}`,
      'system prompt "Be brief."',
    ]);
    for (const set of [
      ['a'.repeat(30), 'a'.repeat(31)],
      ['same prompt here, longer than 24', 'same prompt here, longer than 24 too'],
    ])
      expect(new Set(labels(set)).size).toBe(2);
  });
});
