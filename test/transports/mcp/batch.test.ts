import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { createMcpResponder } from '../../../src/transports/mcp/responder.js';
import { startProxy } from '../../../src/front/server.js';
import { createReplayMatcher } from '../../../src/replay/pipeline.js';
import type { SideEffectsFile } from '../../../src/replay/side-effects.js';
import { loadTape } from '../../../src/tape/tape-reader.js';
import { CLI_MAIN, spawnCli } from '../../helpers/cli.js';
import { startEverything } from '../../helpers/everything-server.js';
import { startNotesServer, type NotesServer } from '../../fixtures/agents/notes-server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const NOTES = path.join(ROOT, 'test/fixtures/agents/notes-server.ts');
const log = createLogger('silent');
const ROUTE = '/notes/mcp';
const VERSION = '2025-03-26'; // the MCP revision that has batches
type Msg = { jsonrpc: '2.0'; id?: number | string | null; method?: string; params?: unknown; result?: unknown; error?: unknown };

const initialize = (id: number): Msg => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'batch-test', version: '1' } },
});
const call = (id: number, name: string, args: Record<string, unknown> = {}): Msg => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});
const notification: Msg = { jsonrpc: '2.0', method: 'notifications/roots/list_changed' };
/** A recorded call, a destructive call the tape never saw, and a notification: the batch of the issue. */
const BATCH = [call(11, 'read_note', { id: 'a' }), call(12, 'wipe_notes'), notification];

let dir: string;
let notes: NotesServer;

/** POST one message or a batch; the JSON-RPC messages that came back (JSON or SSE), with the status. */
async function post(url: string, body: unknown, sid?: string): Promise<{ status: number; sid: string | null; messages: Msg[] }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': VERSION,
      ...(sid ? { 'mcp-session-id': sid } : {}),
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const messages: Msg[] = [];
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    for (const line of text.split('\n')) if (line.startsWith('data: ')) messages.push(...[JSON.parse(line.slice(6)) as Msg | Msg[]].flat());
  } else if (text !== '') messages.push(...[JSON.parse(text) as Msg | Msg[]].flat());
  return { status: res.status, sid: res.headers.get('mcp-session-id'), messages };
}

async function open(url: string): Promise<string> {
  const init = await post(url, initialize(0));
  expect(init.status).toBe(200);
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, init.sid!);
  return init.sid!;
}

const answerTo = (messages: Msg[], id: number): Msg | undefined => messages.find((m) => m.id === id && m.method === undefined);
const text = (m: Msg | undefined): string =>
  ((m?.result as { content?: { text: string }[] } | undefined)?.content?.[0]?.text ?? '') as string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-batch-'));
  notes = await startNotesServer();
});
afterAll(async () => {
  await notes?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('JSON-RPC batches over Streamable HTTP', () => {
  it('record: each message of a batch is an exchange of its own, with its own answer', async () => {
    const proxy = await startProxy({ mode: 'record', tape: 'notes', dir, port: 0, routes: [{ prefix: ROUTE, upstream: notes.url }], log });
    const url = proxy.url + ROUTE;
    const sid = await open(url);
    expect((await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, sid)).status).toBe(200);
    const single = await post(url, call(2, 'read_note', { id: 'a' }), sid);
    expect(text(answerTo(single.messages, 2))).toBe('note a: buy milk');
    // A batch while recording: the client gets the server's answers; the tape gets one exchange per message.
    const batch = await post(url, [call(3, 'read_note', { id: 'b' }), notification, { jsonrpc: '2.0', id: 4, method: 'tools/list' }], sid);
    expect(batch.status).toBe(200);
    expect(text(answerTo(batch.messages, 3))).toBe('note b: buy milk');
    expect(answerTo(batch.messages, 4)?.result).toMatchObject({ tools: expect.any(Array) });
    await proxy.close();

    const tape = await loadTape(dir, 'notes');
    expect(tape.problems).toEqual([]);
    const inBatch = tape.exchanges.filter((ex) => ex.notes?.batch !== undefined);
    expect(inBatch.map((ex) => [ex.mcp?.method, ex.mcp?.toolName, ex.notes?.batch])).toEqual(
      expect.arrayContaining([
        ['tools/call', 'read_note', { index: 0, size: 3 }],
        ['notifications/roots/list_changed', undefined, { index: 1, size: 3 }],
        ['tools/list', undefined, { index: 2, size: 3 }],
      ]),
    );
    const b = inBatch.find((ex) => ex.mcp?.toolName === 'read_note');
    expect(b?.request.body).toEqual({ kind: 'json', json: call(3, 'read_note', { id: 'b' }) });
    expect(b?.mcp?.result).toEqual({ content: [{ type: 'text', text: 'note b: buy milk' }] });
    expect(inBatch.find((ex) => ex.mcp?.method === 'tools/list')?.mcp?.result).toMatchObject({ tools: expect.any(Array) });
  });

  const variants: { name: string; file?: SideEffectsFile }[] = [
    {
      name: 'a reviewed side-effects file that says wipe_notes: false',
      file: { tools: { read_note: true, wipe_notes: false }, http: [], done: true },
    },
    { name: 'no side-effects file' },
    {
      name: 'a file that does not name it (the tape says destructiveHint: true)',
      file: { tools: { read_note: true }, http: [], done: true },
    },
  ];

  describe.each(variants)('replay --on-miss live with $name', ({ name, file }) => {
    it('answers the batch message by message: the recorded call from the tape, the wipe blocked, the real server never runs it', async () => {
      const saveAs = `notes-replay-${variants.findIndex((v) => v.name === name)}`;
      const proxy = await startProxy({
        mode: 'replay',
        tape: 'notes',
        dir,
        port: 0,
        routes: [],
        onMiss: 'live',
        saveAs,
        matcher: (t) => createReplayMatcher(t.exchanges),
        responders: [createMcpResponder(file ? { sideEffects: file } : {})],
        log,
      });
      const url = proxy.url + ROUTE;
      const sid = await open(url);
      const wipesBefore = notes.wipes();
      const answer = await post(url, BATCH, sid);
      // The same batch from a client that takes JSON only: one JSON array with the two answers.
      const json = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': VERSION, 'mcp-session-id': sid },
        body: JSON.stringify(BATCH),
      });
      expect(json.headers.get('content-type')).toBe('application/json');
      const array = (await json.json()) as Msg[];
      expect(array.map((m) => m.id)).toEqual([11, 12]);
      await proxy.close();

      expect(notes.wipes()).toBe(wipesBefore);
      expect(notes.wipes()).toBe(0);
      expect(answer.status).toBe(200);
      expect(answer.messages.filter((m) => m.method === undefined)).toHaveLength(2);
      expect(text(answerTo(answer.messages, 11))).toBe('note a: buy milk');
      const blocked = answerTo(answer.messages, 12);
      expect(blocked?.result).toMatchObject({ isError: true });
      expect(text(blocked)).toMatch(/tapedeck blocked the call to tool "wipe_notes"/);

      const out = await loadTape(dir, saveAs);
      expect(out.problems).toEqual([]);
      const served = out.exchanges.filter((ex) => ex.mcp?.method !== 'initialize' && ex.mcp?.method !== 'notifications/initialized');
      const once = [
        ['tools/call', 'read_note', 'exact'],
        ['tools/call', 'wipe_notes', 'blocked'],
        ['notifications/roots/list_changed', undefined, 'exact'],
      ];
      expect(served.map((ex) => [ex.mcp?.method, ex.mcp?.toolName, ex.match?.kind])).toEqual([...once, ...once]);
      expect(served.some((ex) => ex.match?.kind === 'live')).toBe(false);
    });
  });

  it("reads a POST's body once: the batch's text is parsed once, none of its messages again", async () => {
    const proxy = await startProxy({
      mode: 'replay',
      tape: 'notes',
      dir,
      port: 0,
      routes: [],
      saveAs: 'notes-parse-once',
      responders: [createMcpResponder()],
      log,
    });
    const url = proxy.url + ROUTE;
    const sid = await open(url);
    const body = JSON.stringify(BATCH);
    const texts = new Set([body, ...BATCH.map((m) => JSON.stringify(m))]);
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const answer = await post(url, BATCH, sid);
      expect(answer.messages.filter((m) => m.method === undefined).map((m) => m.id)).toEqual([11, 12]);
      expect(parse.mock.calls.filter(([text]) => texts.has(text as string)).map(([text]) => (text === body ? 'batch' : 'message'))).toEqual(
        ['batch'],
      );
    } finally {
      parse.mockRestore();
      await proxy.close();
    }
  });

  it('a safe call the tape lacks goes live message by message when the reviewed file allows it; the rest of the batch does not', async () => {
    const proxy = await startProxy({
      mode: 'replay',
      tape: 'notes',
      dir,
      port: 0,
      routes: [],
      onMiss: 'live',
      saveAs: 'notes-replay-live',
      matcher: (t) => createReplayMatcher(t.exchanges, { semantic: false }),
      responders: [createMcpResponder({ sideEffects: { tools: { read_note: true, wipe_notes: false }, http: [], done: true } })],
      log,
    });
    const url = proxy.url + ROUTE;
    const sid = await open(url);
    const answer = await post(url, [call(21, 'read_note', { id: 'zz' }), call(22, 'wipe_notes'), call(23, 'read_note', { id: 'a' })], sid);
    const notificationsOnly = await post(url, [notification, notification], sid);
    await proxy.close();

    expect(notes.wipes()).toBe(0);
    expect(text(answerTo(answer.messages, 21))).toBe('note zz: buy milk');
    expect(text(answerTo(answer.messages, 22))).toMatch(/blocked/);
    expect(text(answerTo(answer.messages, 23))).toBe('note a: buy milk');
    expect(notificationsOnly).toEqual({ status: 202, sid: expect.any(String), messages: [] });
    const out = await loadTape(dir, 'notes-replay-live');
    expect(out.exchanges.filter((ex) => ex.mcp?.method === 'tools/call').map((ex) => [ex.mcp?.toolName, ex.match?.kind])).toEqual(
      expect.arrayContaining([
        ['read_note', 'live'],
        ['wipe_notes', 'blocked'],
        ['read_note', 'exact'],
      ]),
    );
  });

  it('refuses an initialize inside a batch, an empty batch and a batch with a message that is not JSON-RPC (400)', async () => {
    const proxy = await startProxy({
      mode: 'replay',
      tape: 'notes',
      dir,
      port: 0,
      routes: [],
      onMiss: 'live',
      saveAs: 'notes-replay-bad',
      responders: [createMcpResponder()],
      log,
    });
    const url = proxy.url + ROUTE;
    const sid = await open(url);
    expect((await post(url, [initialize(1), call(2, 'wipe_notes')])).status).toBe(400);
    expect((await post(url, [], sid)).status).toBe(400);
    expect((await post(url, [call(2, 'wipe_notes'), { hello: 1 }], sid)).status).toBe(400);
    await proxy.close();
    expect(notes.wipes()).toBe(0);
  });

  it('a JSON-RPC message too deep to read is refused (400) on any route, never forwarded live', async () => {
    const proxy = await startProxy({
      mode: 'replay',
      tape: 'notes',
      dir,
      port: 0,
      // A route the tape never saw MCP on: the message is recognised by its content.
      routes: [{ prefix: '/other/mcp', upstream: notes.url }],
      onMiss: 'live',
      saveAs: 'notes-replay-deep',
      responders: [createMcpResponder()],
      log,
    });
    // A real session on the server, so that a forwarded call would run.
    const sid = await open(notes.url);
    const deep = `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"wipe_notes","arguments":{"x":${'['.repeat(5000)}${']'.repeat(5000)}}}}`;
    const res = await fetch(`${proxy.url}/other/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': VERSION,
        'mcp-session-id': sid,
      },
      body: deep,
    });
    await proxy.close();
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/nested deeper than 512 levels/);
    expect(notes.wipes()).toBe(0);
  });
}, 60_000);

describe('JSON-RPC batches over stdio', () => {
  it('replay --on-miss live without a side-effects file: one line answers the batch; the server never wipes', async () => {
    const wipeLog = path.join(dir, 'stdio-wipes.log');
    const serverCmd = ['--', process.execPath, '--import', 'tsx', NOTES, 'stdio'];
    // Record a session with the SDK client: tools/list and one read_note.
    const client = new Client({ name: 'batch-test', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI_MAIN, 'mcp-stdio', '--tape', 'notes-stdio', '--dir', dir, '--mode', 'record', '--name', 'notes', ...serverCmd],
        cwd: ROOT,
        env: { ...process.env, NOTES_LOG: wipeLog } as Record<string, string>,
        stderr: 'pipe',
      }),
    );
    await client.listTools();
    expect(await client.callTool({ name: 'read_note', arguments: { id: 'a' } })).toEqual({
      content: [{ type: 'text', text: 'note a: buy milk' }],
    });
    await client.close();

    const child = spawnCli(
      [
        'mcp-stdio',
        '--tape',
        'notes-stdio',
        '--dir',
        dir,
        '--mode',
        'replay',
        '--on-miss',
        'live',
        '--save-as',
        'notes-stdio-replay',
        ...serverCmd,
      ],
      { NOTES_LOG: wipeLog },
    );
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stdin.write(JSON.stringify(initialize(0)) + '\n');
    child.stdin.write(JSON.stringify(BATCH) + '\n');
    child.stdin.end();
    expect(await new Promise((r) => child.on('close', r))).toBe(0);

    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Msg | Msg[]);
    expect(lines).toHaveLength(2);
    const batch = lines[1] as Msg[];
    expect(Array.isArray(batch)).toBe(true);
    expect(batch).toHaveLength(2);
    expect(text(answerTo(batch, 11))).toBe('note a: buy milk');
    expect(text(answerTo(batch, 12))).toMatch(/tapedeck blocked the call to tool "wipe_notes"/);
    expect(existsSync(wipeLog) ? readFileSync(wipeLog, 'utf8') : '').toBe('');
    const out = await loadTape(dir, 'notes-stdio-replay');
    expect(out.exchanges.filter((ex) => ex.mcp?.method !== 'initialize').map((ex) => [ex.mcp?.method, ex.match?.kind])).toEqual([
      ['tools/call', 'exact'],
      ['tools/call', 'blocked'],
      ['notifications/roots/list_changed', 'exact'],
    ]);
  });
}, 60_000);

describe('JSON-RPC batches over the legacy HTTP+SSE transport', () => {
  it('each message of a batch is answered on the stream as it would be alone; an unrecorded tool call is blocked', async () => {
    const everything = await startEverything('sse');
    try {
      const rec = await startProxy({
        mode: 'record',
        tape: 'legacy',
        dir,
        port: 0,
        routes: [{ prefix: '/legacy/mcp', upstream: everything.url }],
        log,
      });
      const client = new Client({ name: 'batch-test', version: '1' });
      await client.connect(new SSEClientTransport(new URL(`${rec.url}/legacy/mcp/sse`)));
      await client.callTool({ name: 'echo', arguments: { message: 'hi' } });
      await client.close();
      await rec.close();

      const rep = await startProxy({
        mode: 'replay',
        tape: 'legacy',
        dir,
        port: 0,
        routes: [],
        onMiss: 'live',
        saveAs: 'legacy-replay',
        responders: [createMcpResponder()],
        log,
      });
      // The SDK's SSE client transport sends what it is given: a batch goes out as one POST.
      const transport = new SSEClientTransport(new URL(`${rep.url}/legacy/mcp/sse`));
      const got: Msg[] = [];
      transport.onmessage = (m) => void got.push(m as Msg);
      await transport.start();
      await transport.send(initialize(0) as never);
      await transport.send([call(31, 'echo', { message: 'hi' }), call(32, 'get-sum', { a: 1, b: 2 }), notification] as never);
      await expect.poll(() => got.filter((m) => m.id === 31 || m.id === 32).length).toBe(2);
      await transport.close();
      await rep.close();
      expect(text(answerTo(got, 31))).toBe('Echo: hi');
      expect(text(answerTo(got, 32))).toMatch(/tapedeck blocked the call to tool "get-sum"/);
      const out = await loadTape(dir, 'legacy-replay');
      const posts = out.exchanges.filter((ex) => ex.request.method === 'POST' && ex.mcp?.method !== 'initialize');
      expect(posts.map((ex) => [ex.mcp?.method, ex.match?.kind])).toEqual([
        ['tools/call', 'exact'],
        ['tools/call', 'blocked'],
        ['notifications/roots/list_changed', 'exact'],
      ]);
    } finally {
      await everything.stop();
    }
  });
}, 60_000);
