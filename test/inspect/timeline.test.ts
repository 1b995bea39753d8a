import { describe, expect, it } from 'vitest';
import { stepDetail } from '../../src/inspect/timeline.js';

describe('stepDetail', () => {
  const answer = 'The cheapest flight to Lisbon leaves at 06:10 from gate B12 and costs 89 EUR, bags not included.';

  it('a 19-byte prompt shows whole in the room a 100-column timeline leaves, the result gets the rest', () => {
    const prompt = 'Find the cheapest X'; // 19 bytes: it used to show as "Find t... (19 B)"
    const d = stepDetail(prompt, answer, 36);
    expect(d.startsWith(`${prompt} → The cheapest`)).toBe(true);
    expect(d.length).toBeLessThanOrEqual(36);
    expect(d).not.toContain('(19 B)');
  });

  it('a long prompt gets at least 60% of the room; everything fits when there is room', () => {
    const prompt = 'Please find me the cheapest flight from Paris to Lisbon next Tuesday morning';
    const d = stepDetail(prompt, answer, 50);
    expect(d.length).toBeLessThanOrEqual(50);
    expect(d.indexOf(' → ')).toBeGreaterThanOrEqual(30);
    expect(stepDetail('hi', 'hello', 50)).toBe('hi → hello');
    expect(stepDetail(undefined, answer, 20)).toBe('The cheapest flight…');
  });
});
