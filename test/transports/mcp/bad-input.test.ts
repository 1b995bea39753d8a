import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_MAIN } from '../../helpers/cli.js';
import { createLogger } from '../../../src/log.js';
import { createMcpResponder } from '../../../src/transports/mcp/responder.js';
import { startProxy, type RunningProxy } from '../../../src/front/server.js';
import { loadTape } from '../../../src/tape/tape-reader.js';
import { startEverything, type EverythingServer } from '../../helpers/everything-server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const log = createLogger('silent');
let dir: string;
let server: EverythingServer;
const ROUTE = '/ev';
const INIT = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bad-input', version: '1' } },
};
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-mcp-bad-'));
  server = await startEverything('streamableHttp');
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('bad input over Streamable HTTP', () => {
  it('records a client that disconnects mid-stream and a server that dies mid-call; the tape stays readable', async () => {
    const proxy = await startProxy({
      mode: 'record',
      tape: 'bad',
      dir,
      port: 0,
      routes: [{ prefix: ROUTE, upstream: `${server.url}/mcp` }],
      log,
    });
    const client = new Client({ name: 'bad-input', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url + ROUTE)));
    await client.callTool({ name: 'echo', arguments: { message: 'before' } });

    // The client goes away after the first progress notification.
    const abort = new AbortController();
    const gone = client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 2, steps: 20 } }, undefined, {
      signal: abort.signal,
      onprogress: () => abort.abort(),
    });
    await expect(gone).rejects.toThrow();

    // The server dies while a call is open. (The SDK client then tries to resume the stream and waits for its
    // request timeout: keep it short.)
    const dying = client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 3, steps: 30 } }, undefined, {
      timeout: 1500,
      onprogress: () => void server.stop(),
    });
    await expect(dying).rejects.toThrow();
    await client.close().catch(() => undefined);
    await proxy.close();

    const tape = await loadTape(dir, 'bad');
    expect(tape.problems).toEqual([]);
    const calls = tape.exchanges.filter((ex) => ex.mcp?.toolName === 'trigger-long-running-operation');
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call.error?.phase).toBe('stream');
      expect(call.mcp?.result).toBeUndefined();
      expect(call.mcp?.notifications.length).toBeGreaterThanOrEqual(1);
    }
  });

  describe('replay', () => {
    let proxy: RunningProxy;
    beforeAll(async () => {
      proxy = await startProxy({
        mode: 'replay',
        tape: 'bad',
        dir,
        port: 0,
        routes: [],
        saveAs: 'bad-replay',
        responders: [createMcpResponder()],
        log,
      });
    });
    afterAll(async () => proxy?.close());
    const post = (body: string, headers: Record<string, string> = {}): Promise<Response> =>
      fetch(proxy.url + ROUTE, { method: 'POST', headers: { ...HEADERS, ...headers }, body });

    it('answers malformed JSON-RPC with 400 and the JSON-RPC error the protocol prescribes', async () => {
      const notJson = await post('{"jsonrpc": "2.0", "method": ');
      expect(notJson.status).toBe(400);
      expect(await notJson.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: expect.stringMatching(/Parse error/) },
      });
      const notRpc = await post('{"jsonrpc": "2.0", "hello": 1}');
      expect(notRpc.status).toBe(400);
      expect(((await notRpc.json()) as { error: { code: number } }).error.code).toBe(-32600);
    });

    it('initialize gets a fresh session id; a missing one is 400, an unknown one 404, a deleted one 404', async () => {
      const init = await post(JSON.stringify(INIT));
      expect(init.status).toBe(200);
      const sid = init.headers.get('mcp-session-id');
      expect(sid).toMatch(/^[0-9a-f-]{36}$/);
      const recordedSid = (await loadTape(dir, 'bad')).exchanges[0]?.response?.headers['mcp-session-id'];
      expect(sid).not.toBe(recordedSid);
      await init.text();

      const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect((await post(list)).status).toBe(400);
      const unknown = await post(list, { 'mcp-session-id': 'no-such-session' });
      expect(unknown.status).toBe(404);
      expect(((await unknown.json()) as { error: { code: number; message: string } }).error).toEqual({
        code: -32001,
        message: 'Session not found',
      });
      const ok = await post(list, { 'mcp-session-id': sid! });
      expect(ok.status).toBe(200);
      await ok.text();
      const get = await fetch(proxy.url + ROUTE, { headers: { accept: 'text/event-stream', 'mcp-session-id': sid! } });
      expect(get.status).toBe(405);
      await get.text();
      expect((await fetch(proxy.url + ROUTE, { method: 'DELETE', headers: { 'mcp-session-id': sid! } })).status).toBe(200);
      expect((await post(list, { 'mcp-session-id': sid! })).status).toBe(404);
    });

    it('replays a call the server died in: the recorded notifications, then a JSON-RPC error, not a hang', async () => {
      const client = new Client({ name: 'bad-input', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url + ROUTE)));
      expect(await client.callTool({ name: 'echo', arguments: { message: 'before' } })).toEqual({
        content: [{ type: 'text', text: 'Echo: before' }],
      });
      const progress: unknown[] = [];
      await expect(
        client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 3, steps: 30 } }, undefined, {
          onprogress: (p) => progress.push(p),
        }),
      ).rejects.toThrow(/recorded server gave no answer/);
      expect(progress.length).toBeGreaterThanOrEqual(1);
      await client.close();
    });

    it('keeps the replay tape readable', async () => {
      await proxy.close();
      const out = await loadTape(dir, 'bad-replay');
      expect(out.problems).toEqual([]);
      expect(out.exchanges.map((ex) => ex.response?.status)).toEqual(expect.arrayContaining([400, 404, 405]));
    });
  });
}, 60_000);

describe('bad input over stdio', () => {
  /** A stdio MCP server that answers initialize, then dies on the first tools/call. */
  const DYING = `
    const rl = require('node:readline').createInterface({ input: process.stdin });
    rl.on('line', (l) => {
      const m = JSON.parse(l);
      if (m.method === 'initialize') process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'dying', version: '1' } } }) + '\\n');
      if (m.method === 'tools/call') process.exit(3);
    });`;

  it('records a server that dies mid-call; the client gets an error, the tape stays readable', async () => {
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        CLI_MAIN,
        'mcp-stdio',
        '--tape',
        'dying',
        '--dir',
        dir,
        '--mode',
        'record',
        '--name',
        'dying',
        '--',
        process.execPath,
        '-e',
        DYING,
      ],
      cwd: ROOT,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'bad-input', version: '1' });
    await client.connect(transport);
    await expect(client.callTool({ name: 'anything', arguments: {} })).rejects.toThrow();
    await client.close();
    const tape = await loadTape(dir, 'dying');
    expect(tape.problems).toEqual([]);
    const call = tape.exchanges.find((ex) => ex.mcp?.method === 'tools/call');
    expect(call?.error).toMatchObject({ code: 'SERVER_EXITED', phase: 'stream' });
  });

  it('record relays a line over --max-line-mb as is but does not record it, and says so on stderr once', async () => {
    const rec = spawn(
      process.execPath,
      [
        CLI_MAIN,
        'mcp-stdio',
        '--tape',
        'long-rec',
        '--dir',
        dir,
        '--mode',
        'record',
        '--max-line-mb',
        '0.01',
        '--',
        process.execPath,
        '-e',
        DYING,
      ],
      { cwd: ROOT },
    );
    let out = '';
    let err = '';
    rec.stdout.on('data', (d: Buffer) => (out += d.toString()));
    rec.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const long = { jsonrpc: '2.0', method: 'notifications/message', params: { pad: 'x'.repeat(20_000) } };
    rec.stdin.write(JSON.stringify(INIT) + '\n' + JSON.stringify(long) + '\n');
    await expect.poll(() => out, { timeout: 30_000 }).toContain('"serverInfo"');
    rec.stdin.end();
    await new Promise((r) => rec.on('close', r));
    expect(err.split('\n').filter((l) => /the client sent a line longer than/.test(l))).toEqual([
      expect.stringMatching(/relayed as is, not recorded$/),
    ]);
    const tape = await loadTape(dir, 'long-rec');
    expect(tape.exchanges.map((ex) => ex.mcp?.method)).toEqual(['initialize']);
  });

  it('answers a malformed line with a JSON-RPC parse error and carries on', async () => {
    const child = spawn(
      process.execPath,
      [CLI_MAIN, 'mcp-stdio', '--tape', 'dying', '--dir', dir, '--mode', 'replay', '--save-as', 'dying-replay'],
      { cwd: ROOT },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stdin.write('{"jsonrpc": "2.0", "method": \n');
    child.stdin.write(JSON.stringify(INIT) + '\n');
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'anything', arguments: {} } }) + '\n');
    child.stdin.end();
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect(code).toBe(0);
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: unknown; error?: { code: number; message: string }; result?: unknown });
    expect(lines[0]).toMatchObject({ id: null, error: { code: -32700 } });
    expect(lines[1]).toMatchObject({ id: 0, result: { serverInfo: { name: 'dying' } } });
    expect(lines[2]).toMatchObject({
      id: 7,
      error: { code: -32603, message: expect.stringMatching(/recorded server gave no answer.*SERVER_EXITED/) },
    });
    expect((await loadTape(dir, 'dying-replay')).problems).toEqual([]);
  });

  it('refuses a line over the 10 MB limit with a parse error and one line on stderr, and answers the next line', async () => {
    const child = spawn(
      process.execPath,
      [CLI_MAIN, 'mcp-stdio', '--tape', 'dying', '--dir', dir, '--mode', 'replay', '--save-as', 'dying-long'],
      { cwd: ROOT },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const huge = {
      jsonrpc: '2.0',
      id: 8,
      method: 'tools/call',
      params: { name: 'anything', arguments: { blob: 'x'.repeat(11 * 1024 * 1024) } },
    };
    child.stdin.write(JSON.stringify(INIT) + '\n');
    child.stdin.write(JSON.stringify(huge) + '\n');
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }) + '\n');
    child.stdin.end();
    expect(await new Promise<number | null>((r) => child.on('close', r))).toBe(0);
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: unknown; error?: { code: number; message: string } });
    expect(lines.map((l) => l.id)).toEqual([0, null, 9]);
    expect(lines[1]).toMatchObject({ error: { code: -32700, message: expect.stringMatching(/line longer than 10 MB/) } });
    expect(err.split('\n').filter((l) => /line longer than 10 MB/.test(l))).toHaveLength(1);
  });
}, 60_000);
