/**
 * An MCP fault rule while recording (`record`, `serve --mode auto`): the rule acts through the one place faults are
 * picked (the settle), as in replay. A tool error picked for a `tools/call` answers the client in the tool's place and
 * never reaches the real tool (its side effect is what the user is testing for); the tape marks the answer injected,
 * and a replay with the same rule gives the same answers (issue 39).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFaultPlan } from '../../../src/engine/faults/fault-plan.js';
import { parseFaultRule } from '../../../src/engine/faults/fault-rules.js';
import { createLogger } from '../../../src/log.js';
import { createMcpResponder } from '../../../src/transports/mcp/responder.js';
import { startProxy } from '../../../src/front/server.js';
import { createDirStore } from '../../../src/tape/stores/dir-store.js';
import { runCliInProcess } from '../../helpers/cli-in-process.js';
import { startSdkMcpServer, type SdkMcpServer } from '../../helpers/sdk-mcp-server.js';

const log = createLogger('silent');
let dir: string;
let server: SdkMcpServer;
beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-mcp-record-faults-'));
  server = await startSdkMcpServer();
});
afterEach(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const textOf = (r: unknown): string => ((r as { content: { text: string }[] }).content[0]?.text ?? '').toString();

/** The agent: writes twice and echoes once; what each call got. */
async function agent(url: string): Promise<[boolean, string][]> {
  const client = new Client({ name: 'record-faults', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/shop/mcp`)));
  const got: [boolean, string][] = [];
  for (const [name, text] of [
    ['write', 'refund order 1'],
    ['echo', 'hello'],
    ['write', 'refund order 2'],
  ] as const) {
    const r = await client.callTool({ name, arguments: { text } });
    got.push([r.isError === true, textOf(r)]);
  }
  await client.close();
  return got;
}

describe('an MCP fault rule while recording', () => {
  it('a tool error never reaches the real tool: the client gets it, the tape marks it injected, a replay with the rule repeats it', async () => {
    const rules = [parseFaultRule("{when: {tool: write, call: 1}, then: {toolError: 'card declined'}}")];
    const recording = await startProxy({
      mode: 'record',
      tape: 'shop',
      dir,
      port: 0,
      routes: [{ prefix: '/shop/mcp', upstream: server.url }],
      faults: createFaultPlan(rules),
      log,
    });
    let got: [boolean, string][];
    try {
      got = await agent(recording.url);
    } finally {
      await recording.close();
    }
    expect(got).toEqual([
      [true, 'card declined'],
      [false, 'hello'],
      [false, 'wrote refund order 2'],
    ]);
    // The real tool ran once: for the call the rule did not pick.
    expect(server.written).toEqual(['refund order 2']);
    const tape = await createDirStore(dir).load('shop');
    const calls = tape.exchanges.filter((ex) => ex.mcp?.method === 'tools/call');
    expect(calls.map((ex) => [ex.mcp?.toolName, ex.match?.kind, ex.mcp?.isError === true])).toEqual([
      ['write', 'fault', true],
      ['echo', undefined, false],
      ['write', undefined, false],
    ]);
    expect(calls[0]?.notes?.fault).toBe('#1 tool write call 1 -> tool error');

    // Replayed with the same rule, with the server gone: the same answers (the injected one is the rule's again, never
    // served from the tape as the tool's).
    await server.stop();
    const faults = createFaultPlan(rules);
    const replay = await startProxy({
      mode: 'replay',
      tape: 'shop',
      dir,
      port: 0,
      routes: [],
      saveAs: 'shop-replay',
      responders: [createMcpResponder({ faults })],
      faults,
      log,
    });
    try {
      expect(await agent(replay.url)).toEqual(got);
    } finally {
      await replay.close();
    }
  });

  it('mcp-stdio --mode record refuses a rule at start, in one line with exit 2: a stdio recording could not apply it', async () => {
    const args = ['mcp-stdio', 'stdio-shop', '--dir', dir, '--mode', 'record', '--fault', "{when: {tool: write}, then: {toolError: 'no'}}"];
    const run = await runCliInProcess([...args, '--', process.execPath, '-e', '']);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toEqual([
      'tapedeck mcp-stdio: --fault and --faults act in replay only for a stdio MCP server (record it, then replay it with the rule); over HTTP, record applies them',
    ]);
  });
});
