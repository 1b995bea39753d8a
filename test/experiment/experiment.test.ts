/**
 * `tapedeck experiment` end to end: record an agent (wrapper mode), then A/B three models against a scripted
 * upstream that answers differently per model (another tool for one, an API error for another): one table with the
 * right divergences, the JSON, a failed run shown as failed, and --repeat's variance.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { abModelAnswer } from './fixtures/ab-upstream.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/ab-agent.mjs');
let dir: string;
let llm: ScriptedUpstream;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-experiment-'));
  llm = await startScriptedUpstream((req) => {
    if ((req.body as { model: string }).model === 'gpt-5')
      return { kind: 'json', status: 400, body: { error: { message: 'no such model', type: 'invalid_request_error' } } };
    return abModelAnswer(req);
  });
  const rec = await runCli(['record', '--tape', 'base', '--dir', dir, '--route', `/openai=${llm.url}`, '--', process.execPath, AGENT]);
  expect(rec.code, rec.stderr).toBe(0);
});
afterAll(async () => {
  await llm?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('tapedeck experiment', () => {
  it('runs one replay per model, diffs each against the recording, and shows a failed run as failed', async () => {
    const res = await runCli([
      'experiment',
      '--tape',
      'base',
      '--dir',
      dir,
      '--model',
      'gpt-4.1',
      '--model',
      'gpt-4o-mini',
      '--model',
      'gpt-5',
      '--',
      process.execPath,
      AGENT,
    ]);
    expect(res.code, res.stderr).toBe(1); // a run failed
    const lines = res.stdout.split('\n');
    expect(lines[0]).toBe('experiment on "base": 3 configuration(s), 3 run(s)');
    const row = (n: number): string => lines.find((l) => l.startsWith(`  ${n}   `)) ?? '';
    expect(row(1)).toMatch(/^ {2}1 {3}model gpt-4\.1 +0\.\d\d +0\.\d\d +2 +\+24 +\+\$0\.\d+ +\S+ {2}step 0$/);
    expect(lines[lines.indexOf(row(1)) + 1]).toBe(
      '      different tool: the model asked for [lookup] in the original, [search] in the replay',
    );
    expect(row(2)).toMatch(/^ {2}2 {3}model gpt-4o-mini +1\.00 +1\.00 +0 +0 +\$0 +\S+ {2}none$/);
    expect(row(3)).toMatch(/^ {2}3 {3}model gpt-5 .* {2}FAILED$/);
    // Why it failed, from its tape: the model's API refused the call.
    const why = lines.slice(lines.indexOf(row(3)) + 1, lines.indexOf(row(3)) + 3);
    for (const l of why) expect(l.length).toBeLessThanOrEqual(100);
    expect(why.map((l) => l.trim()).join(' ')).toBe(
      'the agent exited with code 1; on its tape: the upstream answered HTTP 400 invalid_request_error: no such model to LLM gpt-5 at step 0',
    );
    expect(res.stderr).toContain('agent: 400 no such model'); // the agent's own output, on stderr
  }, 60_000);

  it('--markdown prints the experiment for a pull-request comment', async () => {
    const res = await runCli([
      'experiment',
      '--tape',
      'base',
      '--dir',
      dir,
      '--model',
      'gpt-4.1',
      '--markdown',
      '--',
      process.execPath,
      AGENT,
    ]);
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.split('\n');
    expect(lines[0]).toMatch(
      /^### ✅ tapedeck experiment on `base`: 1 configuration\(s\), 1 run\(s\); closest to the original: model gpt-4\.1 \(score 0\.\d\d\)$/,
    );
    expect(lines).toContain('| run | configuration | score | ARS | tool edits | tokens | cost | duration | first divergence |');
    expect(lines.find((l) => l.startsWith('| 1 | 1. model gpt-4.1 |'))).toMatch(/ \| 2 \| \+24 \| .* \| step 0 \|$/);
    expect(lines).toContain('- run 1: different tool: the model asked for [lookup] in the original, [search] in the replay');
  }, 60_000);

  it('--json and --repeat: every run with its diff, and run-to-run variance per configuration', async () => {
    const res = await runCli([
      'experiment',
      '--tape',
      'latest',
      '--dir',
      dir,
      '--model',
      'gpt-4.1',
      '--repeat',
      '2',
      '--json',
      '--',
      process.execPath,
      AGENT,
    ]);
    expect(res.code, res.stderr).toBe(0);
    const r = JSON.parse(res.stdout) as {
      tape: string;
      configs: { label: string; overridesApplied: Record<string, unknown> }[];
      runs: {
        config: number;
        repeat: number;
        tape: string;
        failed: null;
        diff: { score: number; tokensDelta: number; firstDivergence: { step: number; replayStep: number; reason: string } };
      }[];
      variance: {
        label: string;
        runs: number;
        failed: number;
        score: { min: number; max: number; stdev: number };
        toolSequences: number;
      }[];
    };
    expect(r.tape).toBe('base');
    expect(r.configs).toEqual([{ label: 'model gpt-4.1', overrides: { model: ['gpt-4.1'] }, overridesApplied: { model: 'gpt-4.1' } }]);
    expect(r.runs.map((x) => [x.config, x.repeat, x.failed])).toEqual([
      [1, 1, null],
      [1, 2, null],
    ]);
    expect(r.runs[0]!.diff.firstDivergence).toEqual({
      step: 0,
      replayStep: 0,
      reason: 'different tool: the model asked for [lookup] in the original, [search] in the replay',
    });
    expect(r.runs[0]!.diff.tokensDelta).toBe(24);
    expect(r.variance).toEqual([
      expect.objectContaining({
        label: 'model gpt-4.1',
        runs: 2,
        failed: 0,
        toolSequences: 1,
        score: expect.objectContaining({ stdev: 0 }) as unknown,
      }),
    ]);
  }, 60_000);

  it('refuses a model no provider claims before running anything', async () => {
    const res = await runCli(['experiment', '--tape', 'base', '--dir', dir, '--model', 'llama-3', '--', process.execPath, AGENT]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('cannot tell which provider\'s calls the model "llama-3" is for');
  });
});
