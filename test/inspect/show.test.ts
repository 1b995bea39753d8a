import { createDirStore } from '../../src/tape/stores/dir-store.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { showCommand } from '../../src/cli/show.js';
import { debrief, inspectTape, stepState } from '../../src/index.js';
import { GOAL, RATIONALE, THINKING, recordAgentTapes } from './record-agent.js';
import { runCommand } from '../helpers/run-command.js';

let dir: string;
const show = (args: string[], opts?: Parameters<typeof runCommand>[2]) => runCommand(showCommand, [...args, '--dir', dir], opts);
const json = async (args: string[]): Promise<any> => JSON.parse((await show([...args, '--json'])).stdout); // eslint-disable-line @typescript-eslint/no-explicit-any

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-show-'));
  await recordAgentTapes(dir);
}, 30_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tapedeck show on tapes recorded through the proxy', () => {
  it('--json gives the timeline, one row per step', async () => {
    const t = await json(['agent']);
    expect(t.name).toBe('agent');
    expect(t.steps).toHaveLength(6);
    expect(t.steps.map((s: { kind: string; route: string; target: string }) => `${s.kind} ${s.route} ${s.target}`)).toEqual([
      'LLM /openai gpt-4o-mini',
      'LLM /openai gpt-4o-mini',
      'LLM /openai gpt-4o-mini',
      'LLM /openai gpt-4o-mini',
      'LLM /anthropic claude-sonnet-4-6',
      'LLM /anthropic claude-sonnet-4-6',
    ]);
    const first = t.steps[0];
    expect(first.index).toBe(0);
    expect(first.args).toBe(GOAL);
    expect(first.result).toBe(`<rationale>${RATIONALE}</rationale> -> get_weather({"city":"Paris"})`);
    expect(first.tokens).toEqual({ input: 20, output: 10, total: 30 });
    expect(first.status).toBe(200);
    expect(first.match).toBeNull();
    expect(first.error).toBeNull();
    expect(t.steps[1].result).toBe('lookup_city({"name":"Paris"})');
    expect(t.steps[2].result).toBe('Paris: 21°C.');
    // The failing call: flagged, its huge argument shortened with its size.
    expect(t.steps[3].status).toBe(400);
    expect(t.steps[3].error).not.toBeNull();
    expect(t.steps[3].args).toMatch(/^break lorem ipsum .*\.\.\. \(70\.3 KB\)$/);
    expect(t.steps[3].args.length).toBeLessThanOrEqual(200);
    expect(t.steps[4].result).toBe('Let me check the clock. -> get_time({"tz":"Europe/Paris"})');
    expect(t.steps[5].tokens).toEqual({ input: 60, output: 12, total: 72 });
    for (let i = 1; i < 6; i++) expect(t.steps[i].offsetMs).toBeGreaterThanOrEqual(t.steps[i - 1].offsetMs);
  });

  it('shows match kinds on a replay tape', async () => {
    const t = await json(['agent-replay']);
    expect(t.header.replayOf.tape).toBe('agent');
    expect(t.steps.map((s: { match: string }) => s.match)).toEqual(['exact', 'miss']);
    expect(t.steps[0].error).toBeNull();
    expect(t.steps[1].error).toMatch(/^miss: /);
  });

  it('prints a readable timeline: errors stand out, narrow terminals fit, colour only on a TTY', async () => {
    const wide = await show(['agent']);
    const lines = wide.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^agent · record · created .* · 6 steps$/);
    expect(lines.filter((l) => l.startsWith('!'))).toHaveLength(1);
    expect(lines.find((l) => l.startsWith('!'))).toMatch(/^!3 .*LLM +\/openai +gpt-4o-mini .*400$/);
    expect(wide.stdout).toContain('(70.3 KB)');
    expect(wide.stdout).toContain('20→10tok');
    expect(wide.stdout).not.toContain('\u001b[');
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(100);

    const narrow = await show(['agent'], { columns: 50, tty: true, env: { NO_COLOR: '1' } });
    for (const l of narrow.stdout.trimEnd().split('\n')) expect(l.length).toBeLessThanOrEqual(50);
    expect(narrow.stdout).not.toContain('\u001b[');
    const colour = await show(['agent-replay'], { tty: true, columns: 120 });
    expect(colour.stdout).toContain('\u001b[31m!1');
    expect(colour.stdout).toMatch(/exact/);
  });

  it('--step N gives the conversation so far, the tool results so far and the exchange; negative counts from the end', async () => {
    const s = await json(['agent', '--step=-1']);
    expect(s.index).toBe(5);
    expect(s.total).toBe(6);
    expect(s.conversationFrom).toBe(5);
    expect(s.conversation.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(s.conversation[1]).toEqual({
      role: 'assistant',
      text: 'Let me check the clock.',
      thinking: THINKING,
      toolCalls: [{ id: 'toolu_1', name: 'get_time', arguments: { tz: 'Europe/Paris' } }],
    });
    expect(s.conversation[3].text).toBe('It is 14:00 in Paris, and 21°C.');
    expect(s.toolResults).toEqual([{ source: 'conversation', step: 5, name: 'get_time', toolCallId: 'toolu_1', result: '14:00' }]);
    expect(s.exchange.request.path).toBe('/v1/messages');
    expect(s.step.target).toBe('claude-sonnet-4-6');

    const second = await json(['agent', '--step', '2']);
    expect(second.toolResults.map((r: { name: string; result: string }) => `${r.name}=${r.result}`)).toEqual([
      'get_weather={"temp_c":21}',
      'lookup_city={"country":"FR"}',
    ]);

    const human = await show(['agent', '--step', '4']);
    expect(human.stdout).toContain('step 4 of 6');
    expect(human.stdout).toContain(`[assistant] (thinking) ${THINKING}`);
    expect(human.stdout).toContain('→ get_time({"tz":"Europe/Paris"}) id=toolu_1');
    expect(human.stdout).toContain('"path": "/v1/messages"');

    await expect(show(['agent', '--step', '6'])).rejects.toMatchObject({ code: 'BAD_ARGS' });
    await expect(show(['agent', '--step', 'x'])).rejects.toMatchObject({ code: 'BAD_ARGS' });
  });

  it('--errors jumps to the failing steps, with huge bodies shortened in the human output', async () => {
    const e = await json(['agent', '--errors']);
    expect(e.map((s: { index: number }) => s.index)).toEqual([3]);
    expect(e[0].step.status).toBe(400);
    const human = await show(['agent', '--errors']);
    expect(human.stdout).toMatch(/^step 3 of 6/);
    expect(human.stdout).toMatch(/^! /m);
    expect(human.stdout).toContain('KB)');
    expect(human.stdout.length).toBeLessThan(20_000);
    const none = await show(['agent-replay', '--errors', '--step', '0']).catch((err: Error) => err);
    expect(none).toMatchObject({ code: 'BAD_ARGS' });
  });

  it('--debrief gives the goal, each tool call with the reason the model gave (or says none), assumptions and the ending', async () => {
    const d = await json(['agent', '--debrief']);
    expect(d.goal).toBe(GOAL);
    expect(d.decisions.map((c: { tool: string; step: number }) => `${c.step}:${c.tool}`)).toEqual([
      '0:get_weather',
      '1:lookup_city',
      '4:get_time',
    ]);
    expect(d.decisions[0].reasons).toEqual([{ source: 'rationale', text: RATIONALE }]);
    expect(d.decisions[0].result).toEqual({ step: 1, value: '{"temp_c":21}' });
    expect(d.decisions[1].reasons).toEqual([]);
    expect(d.decisions[1].result).toEqual({ step: 2, value: '{"country":"FR"}' });
    expect(d.decisions[2].reasons).toEqual([
      { source: 'text-before-call', text: 'Let me check the clock.' },
      { source: 'thinking', text: THINKING },
    ]);
    expect(d.decisions[2].result).toEqual({ step: 5, value: '14:00' });
    expect(d.assumptions).toEqual([
      { step: 4, text: THINKING, assumption: 'the user means Paris, France', because: 'no country was given' },
    ]);
    expect(d.ending).toEqual({
      step: 5,
      stopReason: 'end_turn',
      finalAnswer: 'It is 14:00 in Paris, and 21°C.',
      error: null,
      verdict: 'success',
    });
    expect(d.totals).toMatchObject({ steps: 6, llmCalls: 6, toolCalls: 3, inputTokens: 200, outputTokens: 51, errors: 1 });

    const human = (await show(['agent', '--debrief'])).stdout;
    expect(human).toContain(`goal: ${GOAL}`);
    expect(human).toContain(`why (rationale): ${RATIONALE}`);
    expect(human).toMatch(/2\. lookup_city\(\{"name":"Paris"\}\).*\n\s+why: the model stated no reason/);
    expect(human).toContain(`why (thinking): ${THINKING}`);
    expect(human).toContain('stop reason: end_turn');
    expect(human).toContain('final answer: It is 14:00 in Paris, and 21°C.');
  });

  it('the library API gives the same: load, steps, a step, the debrief', async () => {
    const { steps } = await inspectTape(createDirStore(dir), 'agent');
    expect(steps).toHaveLength(6);
    expect(stepState(steps, -1).index).toBe(5);
    expect(debrief(steps).goal).toBe(GOAL);
  });
});
