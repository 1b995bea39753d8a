import { describe, expect, it } from 'vitest';
import type { IncomingRequest } from '../../src/replay/matcher.js';
import { createReplayMatcher } from '../../src/replay/pipeline.js';
import { exchange } from '../inspect/exchanges.js';

const body = (text: string) => ({ model: 'gpt-4o', messages: [{ role: 'user', content: text }] });
const incoming = (text: string): IncomingRequest => ({
  route: '/openai',
  request: { method: 'POST', path: '/v1/chat/completions', query: [], body: { kind: 'json', json: body(text) } },
});

describe('the replay matching pipeline', () => {
  it('serves the recordings of a normalised match in turn (the Nth similar request gets the Nth answer)', async () => {
    const first = exchange({ offsetMs: 0, body: body('Roll a die'), response: { n: 1 } });
    const second = exchange({ offsetMs: 1, body: body('Roll a die'), response: { n: 2 } });
    const m = createReplayMatcher([first, second]);
    const a = await m.match(incoming('roll a die!'));
    const b = await m.match(incoming('ROLL a die'));
    expect([a, b].map((o) => (o.kind === 'semantic' ? o.exchange.id : o.kind))).toEqual([first.id, second.id]);
  });

  it('does not serve used-up answers again through a semantic stage when whenExhausted is miss', async () => {
    const only = exchange({ offsetMs: 0, body: body('Roll a die'), response: { n: 1 } });
    const m = createReplayMatcher([only], { whenExhausted: 'miss' });
    expect((await m.match(incoming('Roll a die'))).kind).toBe('exact');
    const again = await m.match(incoming('Roll a die'));
    expect(again.kind).toBe('miss');
    expect(again.explanation).toBe('all 1 recorded answers for this request were already served');
  });

  it('turns the semantic stages off with semantic: false or enabled: false', async () => {
    const tape = [exchange({ offsetMs: 0, body: body('Roll a die'), response: {} })];
    for (const semantic of [false, { enabled: false }] as const) {
      expect((await createReplayMatcher(tape, { semantic }).match(incoming('roll a die'))).kind).toBe('miss');
    }
  });

  it('explains a miss on a different model with the recording that has the same messages', async () => {
    const tape = [
      exchange({ offsetMs: 0, body: { ...body('Roll a die'), model: 'gpt-4o-mini' }, response: {} }),
      exchange({ offsetMs: 1, body: body('Something else entirely'), response: {} }),
    ];
    const out = await createReplayMatcher(tape).match(incoming('Roll a die'));
    expect(out.kind).toBe('miss');
    if (out.kind !== 'miss') return;
    expect(out.explanation).toContain('similarity: closest #');
    expect(out.candidates[0]?.exchange.id).toBe(tape[0]!.id);
    expect(out.candidates[0]?.differences).toContain('body.model: "gpt-4o-mini" vs "gpt-4o"');
  });
});
