/**
 * `tapedeck diff` end to end: an agent (OpenAI SDK + MCP SDK) runs through the real proxy against a scripted LLM
 * upstream and the real server-everything MCP server. One recording per model (the scripted model plans other tool
 * calls on gpt-4.1), plus an exact offline replay of the first; then the CLI compares them, in-process
 * (test/helpers/cli-in-process.ts: the same dispatch, flags and error lines) but for one run of the real process
 * (a gate failing: its exit status).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { createMcpResponder } from '../../src/transports/mcp/responder.js';
import { startProxy } from '../../src/front/server.js';
import { createTapeWriter } from '../../src/tape/stores/tape-writer.js';
import { loadTape } from '../../src/tape/tape-reader.js';
import { runCli } from '../helpers/cli.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { startEverything, type EverythingServer } from '../helpers/everything-server.js';

type Call = { name: string; arguments: Record<string, unknown> };
const echo = (message: string): Call => ({ name: 'echo', arguments: { message } });
const sum: Call = { name: 'get-sum', arguments: { a: 1, b: 2 } };
/** gpt-4o-mini's plan, and gpt-4.1's: get-sum moved before the first echo, echo "d" removed, echo "e" added. */
const PLANS: Record<string, { calls: Call[]; usage: [number, number] }> = {
  'gpt-4o-mini': { calls: [echo('a'), sum, echo('c'), echo('d')], usage: [50, 10] },
  'gpt-4.1': { calls: [sum, echo('a'), echo('c'), echo('e')], usage: [60, 15] },
};

const log = createLogger('silent');
let dir: string;
let llm: ScriptedUpstream;
let mcp: EverythingServer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-diff-'));
  llm = await startScriptedUpstream((req) => {
    const body = req.body as { model: string; messages: { role: string; content: string }[] };
    const plan = PLANS[body.model] ?? { calls: [], usage: [1, 1] as [number, number] };
    const results = body.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    const next = plan.calls[results.length];
    if (next)
      return openaiChat({
        model: body.model,
        toolCalls: [{ id: `call_${results.length}`, name: next.name, arguments: JSON.stringify(next.arguments) }],
        usage: plan.usage,
      });
    return openaiChat({ model: body.model, content: `Done. Results: ${results.join('; ')}`, usage: plan.usage });
  });
  mcp = await startEverything('streamableHttp');
  const routes = [
    { prefix: '/openai', upstream: llm.url },
    { prefix: '/mcp', upstream: `${mcp.url}/mcp` },
  ];
  for (const [tape, model] of [
    ['base', 'gpt-4o-mini'],
    ['other-model', 'gpt-4.1'],
  ] as const) {
    const rec = await startProxy({ mode: 'record', tape, dir, port: 0, routes, log });
    await agent(rec.url, model);
    await rec.close();
  }
  const rep = await startProxy({
    mode: 'replay',
    tape: 'base',
    dir,
    port: 0,
    routes: [],
    saveAs: 'base-replay',
    responders: [createMcpResponder()],
    log,
  });
  await agent(rep.url, 'gpt-4o-mini');
  await rep.close();
}, 60_000);

afterAll(async () => {
  await llm?.close();
  await mcp?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A tool loop: ask the model, run every tool call it asks for over MCP, until it answers in text. */
async function agent(url: string, model: string): Promise<string> {
  const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${url}/openai/v1`, maxRetries: 0 });
  const client = new Client({ name: 'agent', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Run the plan.' }];
  try {
    for (;;) {
      const res = await openai.chat.completions.create({ model, temperature: 0, messages });
      const msg = res.choices[0]!.message;
      if (!msg.tool_calls?.length) return msg.content ?? '';
      messages.push(msg);
      for (const call of msg.tool_calls) {
        if (call.type !== 'function') continue;
        const result = await client.callTool({
          name: call.function.name,
          arguments: JSON.parse(call.function.arguments) as Record<string, unknown>,
        });
        messages.push({ role: 'tool', tool_call_id: call.id, content: (result.content as { text: string }[])[0]!.text });
      }
    }
  } finally {
    await client.close();
  }
}

const DIFF_KEYS = [
  'addedCalls',
  'ars',
  'callAgreement',
  'configChanges',
  'costDelta',
  'durationDeltaMs',
  'firstDivergence',
  'identical',
  'iterationsDelta',
  'outputDiff',
  'removedCalls',
  'score',
  'steps',
  'tokensDelta',
  'tokensDeltaDetail',
  'toolSequenceDiff',
  'unusedRecordings',
];

describe('tapedeck diff', () => {
  it('a run against its exact offline replay is identical, and --fail-on divergence passes', async () => {
    const { code, stdout, stderr } = await runCliInProcess([
      'diff',
      'base',
      'base-replay',
      '--dir',
      dir,
      '--json',
      '--fail-on',
      'divergence',
      '--min-score',
      '1',
    ]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const d = JSON.parse(stdout) as Record<string, unknown>;
    expect(Object.keys(d).sort()).toEqual(DIFF_KEYS);
    expect(d).toMatchObject({
      identical: true,
      iterationsDelta: 0,
      toolSequenceDiff: [],
      firstDivergence: null,
      tokensDelta: 0,
      tokensDeltaDetail: { input: 0, output: 0 },
      costDelta: 0,
      score: 1,
      ars: { score: 1, band: 'excellent', outputSimilarity: 1, toolAccuracy: 1 },
      unusedRecordings: 0,
      configChanges: [],
    });
    expect(d.outputDiff).toEqual({
      equal: true,
      original: 'Done. Results: Echo: a; The sum of 1 and 2 is 3.; Echo: c; Echo: d',
      replay: 'Done. Results: Echo: a; The sum of 1 and 2 is 3.; Echo: c; Echo: d',
      similarity: 1,
      method: 'words',
    });
  }, 30_000);

  it('another model: the model change, exactly three tool edits, first divergence, token and cost deltas; gates exit 1', async () => {
    const { code, stdout, stderr } = await runCli(['diff', 'base', 'other-model', '--dir', dir, '--json', '--fail-on', 'divergence']);
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^tapedeck diff: other-model diverges from base at step \d+: /);
    const d = JSON.parse(stdout) as {
      [k: string]: unknown;
      toolSequenceDiff: { kind: string; toolName: string }[];
      configChanges: { field: string }[];
      score: number;
    };
    expect(Object.keys(d).sort()).toEqual(DIFF_KEYS);
    expect(d.identical).toBe(false);
    expect(d.iterationsDelta).toBe(0);
    expect(d.toolSequenceDiff).toHaveLength(3);
    expect(d.toolSequenceDiff.map((e) => e.kind).sort()).toEqual(['added', 'removed', 'reordered']);
    expect(d.toolSequenceDiff.find((e) => e.kind === 'removed')).toMatchObject({ toolName: 'echo', atIndex: 3 });
    expect(d.toolSequenceDiff.find((e) => e.kind === 'added')).toMatchObject({ toolName: 'echo', atIndex: 3 });
    expect(d.toolSequenceDiff.find((e) => e.kind === 'reordered')).toMatchObject({
      toolName: 'echo',
      argsHash: expect.stringMatching(/^[0-9a-f]{16}$/) as unknown,
      from: 0,
      to: 1,
    });
    expect(d.configChanges).toContainEqual({ field: 'model', original: 'gpt-4o-mini', replay: 'gpt-4.1' });
    // 5 LLM calls each: (50, 10) per call on gpt-4o-mini, (60, 15) on gpt-4.1
    expect(d.tokensDelta).toBe(75);
    expect(d.tokensDeltaDetail).toEqual({ input: 50, output: 25 });
    // Per LLM call: 5 calls each side, each 75 - 60 = +15 tokens.
    const steps = d.steps as { tokensDelta: number; original: string; replay: string }[];
    expect(steps.map((s) => s.tokensDelta)).toEqual([15, 15, 15, 15, 15]);
    expect(steps[0]).toMatchObject({ original: 'gpt-4o-mini', replay: 'gpt-4.1' });
    expect(d.costDelta).toBeCloseTo((5 * (60 * 2 + 15 * 8) - 5 * (50 * 0.15 + 10 * 0.6)) / 1e6, 9);
    expect(d.firstDivergence).toMatchObject({
      step: expect.any(Number) as unknown,
      reason: expect.stringMatching(/^different tool: the model asked for \[echo\] in the original, \[get-sum\] in the replay$/) as unknown,
    });
    expect(d.score).toBeGreaterThan(0.5);
    expect(d.score).toBeLessThan(1);

    expect((await runCliInProcess(['diff', 'base', 'other-model', '--dir', dir, '--min-score', '0.99'])).code).toBe(1);
    expect((await runCliInProcess(['diff', 'base', 'other-model', '--dir', dir, '--min-score', '0.1'])).code).toBe(0);
  }, 30_000);

  it('reads the overrides a modified replay declares in its header', async () => {
    // The tape a `replay --llm live --model gpt-4.1 --system-prompt ...` run writes: a replay tape whose header
    // says what was overridden, holding the exchanges of the live run.
    const live = await loadTape(dir, 'other-model');
    const writer = await createTapeWriter({
      dir,
      name: 'base-live',
      header: {
        mode: 'replay',
        routes: live.header.routes,
        replayOf: { tape: 'base', onMiss: 'strict', llm: 'live', overrides: { model: 'gpt-4.1', systemPrompt: 'Be brief.' } },
      },
    });
    for (const { type: _type, id: _id, seq: _seq, ...ex } of live.exchanges) await writer.append({ ...ex, match: { kind: 'live' } });
    await writer.close();
    const { code, stdout } = await runCliInProcess(['diff', 'base', 'base-live', '--dir', dir, '--json']);
    expect(code).toBe(0);
    const d = JSON.parse(stdout) as { configChanges: unknown[]; toolSequenceDiff: unknown[] };
    expect(d.configChanges).toEqual([
      { field: 'model', original: 'gpt-4o-mini', replay: 'gpt-4.1' },
      { field: 'systemPrompt', original: null, replay: 'Be brief.' },
    ]);
    expect(d.toolSequenceDiff).toHaveLength(3);
  }, 30_000);

  it('prints a side-by-side summary for people', async () => {
    const { code, stdout } = await runCliInProcess(['diff', 'base', 'other-model', '--dir', dir]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^base → other-model {2}differs {2}score 0\.\d\d {2}ARS 0\.\d\d \((excellent|good|moderate|poor)\)$/m);
    expect(stdout).toContain('model: gpt-4o-mini → gpt-4.1');
    // the LCS keeps get-sum, echo "c": echo "a" is the call that moved
    expect(stdout).toMatch(/^ {2}0 {3}~ echo\(\{"message":"a"\}\) + get-sum\(\{"a":1,"b":2\}\)$/m);
    expect(stdout).toMatch(/^ {2}1 {5}get-sum\(\{"a":1,"b":2\}\) +~ echo\(\{"message":"a"\}\)$/m);
    expect(stdout).toMatch(/^ {2}~ reordered echo \(args [0-9a-f]{16}\): 0 → 1$/m);
    expect(stdout).toMatch(/^ {2}3 {3}- echo\(\{"message":"d"\}\) +\+ echo\(\{"message":"e"\}\)$/m);
    expect(stdout).toMatch(/^ {2}- removed echo \(args [0-9a-f]{16}\) at 3 in base$/m);
    expect(stdout).toMatch(
      /^first divergence {2}step 3\n {2}different tool: the model asked for \[echo\] in the original, \[get-sum\] in the replay$/m,
    );
    expect(stdout).toMatch(/^final output {2}differs \(similarity 0\.\d\d, words\)$/m);
    // call 0 is the LLM call tapedeck show numbers step 3 on both tapes (after the MCP handshake)
    expect(stdout).toMatch(/^ {2}call step original +replay +output +tokens +cost +duration$/m);
    expect(stdout).toMatch(/^ {2}0 {4}3 {4}gpt-4o-mini +gpt-4\.1 +1\.00 +\+15 +\+\$0\.\d+ +\S+$/m);
    expect(stdout).toMatch(
      /^ARS {2}0\.\d\d (good|moderate) = 0\.7 × output 0\.\d\d \+ 0\.3 × tool accuracy 1\.00 \(2\/2 tools used, 0 new, 0 unused\)$/m,
    );
    expect(stdout).toMatch(/LLM calls 0 · tokens \+75 \(in \+50, out \+25\) · cost \+\$0\.\d+ · duration/);
    expect(stdout).not.toContain('\u001b[');
    for (const line of stdout.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(100);
  }, 30_000);

  it('--markdown: the verdict first, the table, details folded; --min-ars gates on the regression score', async () => {
    const same = await runCliInProcess(['diff', 'base', 'base-replay', '--dir', dir, '--markdown', '--min-ars', '1']);
    expect(same.code).toBe(0);
    expect(same.stdout.split('\n')[0]).toBe('### ✅ tapedeck diff `base` → `base-replay`: identical, score 1.00, ARS 1.00 (excellent)');
    expect(same.stdout).toContain('**First divergence:** none, the runs match step for step.');

    const other = await runCliInProcess(['diff', 'base', 'other-model', '--dir', dir, '--markdown', '--min-ars', '0.99']);
    expect(other.code).toBe(1);
    expect(other.stderr.trim()).toMatch(/^tapedeck diff: ARS 0\.\d+ is below --min-ars 0\.99$/);
    const lines = other.stdout.split('\n');
    expect(lines[0]).toMatch(/^### ❌ tapedeck diff `base` → `other-model`: differs, score 0\.\d\d, ARS 0\.\d\d \((good|moderate)\)$/);
    expect(lines[2]).toMatch(/^\*\*Fails:\*\* ARS 0\.\d+ is below --min-ars 0\.99$/);
    expect(other.stdout).toContain('|  | base | other-model | change |\n| --- | ---: | ---: | ---: |\n| LLM calls | 5 | 5 | 0 |');
    expect(other.stdout).toMatch(/^\| tool calls \| 4 \| 4 \| 3 edit\(s\) \|$/m);
    expect(other.stdout).toMatch(/^\| tokens \| 300 \| 375 \| \+75 \|$/m);
    expect(other.stdout).toMatch(/^\*\*First divergence\*\* at step 3: different tool: the model asked for \[echo\] in the original/m);
    // details folded, each opened and closed
    expect(other.stdout.match(/^<details>$/gm)?.length).toBeGreaterThanOrEqual(4);
    expect(other.stdout.match(/^<details>$/gm)?.length).toBe(other.stdout.match(/^<\/details>$/gm)?.length);
    expect(other.stdout).toContain('<summary>configuration (1 change(s))</summary>');
    expect(other.stdout).toContain('| model | gpt-4o-mini | gpt-4.1 |');
    expect(other.stdout).toMatch(/^\| 0 \| echo\(\{"message":"a"\}\) \| get-sum\(\{"a":1,"b":2\}\) \|$/m);
    expect(other.stdout).not.toContain('\u001b[');
    // every table row has as many cells as its header
    for (const block of other.stdout.split(/\n(?!\|)/)) {
      const rows = block.split('\n').filter((l) => l.startsWith('|'));
      const cells = (l: string): number => l.replace(/\\\|/g, '').split('|').length;
      for (const row of rows) expect(cells(row)).toBe(cells(rows[0]!));
    }

    expect((await runCliInProcess(['diff', 'base', 'other-model', '--dir', dir, '--min-ars', '0.1'])).code).toBe(0);
    const both = await runCliInProcess(['diff', 'base', 'other-model', '--dir', dir, '--markdown', '--json']);
    expect(both.code).toBe(2);
    expect(both.stderr.trim()).toBe('tapedeck diff: --json and --markdown: pick one');
    const bad = await runCliInProcess(['diff', 'base', 'other-model', '--dir', dir, '--min-ars', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe('tapedeck diff: --min-ars needs a number from 0 to 1, got "x"');
  });

  it('bad arguments exit 2 with one line; a missing tape exits 1 with one line', async () => {
    const one = await runCliInProcess(['diff', 'base', '--dir', dir]);
    expect(one.code).toBe(2);
    expect(one.stderr.trim()).toMatch(/^tapedeck diff: usage: tapedeck diff A B/);
    const score = await runCliInProcess(['diff', 'base', 'base-replay', '--dir', dir, '--min-score', '2']);
    expect(score.code).toBe(2);
    expect(score.stderr.trim()).toBe('tapedeck diff: --min-score needs a number from 0 to 1, got "2"');
    const flag = await runCliInProcess(['diff', 'base', 'base-replay', '--dir', dir, '--nope']);
    expect(flag.code).toBe(2);
    const missing = await runCliInProcess(['diff', 'base', 'nope', '--dir', dir]);
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim()).toMatch(/^tapedeck diff: no tape "nope" in .*\(tapedeck list shows them\)$/);
  }, 30_000);
});
