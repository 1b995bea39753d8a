import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { useTapedeck } from '../../../src/vitest/index.js';

useTapedeck();

/** The agent under test: an OpenAI client configured by the environment alone, no retries. */
async function ask(question: string): Promise<string> {
  const openai = new OpenAI({ apiKey: 'sk-fixture-SECRET-0123', maxRetries: 0 });
  const answer = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }] });
  return answer.choices[0]?.message.content ?? '';
}

/** A test's first call: with FIXTURE_FAULTS=1 (a rule that rate-limits each test's call 1), a 429 first, then the answer. */
async function first(question: string): Promise<string> {
  if (process.env.FIXTURE_FAULTS === '1') await expect(ask(question)).rejects.toThrow(/^429/);
  return ask(question);
}

describe('weather', () => {
  it('answers in celsius', async () => {
    expect(await first('celsius 1')).toBe('echo: celsius 1');
    // FIXTURE_DROP=1: the agent no longer makes its second call (what --expect catches).
    if (process.env.FIXTURE_DROP !== '1') expect(await ask('celsius 2')).toBe('echo: celsius 2');
  });

  it('answers in fahrenheit', async () => {
    expect(await first('fahrenheit')).toBe('echo: fahrenheit');
  });
});

// FIXTURE_SKIP=1: a test that did not run; its tape is its own all the same, no orphan.
it.skipIf(process.env.FIXTURE_SKIP === '1')('sometimes skipped', async () => {
  expect(await first('skipped')).toBe('echo: skipped');
});
