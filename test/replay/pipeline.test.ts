import { describe, expect, it } from 'vitest';
import type { IncomingRequest } from '../../src/replay/matcher.js';
import { createReplayMatcher } from '../../src/replay/pipeline.js';
import { missCandidates, missError } from '../../src/replay/miss.js';
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

  it('gives a recording the similarity stage scored one score in the miss message: the one held against the threshold', async () => {
    const tape = [exchange({ offsetMs: 0, body: body('Please summarise my last three orders'), response: {} })];
    const out = await createReplayMatcher(tape, { semantic: { threshold: 0.99 } }).match(incoming('Please summarize my last three orders'));
    expect(out.kind).toBe('miss');
    if (out.kind !== 'miss') return;
    const scored = /similarity: closest #(\S+) scored ([\d.]+), below 0\.99/.exec(out.explanation);
    expect(scored?.[1]).toBe(tape[0]!.id);
    const message = missError({
      tape: 't',
      asked: 'POST /openai/v1/chat/completions',
      reason: out.explanation,
      onMiss: 'strict',
      closest: missCandidates(out.candidates),
      details: {},
    }).message;
    // Before: "scored 0.93, below 0.99 ... Closest: #000000 score 0.955": two scores for one recording.
    expect(message).toContain(`Closest: #${tape[0]!.id} score ${scored?.[2]} [`);
    expect(out.candidates[0]?.score).toBe(Number(scored?.[2]));
  });
});

describe('a miss report agrees with the exact key', () => {
  const rpc = (id: number, text: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text } } });
  const rpcIncoming = (json: unknown, query: [string, string][] = []): IncomingRequest => ({
    route: '/mcp',
    request: { method: 'POST', path: '/', query, body: { kind: 'json', json } },
  });

  for (const semantic of [false, undefined] as const) {
    const label = semantic === false ? 'exact only' : 'with the semantic stages';
    it(`leaves out the configured ignored fields and query parameters, not the default ones (${label})`, async () => {
      const recorded = exchange({ offsetMs: 0, body: { ...body('Roll a die'), temperature: 0, metadata: { run: 'a' } }, response: {} });
      const m = createReplayMatcher([recorded], { semantic, ignoreFields: ['metadata.run'], ignoreQuery: ['trace'] });
      const req = incoming('Roll a die');
      req.request.body = { kind: 'json', json: { ...body('Roll a die'), temperature: 1, metadata: { run: 'b' } } };
      req.request.query = [['trace', 'xyz']];
      const out = await m.match(req);
      expect(out.kind).toBe('miss');
      if (out.kind !== 'miss') return;
      expect(out.candidates[0]?.differences).toEqual(['body.temperature: 0 vs 1']);
    });
  }

  it(`shows a difference in a field the defaults ignore when the configuration does not (a JSON-RPC id)`, async () => {
    const recorded = exchange({ offsetMs: 0, route: '/mcp', path: '/', body: rpc(1, 'hi'), response: {} });
    const m = createReplayMatcher([recorded], { semantic: false, ignoreFields: [] });
    const out = await m.match(rpcIncoming(rpc(2, 'hi')));
    expect(out.kind).toBe('miss');
    if (out.kind !== 'miss') return;
    expect(out.candidates[0]?.differences).toEqual(['body.id: 1 vs 2']);
  });
});
