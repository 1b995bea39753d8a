import { describe, expect, it } from 'vitest';
import { diffTapes, divergenceAt } from '../../../src/inspect/diff/diff.js';
import { toSteps } from '../../../src/inspect/steps.js';
import { ars, arsBand } from '../../../src/inspect/diff/ars.js';
import type { ToolCallEntry } from '../../../src/inspect/diff/tool-sequence.js';
import type { Exchange, TapeHeader } from '../../../src/tape/schema.js';
import type { LoadedTape } from '../../../src/tape/tape-reader.js';
import { exchange } from '../exchanges.js';

function tape(exchanges: Exchange[], header: Partial<TapeHeader> = {}): LoadedTape {
  const h: TapeHeader = {
    type: 'header',
    format: 1,
    tapedeck: '0.1.0',
    name: 't',
    createdAt: '2026-01-01T00:00:00.000Z',
    mode: 'record',
    routes: [],
    ...header,
  };
  return { path: '/t.jsonl', name: h.name, header: h, exchanges, problems: [] };
}

/** An agent run: the model asks for get_weather, the agent runs it over MCP, the model answers. */
function run(
  opts: { model?: string; city?: string; result?: string; answer?: string; offset?: number; jsonrpcId?: number } = {},
): Exchange[] {
  const t = opts.offset ?? 0;
  const city = opts.city ?? 'Paris';
  return [
    exchange({
      offsetMs: t,
      durationMs: 100,
      llm: {
        model: opts.model ?? 'gpt-4o',
        params: { temperature: 0, tools: ['get_weather'] },
        usage: { inputTokens: 100, outputTokens: 10 },
        toolCalls: [{ id: `call_${t}`, name: 'get_weather', arguments: { city } }],
      },
    }),
    exchange({
      offsetMs: t + 120,
      durationMs: 30,
      mcp: {
        method: 'tools/call',
        jsonrpcId: opts.jsonrpcId ?? 1,
        toolName: 'get_weather',
        arguments: { city },
        result: { content: [{ type: 'text', text: opts.result ?? '21C' }] },
      },
    }),
    exchange({
      offsetMs: t + 160,
      durationMs: 90,
      llm: {
        model: opts.model ?? 'gpt-4o',
        params: { temperature: 0, tools: ['get_weather'] },
        usage: { inputTokens: 150, outputTokens: 20 },
        outputText: opts.answer ?? 'It is 21C in Paris.',
      },
    }),
  ];
}

describe('diffTapes', () => {
  it('a run against its exact replay is identical: ids, offsets, durations, JSON-RPC ids and match info are noise', () => {
    const original = run();
    const replay = run({ offset: 5000, jsonrpcId: 7 }).map((ex, i) => ({
      ...ex,
      id: `r${i}`,
      timing: { durationMs: 1 },
      match: { kind: 'exact' as const, source: original[i]!.id },
    }));
    const d = diffTapes(tape(original), tape(replay, { mode: 'replay', replayOf: { tape: 't', onMiss: 'strict' } }));
    expect(d).toEqual({
      identical: true,
      iterationsDelta: 0,
      toolSequenceDiff: [],
      firstDivergence: null,
      outputDiff: { equal: true, original: 'It is 21C in Paris.', replay: 'It is 21C in Paris.', similarity: 1, method: 'words' },
      tokensDelta: 0,
      tokensDeltaDetail: { input: 0, output: 0 },
      costDelta: 0,
      durationDeltaMs: 161 - 250, // wall time: last end minus first start
      score: 1,
      ars: {
        score: 1,
        band: 'excellent',
        outputSimilarity: 1,
        toolAccuracy: 1,
        originalTools: 1,
        usedTools: 1,
        newTools: 0,
        unusedTools: 0,
      },
      configChanges: [],
      steps: expect.any(Array) as unknown,
      unusedRecordings: 0,
      callAgreement: 1,
      removedCalls: [],
      addedCalls: [],
    });
  });

  it('a model change: config change from the exchanges and the header overrides, token and cost deltas, first divergence', () => {
    const b = run({ model: 'gpt-4.1', city: 'Paris, FR', answer: 'Paris is at 21 degrees.' });
    b[2]!.llm!.usage = { inputTokens: 150, outputTokens: 40 };
    const d = diffTapes(
      tape(run()),
      tape(b, {
        mode: 'replay',
        replayOf: { tape: 't', onMiss: 'strict', llm: 'live', overrides: { model: 'gpt-4.1', systemPrompt: 'Be brief.' } },
      }),
    );
    expect(d.identical).toBe(false);
    expect(d.configChanges).toEqual([
      { field: 'model', original: 'gpt-4o', replay: 'gpt-4.1' },
      { field: 'systemPrompt', original: null, replay: 'Be brief.' },
    ]);
    expect(d.firstDivergence).toEqual({
      step: 0,
      replayStep: 0,
      reason: 'different arguments for get_weather: original {"city":"Paris"}, replay {"city":"Paris, FR"}',
    });
    expect(d.toolSequenceDiff.map((e) => e.kind)).toEqual(['removed', 'added']);
    expect(d.tokensDelta).toBe(20);
    expect(d.tokensDeltaDetail).toEqual({ input: 0, output: 20 });
    // gpt-4o: 250 in at 2.50 + 30 out at 10; gpt-4.1: 250 in at 2.00 + 50 out at 8
    expect(d.costDelta).toBeCloseTo((250 * 2 + 50 * 8 - (250 * 2.5 + 30 * 10)) / 1e6, 9);
    expect(d.outputDiff.equal).toBe(false);
    expect(d.score).toBeCloseTo(0.5 * d.outputDiff.similarity + 0.5 * 0, 4);
  });

  it('a different tool result is the first divergence; an unknown model makes the cost delta null', () => {
    const d = diffTapes(tape(run()), tape(run({ model: 'my-finetune', result: '25C' })));
    expect(d.firstDivergence).toEqual({
      step: 1,
      replayStep: 1,
      reason: expect.stringMatching(/^different result of MCP tools\/call get_weather: original .*21C.*, replay .*25C/) as unknown,
    });
    expect(d.toolSequenceDiff).toEqual([]);
    expect(d.costDelta).toBeNull();
    expect(d.score).toBe(1);
    expect(d.identical).toBe(false);
  });

  it('a different final output, and a run that goes on longer', () => {
    const longer = [...run(), ...run({ offset: 1000, city: 'Lyon', answer: 'Lyon is 18C.' })];
    const d = diffTapes(tape(run()), tape(longer));
    expect(d.iterationsDelta).toBe(2);
    expect(d.firstDivergence).toEqual({
      step: null,
      replayStep: 3,
      reason: 'the original ended here; the replay went on with 3 more step(s), starting with LLM gpt-4o',
    });
    expect(d.toolSequenceDiff).toEqual([{ kind: 'added', toolName: 'get_weather', argsHash: expect.any(String) as unknown, atIndex: 1 }]);
    expect(d.outputDiff).toMatchObject({ equal: false, original: 'It is 21C in Paris.', replay: 'Lyon is 18C.' });
    const out = diffTapes(tape(run()), tape(run({ answer: 'It is 21C in Paris!' })));
    expect(out.firstDivergence?.reason).toBe('different output: original "It is 21C in Paris.", replay "It is 21C in Paris!"');
    expect(out.outputDiff.similarity).toBe(1);
  });

  it('a call the replay skipped is named as removed and lowers the score; the calls around it still pair', () => {
    const ask = (offsetMs: number, question: string): Exchange =>
      exchange({
        offsetMs,
        body: { model: 'gpt-4.1', messages: [{ role: 'user', content: question }] },
        llm: { model: 'gpt-4.1', usage: { inputTokens: 10, outputTokens: 5 }, outputText: `You asked: ${question}` },
      });
    const all = [ask(0, 'hello one'), ask(100, 'hello two'), ask(200, 'hello three')];
    const skipped = [ask(0, 'hello one'), ask(100, 'hello three')];
    const d = diffTapes(tape(all), tape(skipped));
    expect(d.identical).toBe(false);
    expect(d.removedCalls).toEqual([{ step: 1, call: 'LLM gpt-4.1', asked: '"hello two"' }]);
    expect(d.addedCalls).toEqual([]);
    expect(d.firstDivergence).toEqual({
      step: 1,
      replayStep: null,
      reason: 'removed: the replay never made LLM gpt-4.1 "hello two"',
      only: 'removed',
    });
    expect(divergenceAt(d.firstDivergence!, 'a', 'b')).toBe('step 1 in a (b never made it)');
    // The same final output and no tools: only the skipped call lowers the score.
    expect(d.callAgreement).toBeCloseTo(2 / 3, 4);
    expect(d.score).toBeCloseTo(0.5 + 0.5 * (2 / 3), 4);
    // "hello three" is compared with "hello three", not with "hello two".
    expect(d.steps.map((s) => [s.step, s.replayStep, s.outputSimilarity])).toEqual([
      [0, 0, 1],
      [1, null, null],
      [2, 1, 1],
    ]);
    // The other way round, the call is added.
    const more = diffTapes(tape(skipped), tape(all));
    expect(more.addedCalls).toEqual([{ step: 1, call: 'LLM gpt-4.1', asked: '"hello two"' }]);
    expect(more.score).toBeCloseTo(d.score, 4);
  });

  it('a tool the agent ran itself: its result reaches the model in the next request, and is compared there', () => {
    const local = (result: string, callId: string): Exchange[] => [
      exchange({ offsetMs: 0, llm: { model: 'gpt-4o', toolCalls: [{ id: callId, name: 'read_file', arguments: '{"path":"a.txt"}' }] } }),
      exchange({
        offsetMs: 50,
        body: {
          model: 'gpt-4o',
          messages: [
            { role: 'user', content: 'read a.txt' },
            { role: 'tool', tool_call_id: callId, content: result },
          ],
        },
        llm: { model: 'gpt-4o', outputText: 'ok' },
      }),
    ];
    expect(diffTapes(tape(local('hello', 'call_1')), tape(local('hello', 'call_other_id'))).identical).toBe(true);
    const d = diffTapes(tape(local('hello', 'call_1')), tape(local('goodbye', 'call_1')));
    expect(d.firstDivergence).toEqual({
      step: 1,
      replayStep: 1,
      reason: 'different result sent to the model (tool result 1): original "hello", replay "goodbye"',
    });
    expect(d.toolSequenceDiff).toEqual([]);
  });

  it("names the step where the runs part by tapedeck show's numbers, in each run, not by its place among the compared steps", () => {
    // The replay has two exchanges the diff does not compare before the call that differs (an MCP notification and
    // a plain HTTP call): the first divergence is step 1 of the original and step 3 of the replay.
    const noise = [
      exchange({ offsetMs: 110, mcp: { method: 'notifications/initialized', jsonrpcId: undefined } }),
      exchange({ offsetMs: 115, route: '/search', path: '/q' }),
    ];
    const b = run({ result: '25C' });
    const d = diffTapes(tape(run()), tape([b[0]!, ...noise, b[1]!, b[2]!]));
    expect(d.firstDivergence).toMatchObject({ step: 1, replayStep: 3 });
    const shown = toSteps([b[0]!, ...noise, b[1]!, b[2]!])[3]!;
    expect(shown.exchange.mcp?.toolName).toBe('get_weather');
    expect(divergenceAt(d.firstDivergence!, 'rec', 'rep')).toBe('step 1 in rec, step 3 in rep');
    expect(divergenceAt({ step: 2, replayStep: 2, reason: '' }, 'rec', 'rep')).toBe('step 2');
    expect(divergenceAt({ step: 4, replayStep: null, reason: '' }, 'rec', 'rep')).toBe('step 4 in rec (rep had ended)');
  });

  it('an upstream error is named as the cause, before its effects (no tool call) are taken for the model changing its mind', () => {
    const b = run();
    b[0] = exchange({
      offsetMs: 0,
      status: 429,
      response: { error: { message: 'Rate limit reached for gpt-4o', type: 'requests', code: 'rate_limit_exceeded' } },
      llm: { model: 'gpt-4o', errorType: 'requests' },
      match: { kind: 'live', reason: 'forwarded' },
    });
    const d = diffTapes(tape(run()), tape(b));
    expect(d.firstDivergence).toEqual({
      step: 0,
      replayStep: 0,
      reason: "the replay's LLM gpt-4o failed upstream: HTTP 429 rate_limit_exceeded: Rate limit reached for gpt-4o",
    });
    const both = diffTapes(tape(b), tape(b.map((ex, i) => (i === 0 ? { ...ex, response: { status: 500, headers: {} } } : ex))));
    expect(both.firstDivergence?.reason).toBe(
      'LLM gpt-4o failed upstream differently: original HTTP 429 rate_limit_exceeded: Rate limit reached for gpt-4o, replay HTTP 500 requests',
    );
  });

  it('a replay miss is a different result', () => {
    const b = run();
    b[1] = {
      ...b[1]!,
      mcp: { ...b[1]!.mcp!, result: undefined },
      match: { kind: 'miss', reason: 'no recorded call' },
      response: { status: 404, headers: {} },
    };
    const d = diffTapes(tape(run()), tape(b));
    expect(d.firstDivergence?.reason).toMatch(
      /^different result of MCP tools\/call get_weather: original .*, replay miss: no recorded call$/,
    );
  });
});

describe("Kurral's ARS and the per-call deltas", () => {
  it('follows the documented example: 4 of 5 tools used, 1 new, 1 unused, output 0.95 -> 0.845 good', () => {
    const t = (names: string[]): ToolCallEntry[] =>
      names.map((toolName, index) => ({ toolName, argsHash: '0', arguments: '{}', index }) as unknown as ToolCallEntry);
    const r = ars(0.95, t(['a', 'b', 'c', 'd', 'e']), t(['a', 'b', 'c', 'd', 'f']));
    expect(r).toEqual({
      score: 0.845,
      band: 'good',
      outputSimilarity: 0.95,
      toolAccuracy: 0.6,
      originalTools: 5,
      usedTools: 4,
      newTools: 1,
      unusedTools: 1,
    });
    expect([0.95, 0.7, 0.5, 0.49].map(arsBand)).toEqual(['excellent', 'good', 'moderate', 'poor']);
  });

  it('pairs LLM calls by position, a call only one run made compared against nothing', () => {
    const b = run({ model: 'gpt-4.1', answer: 'Paris is at 21 degrees.' });
    b[2]!.llm!.usage = { inputTokens: 150, outputTokens: 40 };
    const d = diffTapes(tape(run()), tape(b.slice(0, 2).concat(b.slice(2))));
    expect(d.steps.map((s) => [s.call, s.original, s.replay, s.tokensDelta])).toEqual([
      [0, 'gpt-4o', 'gpt-4.1', 0],
      [1, 'gpt-4o', 'gpt-4.1', 20],
    ]);
    expect(d.steps[1]!.outputSimilarity).toBeLessThan(1);
    expect(d.unusedRecordings).toBeNull(); // not a replay of the first tape
    const shorter = diffTapes(tape(run()), tape(run().slice(0, 1)));
    expect(shorter.steps[1]).toMatchObject({ call: 1, original: 'gpt-4o', replay: null, outputSimilarity: null });
  });
});
