/**
 * Inspecting a tape with LLM and MCP traffic on one timeline, recorded through the proxy against the real
 * `server-everything`, and its replay with one live and one blocked tool call.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCommand } from '../../src/cli/list.js';
import { showCommand } from '../../src/cli/show.js';
import { createLogger } from '../../src/log.js';
import { createMcpResponder } from '../../src/transports/mcp/responder.js';
import { startProxy } from '../../src/front/server.js';
import { openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { startEverything, type EverythingServer } from '../helpers/everything-server.js';
import { runCommand } from '../helpers/run-command.js';

const log = createLogger('silent');
let dir: string;
let llm: ScriptedUpstream;
let mcp: EverythingServer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-show-mcp-'));
  llm = await startScriptedUpstream((req) => {
    const body = req.body as { messages: { role: string; content: string }[] };
    const tool = body.messages.find((m) => m.role === 'tool');
    if (tool) return openaiChat({ content: `The tool said: ${tool.content}`, usage: [30, 6] });
    return openaiChat({
      content: 'I will echo it back to check the tool works.',
      toolCalls: [{ id: 'call_1', name: 'echo', arguments: '{"message":"from the model"}' }],
      usage: [12, 4],
    });
  });
  mcp = await startEverything('streamableHttp');
  const routes = [
    { prefix: '/openai', upstream: llm.url },
    { prefix: '/ev', upstream: `${mcp.url}/mcp` },
  ];
  const rec = await startProxy({ mode: 'record', tape: 'mcp-agent', dir, port: 0, routes, log });
  const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${rec.url}/openai/v1`, maxRetries: 0 });
  const client = new Client({ name: 'agent', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${rec.url}/ev`)));
  await client.listTools(); // the tool annotations tell replay which unrecorded tool is safe to run live
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Echo something' }];
  const first = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages });
  const result = await client.callTool({ name: 'echo', arguments: { message: 'from the model' } });
  messages.push(first.choices[0]!.message, {
    role: 'tool',
    tool_call_id: 'call_1',
    content: (result.content as { text: string }[])[0]!.text,
  });
  await openai.chat.completions.create({ model: 'gpt-4o-mini', messages });
  await client.close();
  await rec.close();

  const rep = await startProxy({
    mode: 'replay',
    tape: 'mcp-agent',
    dir,
    port: 0,
    routes,
    onMiss: 'live',
    saveAs: 'mcp-replay',
    // get-sum is marked safe by a reviewed side-effects file, so it goes live; the other call is blocked.
    responders: [createMcpResponder({ sideEffects: { tools: { 'get-sum': true }, http: [], done: true } })],
    log,
  });
  const c2 = new Client({ name: 'agent', version: '1' });
  await c2.connect(new StreamableHTTPClientTransport(new URL(`${rep.url}/ev`)));
  await c2.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } });
  await c2.callTool({ name: 'toggle-simulated-logging', arguments: {} });
  await c2.close();
  await rep.close();
}, 60_000);
afterAll(async () => {
  await llm?.close();
  await mcp?.stop();
  if (!process.env.KEEP_TAPES) rmSync(dir, { recursive: true, force: true });
  else console.log('tapes in', dir);
});

const run = async (cmd: typeof showCommand, args: string[]): Promise<string> => (await runCommand(cmd, [...args, '--dir', dir])).stdout;

describe('inspecting LLM and MCP calls on one tape', () => {
  it('show: MCP steps carry the tool, its arguments and result', async () => {
    const t = JSON.parse(await run(showCommand, ['mcp-agent', '--json'])) as {
      steps: { index: number; kind: string; target: string; args: string; result: string; error: string | null }[];
    };
    const call = t.steps.find((s) => s.kind === 'MCP' && s.target === 'echo');
    expect(call).toBeDefined();
    expect(call!.args).toBe('{"message":"from the model"}');
    expect(call!.result).toContain('Echo: from the model');
    expect(call!.error).toBeNull();
    expect(t.steps.some((s) => s.kind === 'MCP' && s.target === 'initialize')).toBe(true);
    const human = await run(showCommand, ['mcp-agent']);
    expect(human).toMatch(/MCP +\/ev +echo +\{"message":"f/);
    // The client closing the standing server stream is how that stream ends, not a failure.
    expect(human).toMatch(/^ \d+ .*MCP +\/ev +tapedeck\/stream/m);
    expect(human).not.toMatch(/^!/m);
  });

  it('list and show: a replay with a live and a blocked tool call says so, and the blocked one stands out', async () => {
    const rows = JSON.parse(await run(listCommand, ['--json'])) as { name: string; matches?: Record<string, number>; toolCalls: number }[];
    const replay = rows.find((r) => r.name === 'mcp-replay');
    // The client's standing GET stream gets the 405 the protocol allows a server in replay: by design, not a miss.
    expect(replay?.matches).toMatchObject({ live: 1, blocked: 1, miss: 0 });
    expect(replay?.toolCalls).toBe(2);
    const t = JSON.parse(await run(showCommand, ['mcp-replay', '--json'])) as {
      steps: { target: string; match: string | null; error: string | null }[];
    };
    const blocked = t.steps.find((s) => s.target === 'toggle-simulated-logging');
    expect(blocked?.match).toBe('blocked');
    expect(blocked?.error).toMatch(/^blocked/);
    expect(t.steps.find((s) => s.target === 'get-sum')?.match).toBe('live');
    const human = await run(showCommand, ['mcp-replay']);
    expect(human).toMatch(/^!\d+ .*MCP .*toggle-simulated-logging.*blocked$/m);
    const errors = JSON.parse(await run(showCommand, ['mcp-replay', '--errors', '--json'])) as { step: { target: string } }[];
    // Only the blocked call: not the live call, nor the standing GET stream the replay declined with a 405 (issue 13 #15).
    expect(errors.map((e) => e.step.target)).toEqual(['toggle-simulated-logging']);
  });

  it('debrief: the call, the reason the model wrote before it, and the MCP result it got', async () => {
    const d = JSON.parse(await run(showCommand, ['mcp-agent', '--debrief', '--json'])) as {
      goal: string;
      decisions: { tool: string; reasons: unknown[]; result?: { step: number; value: unknown } }[];
    };
    expect(d.goal).toBe('Echo something');
    expect(d.decisions).toHaveLength(1);
    expect(d.decisions[0]!.tool).toBe('echo');
    expect(d.decisions[0]!.reasons).toEqual([{ source: 'text-before-call', text: 'I will echo it back to check the tool works.' }]);
    expect(JSON.stringify(d.decisions[0]!.result?.value)).toContain('Echo: from the model');
  });
});
