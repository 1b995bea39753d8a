/**
 * Faults on MCP traffic, through the MCP SDK client against replays of tapes recorded from the real server-everything
 * (the compatibility tapes): a tool call a rule picks gets a tool error (or a JSON-RPC error) instead of its recorded
 * result, on Streamable HTTP and on stdio alike; the other calls get theirs; the replay tape marks the injected ones.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFaultPlan } from '../../../src/engine/faults/fault-plan.js';
import { parseFaultRule } from '../../../src/engine/faults/fault-rules.js';
import { createLogger } from '../../../src/log.js';
import { createMcpResponder } from '../../../src/transports/mcp/responder.js';
import { startProxy } from '../../../src/front/server.js';
import { createDirStore } from '../../../src/tape/stores/dir-store.js';
import { CLI_MAIN } from '../../helpers/cli.js';
import { copyCompatTapes } from '../../fixtures/compat/compat.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-mcp-faults-'));
  copyCompatTapes(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Replay `tape` as `saveAs` with one rule: echo's first call gets the tool error "the echo service is down". */
async function replayWithEchoDown(tape: string, saveAs: string): Promise<Awaited<ReturnType<typeof startProxy>>> {
  const faults = createFaultPlan([parseFaultRule('{when: {tool: echo, call: 1}, then: {toolError: "the echo service is down"}}')]);
  return startProxy({
    mode: 'replay',
    tape,
    dir,
    port: 0,
    routes: [],
    saveAs,
    responders: [createMcpResponder({ faults })],
    faults,
    log: createLogger('silent'),
  });
}

const textOf = (r: unknown): string => ((r as { content: { text: string }[] }).content[0]?.text ?? '').toString();

describe('faults on MCP tool calls', () => {
  it('Streamable HTTP: echo gets the injected tool error once, then its recorded result; get-sum is untouched', async () => {
    const proxy = await replayWithEchoDown('mcp-http', 'mcp-http-faults');
    const client = new Client({ name: 'fixture-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/everything/mcp`)));
    const first = await client.callTool({ name: 'echo', arguments: { message: 'hello tape' } });
    const again = await client.callTool({ name: 'echo', arguments: { message: 'hello tape' } });
    const sum = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } });
    await client.close();
    await proxy.close();
    expect(first.isError).toBe(true);
    expect(textOf(first)).toBe('the echo service is down');
    expect(again.isError).toBeFalsy();
    expect(textOf(again)).toBe('Echo: hello tape');
    expect(textOf(sum)).toBe('The sum of 2 and 3 is 5.');
    const out = await createDirStore(dir).load('mcp-http-faults');
    const calls = out.exchanges.filter((ex) => ex.mcp?.method === 'tools/call');
    expect(calls.map((ex) => [ex.mcp?.toolName, ex.match?.kind])).toEqual([
      ['echo', 'fault'],
      ['echo', 'exact'],
      ['get-sum', 'exact'],
    ]);
    expect(calls[0]?.notes?.fault).toMatch(/#1 tool echo call 1 -> tool error/);
    expect(calls[0]?.mcp?.isError).toBe(true);
  });

  it('legacy HTTP+SSE: the rule picked by the settle answers on the stream, the POST is on the tape as injected first', async () => {
    const proxy = await replayWithEchoDown('mcp-sse', 'mcp-sse-faults');
    const client = new Client({ name: 'fixture-client', version: '1.0.0' });
    await client.connect(new SSEClientTransport(new URL(`${proxy.url}/legacy/mcp/sse`)));
    const first = await client.callTool({ name: 'echo', arguments: { message: 'hello tape' } });
    const again = await client.callTool({ name: 'echo', arguments: { message: 'hello tape' } });
    await client.close();
    await proxy.close();
    expect(first.isError).toBe(true);
    expect(textOf(first)).toBe('the echo service is down');
    expect(textOf(again)).toBe('Echo: hello tape');
    const out = await createDirStore(dir).load('mcp-sse-faults');
    const calls = out.exchanges.filter((ex) => ex.mcp?.method === 'tools/call');
    expect(calls.map((ex) => [ex.mcp?.toolName, ex.match?.kind, ex.response?.status])).toEqual([
      ['echo', 'fault', 202],
      ['echo', 'exact', 202],
    ]);
    expect(calls[0]?.notes?.fault).toBe('#1 tool echo call 1 -> tool error');
    expect(calls[0]?.match?.reason).toBe('injected by fault rule #1 tool echo call 1 -> tool error');
    // The injected answer went down the stream, which is on the tape with it.
    const stream = out.exchanges.find((ex) => ex.request.method === 'GET' && ex.response?.events !== undefined);
    expect(stream?.response?.events?.some((e) => e.data.includes('the echo service is down'))).toBe(true);
  });

  it('stdio (tapedeck mcp-stdio --fault): a JSON-RPC error the SDK client throws', async () => {
    const client = new Client({ name: 'fixture-client', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        CLI_MAIN,
        'mcp-stdio',
        'mcp-stdio',
        '--dir',
        dir,
        '--mode',
        'replay',
        '--save-as',
        'mcp-stdio-faults',
        '--fault',
        '{when: {tool: get-sum}, then: {rpcError: {code: -32000, message: "quota exceeded"}}}',
      ],
      stderr: 'ignore',
    });
    await client.connect(transport);
    const err = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } }).catch((e: unknown) => e);
    const echo = await client.callTool({ name: 'echo', arguments: { message: 'hello tape' } });
    await client.close();
    expect((err as Error).message).toContain('quota exceeded');
    expect(textOf(echo)).toBe('Echo: hello tape');
    const out = await createDirStore(dir).load('mcp-stdio-faults');
    const sum = out.exchanges.find((ex) => ex.mcp?.toolName === 'get-sum');
    expect(sum?.match?.kind).toBe('fault');
    expect(sum?.mcp?.error).toMatchObject({ code: -32000, message: 'quota exceeded' });
  });
});
