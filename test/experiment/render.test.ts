import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { renderExperiment } from '../../src/experiment/render.js';
import { renderExperimentMarkdown } from '../../src/experiment/render-markdown.js';
import type { ExperimentResult } from '../../src/experiment/run-experiment.js';
import { styleFor } from '../../src/inspect/format.js';
import type { RunDiff } from '../../src/inspect/diff/diff.js';

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
    callAgreement: 1,
    removedCalls: [],
    addedCalls: [],
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

  it('wraps why a run diverged under its row, never cutting it', () => {
    const r = result();
    const reason = `different output: original "${'sunny and warm in Lisbon '.repeat(3).trim()}", replay "rain"`;
    const runs = r.runs.map((run) => ({ ...run, diff: { ...run.diff!, firstDivergence: { step: 2, replayStep: 2, reason } } }));
    const lines = renderExperiment({ ...r, runs }, 60, plain);
    const row = lines.findIndex((l) => l.startsWith('  1   '));
    const why = lines.slice(
      row + 1,
      lines.findIndex((l, i) => i > row && !l.startsWith('      ')),
    );
    expect(why.length).toBeGreaterThan(1);
    for (const l of why) expect(l.length).toBeLessThanOrEqual(60);
    expect(why.map((l) => l.trim()).join(' ')).toBe(reason);
  });

  it('--markdown: the verdict first, one row per run, the reasons folded', () => {
    const r = result();
    const failed = { ...r.runs[0]!, failed: 'the agent exited with code 3', config: 1, repeat: 2 };
    const md = renderExperimentMarkdown({ ...r, runs: [...r.runs, failed] });
    expect(md[0]).toBe(
      '### ❌ tapedeck experiment on `weather`: 2 configuration(s), 3 run(s), 1 failed; closest to the original: ' +
        'model gpt-4.1, temperature 0.7, system prompt "Answer in French, briefly." (score 0.60)',
    );
    expect(md).toContain('| run | configuration | score | ARS | tool edits | tokens | cost | duration | first divergence |');
    expect(md).toContain(
      '| 2 | 2. model gpt-4.1, temperature 0.7, system prompt "Answer in French, briefly." #1 | 0.60 | 0.60 (good) | 0 | +10 | +$0.0001 | +12ms | step 2 |',
    );
    expect(md.find((l) => l.startsWith('| 3 |'))).toMatch(/ \| ❌ failed \|$/);
    const why = md.slice(md.indexOf('<summary>why runs part from the original</summary>'));
    expect(why).toContain('- run 2: different output; blocked at step 3: send_email ("send_email" counts as a side effect)');
    expect(why).toContain('- run 3: failed: the agent exited with code 3; different output');
    expect(md).toContain('<summary>run-to-run variance (same configuration)</summary>');
    expect(md).toContain('- run 1: `weather.exp-1`');
    const plainRun = renderExperimentMarkdown(r);
    expect(plainRun[0]).toMatch(/^### ✅ .*2 run\(s\); closest/);
    expect(plainRun.join('\n')).not.toContain('variance');
  });
});
