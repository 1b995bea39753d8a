/** The faults file docs/faults-and-contracts.md shows is one tapedeck reads, rule by rule. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { FaultFileSchema, describeRule } from '../../src/engine/faults/fault-rules.js';
import { levelOf } from '../../src/engine/faults/fault-plan.js';

const PAGE = path.resolve(import.meta.dirname, '../../docs/faults-and-contracts.md');

describe('the faults page', () => {
  it('shows a faults file tapedeck reads, with a rule for every level', () => {
    const text = readFileSync(PAGE, 'utf8');
    const block = /## Faults[\s\S]*?```yaml\n([\s\S]*?)```/.exec(text)?.[1];
    expect(block).toBeDefined();
    const file = FaultFileSchema.parse(parse(block as string));
    expect(file.faults.map((r, i) => describeRule(r, i))[0]).toBe('#1 openai call 2 -> 429');
    expect(new Set(file.faults.map((r) => levelOf(r.then)))).toEqual(new Set(['http', 'mcp', 'websocket']));
  });
});
