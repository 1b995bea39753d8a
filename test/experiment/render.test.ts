import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { renderExperiment } from '../../src/experiment/render.js';
import type { ExperimentResult } from '../../src/experiment/run-experiment.js';
import { styleFor } from '../../src/inspect/format.js';
import type { RunDiff } from '../../src/inspect/diff.js';

const plain = styleFor(new PassThrough(), {});

function diff(score: number): RunDiff {
  return {
    identical: false,
    iterationsDelta: 0,
    toolSequenceDiff: [],
    firstDivergence: { step: 2, replayStep: 2, reason: 'different output' },
    outputDiff: { equal: false, original: 'a', replay: 'b', similarity: score, method: 'words' },
    tokensDelta: 10,
    tokensDeltaDetail: { input: 5, output: 5 },
    costDelta: 0.0001,
    durationDeltaMs: 12,
    score,
    ars: { score, band: 'good', outputSimilarity: score, toolAccuracy: 1, originalTools: 1, usedTools: 1, newTools: 0, unusedTools: 0 },
    configChanges: [],
    steps: [],
    unusedRecordings: null,
  };
}

/** Two configurations whose labels share their first 40 characters. */
function result(): ExperimentResult {
  const labels = [
    'model gpt-4.1, temperature 0.7, system prompt "Answer in English, briefly."',
    'model gpt-4.1, temperature 0.7, system prompt "Answer in French, briefly."',
  ];
  return {
    tape: 'weather',
    configs: labels.map((label) => ({ label, overrides: {}, overridesApplied: {} })),
    runs: labels.map((label, i) => ({
      config: i + 1,
      label,
      repeat: 1,
      tape: `weather.exp-${i + 1}`,
      exitCode: 0,
      failed: null,
      diff: diff(0.5 + i / 10),
      blocked: i === 1 ? [{ step: 3, tool: 'send_email', reason: '"send_email" counts as a side effect' }] : [],
      upstreamErrors: [],
    })),
    variance: [],
  };
}

describe('the experiment table', () => {
  it('shows each label whole when it fits', () => {
    const lines = renderExperiment(result(), Infinity, plain);
    for (const [i, c] of result().configs.entries()) expect(lines.find((l) => l.startsWith(`  ${i + 1}   `))).toContain(c.label);
    expect(lines.join('\n')).not.toContain('config 1');
  });

  it('marks the calls a run had blocked, under its row', () => {
    const lines = renderExperiment(result(), Infinity, plain);
    const row = lines.findIndex((l) => l.startsWith('  2   '));
    expect(lines.slice(row + 1, row + 3)).toEqual([
      '      different output',
      '      ⊘ blocked at step 3: send_email ("send_email" counts as a side effect)',
    ]);
    expect(lines.filter((l) => l.includes('⊘'))).toHaveLength(1);
  });

  it('never cuts labels into ambiguity: when they do not fit it names the configurations and lists each label whole', () => {
    const lines = renderExperiment(result(), 100, plain);
    for (const l of lines.slice(0, 7)) expect(l.length).toBeLessThanOrEqual(100);
    expect(lines.find((l) => l.startsWith('  1   '))).toMatch(/^ {2}1 {3}config 1 +0\.50 /);
    expect(lines.find((l) => l.startsWith('  2   '))).toMatch(/^ {2}2 {3}config 2 +0\.60 /);
    const legend = lines.indexOf('configurations');
    expect(lines.slice(legend + 1, legend + 3)).toEqual(result().configs.map((c, i) => `  config ${i + 1}: ${c.label}`));
    expect(lines.join('\n')).not.toContain('…');
  });
});
