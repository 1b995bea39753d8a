/**
 * tapedeck's matching evaluation set (bench/matching-set/), run against the replay matcher as `tapedeck replay` builds
 * it: thousands of pairs that mean something different must all miss (0 false hits), and every rewording
 * docs/matching.md promises must be served its own recording (its adversarial twin sits on the tape as a decoy).
 * The per-family report (false hits, the 95% bound, recall) is printed; `npm run bench:matching` prints the same.
 */
import { describe, expect, it } from 'vitest';
import { evaluate, matchingSet, reportLines, type SetReport } from '../../bench/matching-set/index.mjs';
import { createReplayMatcher } from '../../src/replay/pipeline.js';

describe('the matching evaluation set', () => {
  const pairs = matchingSet();

  it('has thousands of adversarial pairs in several languages and every API, and a harmless side', () => {
    const adversarial = pairs.filter((p) => p.side === 'adversarial');
    const benign = pairs.filter((p) => p.side === 'benign');
    expect(adversarial.length).toBeGreaterThanOrEqual(5000);
    expect(benign.length).toBeGreaterThanOrEqual(3000);
    expect(new Set(adversarial.map((p) => p.lang)).size).toBeGreaterThanOrEqual(10);
    expect(new Set(adversarial.map((p) => p.family)).size).toBeGreaterThanOrEqual(15);
    expect(new Set(pairs.map((p) => p.api))).toEqual(new Set(['openai', 'responses', 'anthropic', 'gemini', 'mcp']));
    // Generated, deterministic: the same set on every run.
    expect(JSON.stringify(matchingSet())).toBe(JSON.stringify(pairs));
  });

  it('serves no pair that means something different, and every promised rewording its own recording', async () => {
    const report: SetReport = await evaluate(pairs, createReplayMatcher as never);
    console.log(['', 'matching evaluation set', ...reportLines(report)].join('\n'));
    const falseHits = report.wrong.filter((w) => w.outcome !== 'missed');
    expect(falseHits.map((w) => `${w.pair.family} (${w.pair.api}): ${w.pair.note}: ${w.outcome}: ${w.why}`)).toEqual([]);
    const missed = report.wrong.filter((w) => w.outcome === 'missed');
    expect(missed.map((w) => `${w.pair.family} (${w.pair.api}): ${w.pair.note}: ${w.why}`)).toEqual([]);
    expect(report.adversarial.falseHits).toBe(0);
    expect(report.benign.served).toBe(report.benign.pairs);
  }, 300_000);
});
