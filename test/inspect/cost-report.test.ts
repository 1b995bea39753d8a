import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPrices } from '../../src/config/prices.js';
import { costReport } from '../../src/inspect/cost-report.js';
import type { LoadedTape } from '../../src/tape/tape-reader.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { exchange } from './exchanges.js';

const exchanges = [
  exchange({
    offsetMs: 0,
    llm: { model: 'gpt-4o-mini-2024-07-18', usage: { inputTokens: 1000, cachedInputTokens: 200, outputTokens: 100 } },
  }),
  exchange({ offsetMs: 5, mcp: { toolName: 'echo' } }),
  exchange({ offsetMs: 10, llm: { model: 'gpt-4o-mini', usage: { inputTokens: 2000, outputTokens: 500 } } }),
];
const header = {
  type: 'header' as const,
  format: 1 as const,
  tapedeck: '0.1.0',
  name: 'run',
  createdAt: '2026-01-01T00:00:00.000Z',
  mode: 'record' as const,
  routes: [],
};
const tape: LoadedTape = { path: 'run.jsonl', name: 'run', header, exchanges, problems: [] };

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-cost-'));
  writeFileSync(path.join(dir, 'run.jsonl'), [header, ...exchanges].map((l) => JSON.stringify(l)).join('\n') + '\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('cost --as', () => {
  it('prices the recorded tokens on the recorded model and on other models, per call and in total; unknown is null', () => {
    const r = costReport(tape, ['gpt-4.1', 'claude-haiku-4-5', 'my-finetune'], defaultPrices());
    expect(r.calls).toHaveLength(2);
    // gpt-4o-mini: 800 in at 0.15 + 200 cached at 0.075 + 100 out at 0.60 per million
    expect(r.calls[0]!.recorded).toBeCloseTo((800 * 0.15 + 200 * 0.075 + 100 * 0.6) / 1e6, 12);
    // gpt-4.1: 800 at 2.00 + 200 cached at 0.50 + 100 at 8.00
    expect(r.calls[0]!.as['gpt-4.1']).toBeCloseTo((800 * 2 + 200 * 0.5 + 100 * 8) / 1e6, 12);
    // claude-haiku-4-5: 800 at 1.00 + 200 cached at 0.10 + 100 at 5.00
    expect(r.calls[0]!.as['claude-haiku-4-5']).toBeCloseTo((800 * 1 + 200 * 0.1 + 100 * 5) / 1e6, 12);
    expect(r.calls[1]!.as['gpt-4.1']).toBeCloseTo((2000 * 2 + 500 * 8) / 1e6, 12);
    expect(r.total.as['gpt-4.1']).toBeCloseTo((800 * 2 + 200 * 0.5 + 100 * 8 + 2000 * 2 + 500 * 8) / 1e6, 9);
    expect(r.calls[0]!.as['my-finetune']).toBeNull();
    expect(r.total.as['my-finetune']).toBeNull();
    expect(r.unknownPrices).toEqual(['my-finetune']);
    expect(r.total.tokens).toEqual({ input: 3000, cachedInput: 200, output: 600 });
  });

  it('through the CLI: a table, and --json', async () => {
    const text = await runCliInProcess(['cost', 'run', '--as', 'gpt-4.1', '--as', 'unknown-model', '--dir', dir]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^ {2}0 {3}gpt-4o-mini-2024-07-18 +1000→100 +\$0\.000195 +\$0\.002500 +-$/m);
    expect(text.stdout).toMatch(/^ {2}total +3000→600 +\$0\.000795 +\$0\.0105 +-$/m);
    expect(text.stdout).toContain('no price for unknown-model: shown as "-" (unknown, not 0)');
    const json = await runCliInProcess(['cost', 'run', '--as', 'gpt-4.1', '--dir', dir, '--json']);
    const r = JSON.parse(json.stdout) as { total: { recorded: number; as: Record<string, number> } };
    expect(r.total.recorded).toBeCloseTo(0.000795, 9);
    expect(r.total.as['gpt-4.1']).toBeCloseTo(0.0105, 9);
  });
});
