import { describe, expect, it } from 'vitest';
import { determinism, formatPlan, planRun } from '../../src/inspect/replay-plan.js';
import { exchange } from './exchanges.js';

describe('the run plan', () => {
  const calls = [
    exchange({ offsetMs: 0, llm: { model: 'gpt-4o', params: { temperature: 0, seed: 7, tools: ['search'] } } }),
    exchange({ offsetMs: 1, llm: { model: 'gpt-4o', params: { temperature: 0, seed: 7, tools: ['search'] } } }),
  ];

  it('an offline replay is fully deterministic and changes nothing', () => {
    const plan = planRun(calls, { llm: 'tape' });
    expect(plan.determinism).toBe(1);
    expect(plan.changes).toEqual([]);
    expect(plan.recorded).toMatchObject({ model: 'gpt-4o', temperature: 0, seed: 7, tools: ['search'] });
  });

  it('follows the documented formula for live runs', () => {
    // Temperature 0, a seed, same model: 1. Another model: x0.6. Temperature 1 and no seed: 0.5 x 0.9.
    expect(
      determinism(
        calls.map((c) => c.llm!),
        { llm: 'live' },
      ),
    ).toBe(1);
    expect(
      determinism(
        calls.map((c) => c.llm!),
        { llm: 'live', overrides: { model: 'gpt-4.1' } },
      ),
    ).toBe(0.6);
    const warm = exchange({ offsetMs: 2, llm: { model: 'x', params: {} } }).llm!;
    expect(determinism([warm], { llm: 'live' })).toBe(0.45);
    expect(determinism([warm], { llm: 'live', overrides: { temperature: 0, systemPrompt: 'p' } })).toBe(0.72);
  });

  it('lists what this run changes, with how many calls it concerns', () => {
    const plan = planRun(calls, { llm: 'live', overrides: { model: 'gpt-4.1', temperature: 0 } });
    expect(plan.changes).toEqual([
      { field: 'llm', original: 'tape', replay: 'live', calls: 2 },
      { field: 'model', original: 'gpt-4o', replay: 'gpt-4.1', calls: 2 },
    ]);
  });

  it('prints the recorded configuration, each change, and the score', () => {
    const lines = formatPlan(planRun(calls, { llm: 'live', overrides: { temperature: 0.5 } }));
    expect(lines).toEqual([
      'recorded: 2 LLM call(s); model gpt-4o; provider openai; temperature 0; seed 7; tools search',
      'this run: llm "tape" -> "live" (2 call(s))',
      'this run: temperature 0 -> 0.5 (2 call(s))',
      'determinism: 0.75 (1 = answers replayed from the tape; the formula: docs/modified-replay.md#determinism)',
    ]);
  });
});

describe('the run plan of a fork (--live-after)', () => {
  it('keeps the first N LLM calls on the tape and scores them 1', () => {
    const calls = [
      exchange({ offsetMs: 0, llm: { model: 'gpt-4o', params: { temperature: 0, seed: 7 } } }),
      exchange({ offsetMs: 1, llm: { model: 'gpt-4o', params: { temperature: 0, seed: 7 } } }),
    ];
    const plan = planRun(calls, { llm: 'live', overrides: { model: 'gpt-4.1' }, fromTapeFirst: 1 });
    expect(plan.changes).toEqual([
      { field: 'llm', original: 'tape', replay: 'live', calls: 1 },
      { field: 'model', original: 'gpt-4o', replay: 'gpt-4.1', calls: 1 },
    ]);
    expect(plan.fromTape).toEqual([{ route: '/openai', calls: 1 }]);
    expect(plan.determinism).toBe(0.8); // (1 + 0.6) / 2
  });
});
