import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { defaultPrices, modelCandidates, priceFor, priceTable } from '../../src/config/prices.js';
import { costOf } from '../../src/inspect/cost.js';
import { exchange } from './exchanges.js';

const tmp = mkdtempSync(path.join(tmpdir(), 'tapedeck-cost-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const llmCall = (
  model: string | undefined,
  usage: { inputTokens?: number; outputTokens?: number; cachedInputTokens?: number } | undefined,
) => exchange({ offsetMs: 0, llm: { ...(model === undefined ? {} : { model }), ...(usage === undefined ? {} : { usage }) } });

describe('price lookup', () => {
  it('finds a model by its exact name', () => {
    expect(priceFor('gpt-4o')).toEqual({ model: 'gpt-4o', price: { input: 2.5, cachedInput: 1.25, output: 10 } });
    expect(priceFor('claude-haiku-4-5')?.price.output).toBe(5);
    expect(priceFor('gemini-2.5-flash')?.model).toBe('gemini-2.5-flash');
  });

  it('strips a dated or versioned snapshot suffix and a vendor prefix', () => {
    expect(priceFor('gpt-4o-2024-08-06')?.model).toBe('gpt-4o');
    expect(priceFor('gpt-4o-mini-2024-07-18')?.model).toBe('gpt-4o-mini');
    expect(priceFor('claude-sonnet-4-5-20250929')?.model).toBe('claude-sonnet-4-5');
    expect(priceFor('claude-3-7-sonnet-latest')?.model).toBe('claude-3-7-sonnet');
    expect(priceFor('gemini-2.0-flash-001')?.model).toBe('gemini-2.0-flash');
    expect(priceFor('models/gemini-2.5-pro')?.model).toBe('gemini-2.5-pro');
    expect(priceFor('openai/GPT-4.1')?.model).toBe('gpt-4.1');
    expect(modelCandidates('claude-sonnet-4-5-20250929')).toEqual(['claude-sonnet-4-5-20250929', 'claude-sonnet-4-5']);
  });

  it('a model not in the table has no price: null, never a near miss', () => {
    expect(priceFor('my-finetune')).toBeNull();
    expect(priceFor('gpt-4o-mini-tts')).toBeNull();
    expect(priceFor(undefined)).toBeNull();
  });

  it('the built-in table covers the families it promises', () => {
    for (const m of [
      'gpt-4o',
      'gpt-4o-mini',
      'gpt-4.1',
      'gpt-4.1-mini',
      'o3',
      'o4-mini',
      'gpt-5',
      'gpt-5-mini',
      'gpt-5-nano',
      'claude-opus-4-1',
      'claude-sonnet-4',
      'claude-haiku-4-5',
      'claude-3-5-haiku',
      'claude-3-7-sonnet',
      'gemini-2.0-flash',
      'gemini-2.5-pro',
    ]) {
      expect(defaultPrices()[m], m).toBeDefined();
    }
  });
});

describe('costOf', () => {
  it('prices uncached input, cached input and output per million tokens', () => {
    expect(costOf(llmCall('gpt-4o', { inputTokens: 1_000_000, outputTokens: 1_000_000 }))).toBeCloseTo(12.5, 9);
    // 400k uncached at 2.50, 600k cached at 1.25, 100k out at 10.00
    expect(costOf(llmCall('gpt-4o-2024-08-06', { inputTokens: 1_000_000, cachedInputTokens: 600_000, outputTokens: 100_000 }))).toBeCloseTo(
      1 + 0.75 + 1,
      9,
    );
    expect(costOf(llmCall('gemini-2.0-flash-lite', { inputTokens: 1_000_000, cachedInputTokens: 1_000_000 }))).toBeCloseTo(0.075, 9);
  });

  it('is null for an unknown model, a call without usage, and anything that is not an LLM call', () => {
    expect(costOf(llmCall('my-finetune', { inputTokens: 10, outputTokens: 10 }))).toBeNull();
    expect(costOf(llmCall('gpt-4o', undefined))).toBeNull();
    expect(costOf(llmCall(undefined, { inputTokens: 10 }))).toBeNull();
    expect(costOf(exchange({ offsetMs: 0, mcp: { toolName: 'x' } }))).toBeNull();
  });
});

describe('user prices from the config', () => {
  it('an inline map is merged over the defaults, model by model', () => {
    const config = loadConfig(
      writeConfig('inline.yaml', 'prices:\n  my-finetune: { input: 3, output: 12 }\n  gpt-4o: { input: 1, output: 1 }\n'),
      {},
      {},
    );
    const table = priceTable(config.prices);
    expect(costOf(llmCall('my-finetune', { inputTokens: 1_000_000, outputTokens: 1_000_000 }), table)).toBe(15);
    expect(costOf(llmCall('gpt-4o', { inputTokens: 1_000_000 }), table)).toBe(1);
    expect(table['gpt-4o-mini']).toEqual(defaultPrices()['gpt-4o-mini']);
  });

  it('a path names a price file shaped like config/prices.yaml', () => {
    const file = writeConfig('prices.yaml', 'models:\n  local-llama: { input: 0, output: 0 }\n');
    const config = loadConfig(writeConfig('by-path.yaml', `prices: ${file}\n`), {}, {});
    expect(costOf(llmCall('local-llama', { inputTokens: 5, outputTokens: 5 }), priceTable(config.prices))).toBe(0);
  });

  it('bad prices are a config error', () => {
    expect(() => loadConfig(writeConfig('bad.yaml', 'prices:\n  gpt-4o: { input: -1, output: 1 }\n'), {}, {})).toThrow(
      /bad config .*prices/,
    );
    expect(() => priceTable(writeConfig('bad-file.yaml', 'gpt-4o: { input: 1, output: 1 }\n'))).toThrow(/bad price file/);
    expect(() => priceTable(path.join(tmp, 'missing.yaml'))).toThrow(/cannot read price file/);
  });
});

function writeConfig(name: string, text: string): string {
  const file = path.join(tmp, name);
  writeFileSync(file, text);
  return file;
}
