import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { createMcpResponder } from '../../../src/transports/mcp/responder.js';
import { startProxy } from '../../../src/front/server.js';
import { loadTape } from '../../../src/tape/tape-reader.js';
import { openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../../helpers/scripted-upstream.js';
import { startEverything, type EverythingServer } from '../../helpers/everything-server.js';

const log = createLogger('silent');
let dir: string;
let llm: ScriptedUpstream;
let mcp: EverythingServer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-agent-'));
  llm = await startScriptedUpstream((req) => {
    const body = req.body as { messages: { role: string; content: string }[] };
    const tool = body.messages.find((m) => m.role === 'tool');
    if (tool) return openaiChat({ content: `The tool said: ${tool.content}`, usage: [30, 6] });
    return openaiChat({
      content: null,
      toolCalls: [{ id: 'call_1', name: 'echo', arguments: '{"message":"from the model"}' }],
      usage: [12, 4],
    });
  });
  mcp = await startEverything('streamableHttp');
});
afterAll(async () => {
  await llm?.close();
  await mcp?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A tool-using agent: the model asks for `echo`, the agent calls it over MCP, the model answers with the result. */
async function agent(url: string): Promise<unknown[]> {
  const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${url}/openai/v1`, maxRetries: 0 });
  const client = new Client({ name: 'agent', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/everything/mcp`)));
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Echo something' }];
  const first = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages });
  const call = first.choices[0]!.message.tool_calls![0]!;
  if (call.type !== 'function') throw new Error('expected a function call');
  const result = await client.callTool({
    name: call.function.name,
    arguments: JSON.parse(call.function.arguments) as Record<string, unknown>,
  });
  const text = (result.content as { text: string }[])[0]!.text;
  messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: text });
  const second = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages });
  await client.close();
  return [call, result, second.choices[0]!.message.content];
}

describe("one tape for an agent's LLM and MCP calls", () => {
  let recorded: unknown[];
  const routes = (): { prefix: string; upstream: string }[] => [
    { prefix: '/openai', upstream: llm.url },
    { prefix: '/everything/mcp', upstream: `${mcp.url}/mcp` },
  ];

  it('records both on one timeline, in order', async () => {
    const proxy = await startProxy({ mode: 'record', tape: 'agent', dir, port: 0, routes: routes(), log });
    recorded = await agent(proxy.url);
    await proxy.close();
    expect(recorded[2]).toBe('The tool said: Echo: from the model');
    const tape = await loadTape(dir, 'agent');
    expect(tape.problems).toEqual([]);
    const timeline = [...tape.exchanges]
      .sort((a, b) => a.offsetMs - b.offsetMs)
      .filter((ex) => ex.route === '/openai' || (ex.mcp?.method !== undefined && ex.request.method === 'POST'))
      .map((ex) => (ex.route === '/openai' ? 'llm' : `mcp ${ex.mcp!.method}${ex.mcp!.toolName ? ` ${ex.mcp!.toolName}` : ''}`));
    expect(timeline).toEqual(['mcp initialize', 'mcp notifications/initialized', 'llm', 'mcp tools/call echo', 'llm']);
  });

  it('replays both with every upstream gone', async () => {
    await llm.close();
    await mcp.stop();
    const proxy = await startProxy({
      mode: 'replay',
      tape: 'agent',
      dir,
      port: 0,
      routes: [],
      saveAs: 'agent-replay',
      responders: [createMcpResponder()],
      log,
    });
    expect(await agent(proxy.url)).toEqual(recorded);
    await proxy.close();
    const out = await loadTape(dir, 'agent-replay');
    expect(out.exchanges.filter((ex) => ex.request.method === 'POST').every((ex) => ex.match?.kind === 'exact')).toBe(true);
  });
}, 60_000);

describe('side effects over Streamable HTTP with --on-miss live', () => {
  let server: EverythingServer;
  beforeAll(async () => {
    server = await startEverything('streamableHttp');
  });
  afterAll(async () => server?.stop());

  it('forwards an unrecorded tool the reviewed file marks safe to the real server, blocks an unrecorded side-effect tool', async () => {
    const routes = [{ prefix: '/ev', upstream: `${server.url}/mcp` }];
    const rec = await startProxy({ mode: 'record', tape: 'fx', dir, port: 0, routes, log });
    const c1 = new Client({ name: 'fx', version: '1' });
    await c1.connect(new StreamableHTTPClientTransport(new URL(`${rec.url}/ev`)));
    await c1.listTools();
    await c1.close();
    await rec.close();

    const proxy = await startProxy({
      mode: 'replay',
      tape: 'fx',
      dir,
      port: 0,
      routes,
      onMiss: 'live',
      saveAs: 'fx-replay',
      responders: [createMcpResponder({ sideEffects: { tools: { 'get-sum': true }, http: [], done: true } })],
      log,
    });
    const client = new Client({ name: 'fx', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/ev`)));
    // The reviewed file marks get-sum safe, so the live server answers it.
    expect(await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } })).toMatchObject({
      content: [{ type: 'text', text: expect.stringContaining('5') }],
    });
    // toggle-simulated-logging is not marked safe (and annotated readOnlyHint: false): a side effect, never forwarded.
    const blocked = await client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
    expect(blocked.isError).toBe(true);
    expect((blocked.content as { text: string }[])[0]!.text).toMatch(/blocked the call to tool "toggle-simulated-logging".*side effect/);
    await client.close();
    await proxy.close();
    const out = await loadTape(dir, 'fx-replay');
    expect(out.problems).toEqual([]);
    const calls = out.exchanges.filter((ex) => ex.mcp?.method === 'tools/call').map((ex) => [ex.mcp?.toolName, ex.match?.kind]);
    expect(calls).toEqual([
      ['get-sum', 'live'],
      ['toggle-simulated-logging', 'blocked'],
    ]);
  });

  it('never runs a tool live because the tape says readOnlyHint: true (a tape can be edited); only a reviewed file can', async () => {
    const routes = [{ prefix: '/ev', upstream: `${server.url}/mcp` }];
    const rec = await startProxy({ mode: 'record', tape: 'claims', dir, port: 0, routes, log });
    const c1 = new Client({ name: 'fx', version: '1' });
    await c1.connect(new StreamableHTTPClientTransport(new URL(`${rec.url}/ev`)));
    await c1.listTools();
    await c1.close();
    await rec.close();
    // Tamper: every tool on the tape now claims to be read-only.
    const file = path.join(dir, 'claims.jsonl');
    writeFileSync(file, readFileSync(file, 'utf8').replaceAll('"readOnlyHint":false', '"readOnlyHint":true'));
    expect(readFileSync(file, 'utf8')).toContain('"toggle-simulated-logging"');

    const proxy = await startProxy({
      mode: 'replay',
      tape: 'claims',
      dir,
      port: 0,
      routes,
      onMiss: 'live',
      saveAs: 'claims-replay',
      responders: [createMcpResponder()],
      log,
    });
    const client = new Client({ name: 'fx', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/ev`)));
    const refused = await client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
    expect(refused.isError).toBe(true);
    expect((refused.content as { text: string }[])[0]!.text).toMatch(/no reviewed side-effects file marks it safe/);
    const sum = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } });
    expect(sum.isError).toBe(true);
    await client.close();
    await proxy.close();
    const out = await loadTape(dir, 'claims-replay');
    expect(out.exchanges.filter((ex) => ex.mcp?.method === 'tools/call').map((ex) => ex.match?.kind)).toEqual(['blocked', 'blocked']);
  });
}, 60_000);
