/**
 * Fault rules' bounds: a delay longer than a timer holds (2^31 - 1 ms) would be run at once by node (with a
 * TimeoutOverflowWarning), serving the answer with no delay at all; such a rule is refused at start, saying the bound.
 */
import { describe, expect, it } from 'vitest';
import { MAX_DELAY_MS, parseFaultRule, readFaultsFile } from '../../../src/engine/faults/fault-rules.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

describe('fault rules: delays', () => {
  it('a delay up to the longest a timer holds is taken as written', () => {
    expect(MAX_DELAY_MS).toBe(2_147_483_647);
    expect(parseFaultRule(`{then: {delay: {firstByteMs: ${MAX_DELAY_MS}, betweenEventsMs: 50}}}`).then.delay).toEqual({
      firstByteMs: MAX_DELAY_MS,
      betweenEventsMs: 50,
    });
  });

  it('a longer one is refused in one line that says the bound, inline or in a file', () => {
    for (const [rule, field] of [
      ['{then: {delay: {firstByteMs: 3000000000}}}', 'firstByteMs'],
      ['{then: {delay: {firstByteMs: 1e15}}}', 'firstByteMs'],
      ['{then: {delay: {betweenEventsMs: 3e9}}}', 'betweenEventsMs'],
    ] as const) {
      expect(() => parseFaultRule(rule)).toThrow(
        `then.delay.${field}: must be at most 2147483647 ms (about 24.8 days, the longest a timer holds)`,
      );
    }
    expect(() => parseFaultRule('{then: {delay: {firstByteMs: .inf}}}')).toThrow(/then\.delay\.firstByteMs: /);
    const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-fault-rules-'));
    try {
      const file = path.join(dir, 'faults.yaml');
      writeFileSync(file, 'faults:\n  - then: {delay: {betweenEventsMs: 3000000000}}\n');
      expect(() => readFaultsFile(file)).toThrow(`faults.0.then.delay.betweenEventsMs: must be at most 2147483647 ms`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
