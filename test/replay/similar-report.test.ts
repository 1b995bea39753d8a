/**
 * What a replay served by similarity, read back from the replay tape: each answer with its stage, score, what
 * differed and what was set aside (what `replay --explain` prints), from the reasons the matcher writes.
 */
import { describe, expect, it } from 'vitest';
import { createReplayMatcher } from '../../src/replay/pipeline.js';
import { setAsideOf, similarServeLines, similarServes } from '../../src/replay/similar-report.js';
import type { IncomingRequest } from '../../src/replay/matcher.js';
import type { Exchange } from '../../src/tape/schema.js';
import { exchange } from '../inspect/exchanges.js';

const chat = (system: string, text: string, extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o',
  messages: [
    { role: 'system', content: system },
    { role: 'user', content: text },
  ],
  ...extra,
});
const incoming = (body: unknown): IncomingRequest => ({
  route: '/openai',
  request: { method: 'POST', path: '/v1/chat/completions', query: [], body: { kind: 'json', json: body } },
});

/** The replay tape's record of a match, as the HTTP transport writes it. */
async function replayed(recorded: unknown[], asked: unknown[]): Promise<Exchange[]> {
  const tape = recorded.map((body, i) => exchange({ offsetMs: i, body, response: { ok: i } }));
  const matcher = createReplayMatcher(tape);
  const out: Exchange[] = [];
  for (const [i, body] of asked.entries()) {
    const o = await matcher.match(incoming(body));
    out.push(
      exchange({
        offsetMs: i,
        body,
        response: {},
        match:
          o.kind === 'miss'
            ? { kind: 'miss', reason: o.explanation }
            : { kind: o.kind, source: o.exchange.id, stage: o.stage, score: o.score, reason: o.explanation },
      }),
    );
  }
  return out;
}

describe('similarity-served answers, read back from a replay tape', () => {
  it('lists each with its stage, score, what differed and what was set aside; exact answers and misses are not listed', async () => {
    const system = 'You help with travel.';
    const tape = await replayed(
      [chat(`Current time: 2026-11-22T18:35:31Z. ${system}`, 'Please summarise my trips to the city centre this year')],
      [
        chat(`Current time: 2026-11-22T18:35:31Z. ${system}`, 'Please summarise my trips to the city centre this year'),
        chat(`Current time: 2026-11-23T09:01:02Z. ${system}`, 'please summarise my trips to the city centre this year', { user: 'bob' }),
        chat(`Current time: 2026-11-22T18:35:31Z. ${system}`, 'Summarize my trips to the city center this year'),
        chat(`Current time: 2026-11-22T18:35:31Z. ${system}`, 'Please summarise my trips to the city centre next year'),
      ],
    );
    const serves = similarServes(tape);
    expect(serves.map((s) => [s.id, s.stage])).toEqual([
      [tape[1]!.id, 'normalised'],
      [tape[2]!.id, 'similarity'],
    ]);
    expect(serves[0]!.setAside).toEqual([
      'a clock at messages[0].content (system prompt): "2026-11-23T09:01:02Z" (recorded "2026-11-22T18:35:31Z")',
      '`user`',
    ]);
    expect(serves[1]!.setAside).toEqual([]);
    const lines = similarServeLines(serves);
    expect(lines[0]).toBe('2 answer(s) served by similarity:');
    expect(lines).toContain('      set aside: `user`');
    expect(lines.find((l) => l.includes('differed:'))).toBe(
      '      differed: messages[1].content 0.88: "summarise" / "summarize", "please" dropped, "centre" / "center"',
    );
  });

  it('reads the set-aside part of a reason the transport added to (a reshaped stream)', () => {
    expect(setAsideOf('same request once ...; set aside: `user`; `metadata` (recorded streamed, served in the shape asked for)')).toEqual([
      '`user`',
      '`metadata`',
    ]);
    expect(setAsideOf('exact key match (answer 1 of 1)')).toEqual([]);
  });

  it('says nothing for a replay with no similarity-served answer', () => {
    expect(similarServeLines([])).toEqual([]);
  });
});
