/**
 * Modified replay end to end, through the real CLI: record an agent (OpenAI SDK + MCP SDK client against the real
 * server-everything), then replay it with `--llm live` and overrides against a scripted upstream that answers
 * differently per model, while the MCP calls are answered from the tape (and an unrecorded side effect is blocked).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTape } from '../../src/tape/tape-reader.js';
import { toSteps } from '../../src/inspect/steps.js';
import { runCli, spawnCli, waitForListening } from '../helpers/cli.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { startEverything, type EverythingServer } from '../helpers/everything-server.js';

let dir: string;
let llm: ScriptedUpstream;
let mcp: EverythingServer;

interface Served {
  url: string;
  stderr: () => string;
  stop: () => Promise<void>;
}

async function serve(args: string[]): Promise<Served> {
  const child = spawnCli([...args, '--dir', dir, '--port', '0']);
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await waitForListening(child);
  return { url, stderr: () => stderr, stop: () => new Promise((resolve) => (child.once('exit', () => resolve()), child.kill('SIGTERM'))) };
}

/** The agent: ask the model, run the tool it picks over MCP, give the model the result, return its answer. */
async function agent(url: string): Promise<{ args: unknown; tool: string; answer: string | null }> {
  const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${url}/openai/v1`, maxRetries: 0 });
  const client = new Client({ name: 'agent', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp/everything`)));
  try {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are a careful assistant.' },
      { role: 'user', content: 'Echo a greeting' },
    ];
    const first = await openai.chat.completions.create({ model: 'gpt-4o-mini', temperature: 0.2, messages });
    const call = first.choices[0]!.message.tool_calls![0]!;
    if (call.type !== 'function') throw new Error('expected a function call');
    const args = JSON.parse(call.function.arguments) as Record<string, unknown>;
    const result = await client.callTool({ name: call.function.name, arguments: args });
    const tool = (result.content as { text: string }[])[0]!.text;
    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: tool });
    const second = await openai.chat.completions.create({ model: 'gpt-4o-mini', temperature: 0.2, messages });
    return { args, tool, answer: second.choices[0]!.message.content };
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-modified-'));
  // Answers per model: the other model words its tool call differently and uses more tokens.
  llm = await startScriptedUpstream((req) => {
    const body = req.body as { model: string; messages: { role: string; content: string }[] };
    const other = body.model !== 'gpt-4o-mini';
    const tool = body.messages.find((m) => m.role === 'tool');
    if (tool)
      return openaiChat({
        model: body.model,
        content: `${other ? 'Other' : 'Mini'} says: ${tool.content}`,
        usage: other ? [80, 20] : [30, 6],
      });
    return openaiChat({
      model: body.model,
      content: null,
      toolCalls: [{ id: 'call_1', name: 'echo', arguments: JSON.stringify({ message: other ? 'hello from the other model' : 'hello' }) }],
      usage: other ? [40, 9] : [12, 4],
    });
  });
  mcp = await startEverything('streamableHttp');
  const rec = await serve(['record', '--tape', 'run', '--route', `/openai=${llm.url}`, '--route', `/mcp/everything=${mcp.url}/mcp`]);
  try {
    const out = await agent(rec.url);
    expect(out.tool).toBe('Echo: hello');
  } finally {
    await rec.stop();
  }
  await mcp.stop(); // tool calls must come from the tape from here on
});
afterAll(async () => {
  await llm?.close();
  await mcp?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('replay --llm live', () => {
  it('re-asks the model with the overrides on the wire, answers tools from the tape, and records the overrides', async () => {
    const before = llm.requests.length;
    const prompt = path.join(dir, 'prompt.txt');
    // As an editor saves it: one trailing newline, which is the file's end and not part of the prompt.
    writeFileSync(prompt, 'You are a terse assistant.\n');
    const rep = await serve([
      'replay',
      '--tape',
      'run',
      '--save-as',
      'run-live',
      '--llm',
      'live',
      '--model',
      'gpt-4.1',
      '--system-prompt',
      `@${prompt}`,
      '--temperature',
      '0',
      '--max-tokens',
      '64',
    ]);
    let out: Awaited<ReturnType<typeof agent>>;
    try {
      out = await agent(rep.url);
    } finally {
      await rep.stop();
    }
    // What the agent sent was rewritten on the wire: model, system prompt, temperature, max tokens.
    const sent = llm.requests
      .slice(before)
      .map(
        (r) =>
          r.body as { model: string; temperature: number; max_completion_tokens: number; messages: { role: string; content: string }[] },
      );
    expect(sent).toHaveLength(2);
    for (const body of sent) {
      expect(body.model).toBe('gpt-4.1');
      expect(body.temperature).toBe(0);
      expect(body.max_completion_tokens).toBe(64);
      expect(body.messages[0]).toEqual({ role: 'system', content: 'You are a terse assistant.' });
    }
    // The other model asked for a different echo; the tape has no such call and echo is not read-only: blocked.
    // The preflight said so before serving, and what to run to decide which tools may run.
    expect(rep.stderr()).toMatch(/^tapedeck: side effects: \d+ of \d+ tool\(s\) count as side effects: [^\n]*\becho\b/m);
    expect(rep.stderr()).toContain('tapedeck: side effects: to decide per tool, run tapedeck side-effects init run,');
    expect(out.args).toEqual({ message: 'hello from the other model' });
    expect(out.tool).toMatch(/tapedeck blocked the call to tool "echo"/);
    expect(out.answer).toMatch(/^Other says: /);

    // Before the run: what differs from the recording, and the determinism score.
    expect(rep.stderr()).toContain('this run: model "gpt-4o-mini" -> "gpt-4.1" (2 call(s))');
    expect(rep.stderr()).toContain('this run: temperature 0.2 -> 0 (2 call(s))');
    expect(rep.stderr()).toMatch(/determinism: 0\.\d\d/);

    const tape = await readTape(path.join(dir, 'run-live.jsonl'));
    expect(tape.header.replayOf).toMatchObject({
      tape: 'run',
      llm: 'live',
      overrides: { model: 'gpt-4.1', temperature: 0, maxTokens: 64, systemPrompt: 'You are a terse assistant.' },
    });
    const live = tape.exchanges.filter((e) => e.match?.kind === 'live');
    expect(live).toHaveLength(2);
    expect(live[0]!.llm?.model).toBe('gpt-4.1');
    expect(live[0]!.notes).toMatchObject({
      llm: 'live',
      overrides: { model: { from: 'gpt-4o-mini', to: 'gpt-4.1' }, temperature: { from: 0.2, to: 0 } },
    });
    expect(tape.exchanges.some((e) => e.match?.kind === 'blocked' || e.mcp?.toolName === 'echo')).toBe(true);
  });

  it('without overrides re-asks the same model; a default replay never reaches the upstream', async () => {
    const before = llm.requests.length;
    const reask = await serve(['replay', '--tape', 'run', '--save-as', 'run-reask', '--llm', 'live']);
    try {
      const out = await agent(reask.url);
      expect(out.tool).toBe('Echo: hello'); // same model, same tool call: answered from the tape
      expect(out.answer).toBe('Mini says: Echo: hello');
    } finally {
      await reask.stop();
    }
    expect(llm.requests.length - before).toBe(2);
    expect(reask.stderr()).toContain('this run: llm "tape" -> "live"');

    const offline = await serve(['replay', '--tape', 'run', '--save-as', 'run-exact']);
    try {
      expect((await agent(offline.url)).answer).toBe('Mini says: Echo: hello');
    } finally {
      await offline.stop();
    }
    expect(llm.requests.length - before).toBe(2);
    expect(offline.stderr()).toContain('this run: same configuration as recorded');
    expect(offline.stderr()).toContain('determinism: 1.00');
  });

  it('rejects overrides without --llm live, and bad values, with one clear line', async () => {
    const noLive = await runCli(['replay', '--tape', 'run', '--dir', dir, '--model', 'gpt-4.1']);
    expect(noLive.code).not.toBe(0);
    expect(noLive.stderr).toContain('--model needs --llm live');
    const badT = await runCli(['replay', '--tape', 'run', '--dir', dir, '--llm', 'live', '--temperature', 'hot']);
    expect(badT.stderr).toContain('--temperature must be a number from 0 to 2 (got "hot")');
    const badFile = await runCli(['replay', '--tape', 'run', '--dir', dir, '--llm', 'live', '--system-prompt', '@/nonexistent/prompt.txt']);
    expect(badFile.stderr).toContain('cannot read the file (ENOENT)');
  });
});

describe('diff of the replays against the recording', () => {
  it('an exact offline replay is identical; the --llm live --model run shows the model change, deltas and the first divergence', async () => {
    const exact = await runCliInProcess(['diff', 'run', 'run-exact', '--dir', dir, '--json', '--fail-on', 'divergence']);
    expect(exact.code, exact.stderr).toBe(0);
    expect(JSON.parse(exact.stdout)).toMatchObject({ identical: true, toolSequenceDiff: [], firstDivergence: null, score: 1 });

    const live = await runCliInProcess(['diff', 'run', 'run-live', '--dir', dir, '--json']);
    expect(live.code, live.stderr).toBe(0);
    const d = JSON.parse(live.stdout) as {
      identical: boolean;
      configChanges: { field: string; original: unknown; replay: unknown }[];
      tokensDelta: number;
      costDelta: number | null;
      firstDivergence: { step: number; replayStep: number; reason: string } | null;
      score: number;
    };
    expect(d.identical).toBe(false);
    expect(d.configChanges).toContainEqual({ field: 'model', original: 'gpt-4o-mini', replay: 'gpt-4.1' });
    // gpt-4.1 used 40+9 and 80+20 tokens where gpt-4o-mini used 12+4 and 30+6.
    expect(d.tokensDelta).toBe(149 - 52);
    expect(d.costDelta).toBeGreaterThan(0);
    // The MCP handshake (answered from the tape) comes first; then the first LLM call, whose tool call differs. The
    // divergence names it by the step numbers tapedeck show gives it on each tape.
    const firstLlm = async (name: string): Promise<number> =>
      toSteps((await readTape(path.join(dir, `${name}.jsonl`))).exchanges).find((s) => s.kind === 'LLM')!.index;
    expect(d.firstDivergence).toEqual({
      step: await firstLlm('run'),
      replayStep: await firstLlm('run-live'),
      reason: 'different arguments for echo: original {"message":"hello"}, replay {"message":"hello from the other model"}',
    });
    expect(d.score).toBeLessThan(1);

    const gate = await runCliInProcess(['diff', 'run', 'run-live', '--dir', dir, '--fail-on', 'divergence']);
    expect(gate.code).toBe(1);
  });
});

describe('mocks and --live-after', () => {
  it('--mock gives the unrecorded side-effect call a fake success, marked mock on the replay tape', async () => {
    const mocks = path.join(dir, 'mocks.yaml');
    writeFileSync(
      mocks,
      [
        'mocks:',
        '  - tool: echo',
        '    arguments: { message: hello from the other model }',
        '    text: "Echo: mocked"',
        '  - route: /openai',
        '    method: GET',
        '    path: /v1/models',
        '    body: { object: list, data: [{ id: mocked-model, object: model }] }',
      ].join('\n'),
    );
    const rep = await serve(['replay', '--tape', 'run', '--save-as', 'run-mock', '--llm', 'live', '--model', 'gpt-4.1', '--mock', mocks]);
    let out: Awaited<ReturnType<typeof agent>>;
    try {
      out = await agent(rep.url);
      const models = await fetch(`${rep.url}/openai/v1/models`);
      expect(models.headers.get('x-tapedeck-match')).toBe('mock');
      expect(await models.json()).toEqual({ object: 'list', data: [{ id: 'mocked-model', object: 'model' }] });
    } finally {
      await rep.stop();
    }
    expect(out.tool).toBe('Echo: mocked');
    expect(out.answer).toBe('Other says: Echo: mocked');
    expect(rep.stderr()).toContain(`this run: mocks from ${mocks}: 1 tool(s), 1 HTTP route(s)`);
    const tape = await readTape(path.join(dir, 'run-mock.jsonl'));
    expect(tape.header.replayOf?.mocks).toBe(mocks);
    const mocked = tape.exchanges.filter((e) => e.match?.kind === 'mock');
    expect(mocked).toHaveLength(2);
    expect(mocked[0]!.mcp?.toolName).toBe('echo');
    expect(mocked[1]!.request.path).toBe('/v1/models');
    expect(mocked[0]!.match?.reason).toContain('answered by a mock of echo');
  });

  it('--live-after STEP serves the LLM calls through STEP from the tape, and asks the later ones live', async () => {
    const recorded = await readTape(path.join(dir, 'run.jsonl'));
    const ordered = [...recorded.exchanges].sort((a, b) => a.offsetMs - b.offsetMs);
    const firstLlm = ordered.findIndex((e) => e.llm !== undefined);
    const before = llm.requests.length;
    const rep = await serve(['replay', '--tape', 'run', '--save-as', 'run-fork', '--live-after', String(firstLlm), '--model', 'gpt-4.1']);
    let out: Awaited<ReturnType<typeof agent>>;
    try {
      out = await agent(rep.url);
    } finally {
      await rep.stop();
    }
    // The first call came from the tape (the recorded echo "hello", answered from the tape), the second went live.
    expect(out.tool).toBe('Echo: hello');
    expect(out.answer).toBe('Other says: Echo: hello');
    expect(llm.requests.length - before).toBe(1);
    expect((llm.requests.at(-1)!.body as { model: string }).model).toBe('gpt-4.1');
    expect(rep.stderr()).toContain(`this run: LLM calls through step ${firstLlm} come from the tape (1 call(s)), the later ones go live`);
    const tape = await readTape(path.join(dir, 'run-fork.jsonl'));
    expect(tape.header.replayOf?.liveAfter).toBe(firstLlm);
    expect(tape.exchanges.filter((e) => e.llm).map((e) => e.match?.kind)).toEqual(['exact', 'live']);
  });
});
