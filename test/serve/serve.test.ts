import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { createMcpResponder } from '../../src/transports/mcp/responder.js';
import { startServe, type ServeMode, type ServeOptions } from '../../src/serve/serve.js';
import { createReplayMatcher } from '../../src/replay/pipeline.js';
import { createDirStore } from '../../src/tape/stores/dir-store.js';
import { startEverything, type EverythingServer } from '../helpers/everything-server.js';
import { weatherAgent } from '../helpers/realtime-agent.js';
import { realtimeScript, startWsUpstream } from '../helpers/ws-upstream.js';
import { lastUserText, openaiChat, openaiChatStream, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

const log = createLogger('silent');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-serve-'));
});
afterAll(() => (process.env.KEEP ? console.log(dir) : rmSync(dir, { recursive: true, force: true })));

function serveOptions(mode: ServeMode, upstream: string, extra: Partial<ServeOptions> = {}): ServeOptions {
  const routes = [
    { prefix: '/openai', upstream },
    { prefix: '/everything/mcp', upstream: `${upstream}/mcp` },
  ];
  return {
    mode,
    dir,
    port: 0,
    log,
    record: { routes },
    replay: {
      routes: [],
      matcher: (tape) => createReplayMatcher(tape.exchanges, { eager: true }),
      responders: () => [createMcpResponder()],
    },
    ...extra,
  };
}

/** One test's agent: a plain call and a streamed one, both carrying the test's own words. */
async function agent(baseURL: string, words: string): Promise<string[]> {
  const openai = new OpenAI({ apiKey: 'sk-test-SERVE-0123456789', baseURL, maxRetries: 0 });
  const plain = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: words }] });
  const stream = await openai.chat.completions.create({
    model: 'gpt-4o-mini',
    stream: true,
    messages: [{ role: 'user', content: `stream ${words}` }],
  });
  const parts: string[] = [];
  for await (const chunk of stream) parts.push(chunk.choices[0]?.delta.content ?? '');
  return [plain.choices[0]?.message.content ?? '', parts.join('')];
}

describe('tapedeck serve: a tape per test in one server', () => {
  let upstream: ScriptedUpstream;
  const tests = Array.from({ length: 6 }, (_, i) => ({ tape: `suite/test-${i}`, words: `words of test ${i}` }));
  const live: Record<string, string[]> = {};

  beforeAll(async () => {
    // Echoes each request's words, so a tape that held another test's request would answer with the wrong words.
    upstream = await startScriptedUpstream((req) => {
      const text = lastUserText(req.body);
      return (req.body as { stream?: boolean }).stream === true
        ? openaiChatStream({ parts: ['echo: ', text] })
        : openaiChat({ content: `echo: ${text}` });
    });
  });
  afterAll(async () => upstream?.close());

  it('auto mode records each test on its own tape, in parallel, chosen by the /@NAME base URL', async () => {
    const server = await startServe(serveOptions('auto', upstream.url));
    const results = await Promise.all(tests.map(async (t) => agent(`${server.url}/@${encodeURIComponent(t.tape)}/openai/v1`, t.words)));
    const report = await server.close();
    tests.forEach((t, i) => {
      live[t.tape] = results[i]!;
      expect(results[i]).toEqual([`echo: ${t.words}`, `echo: stream ${t.words}`]);
    });
    expect(report.map((r) => [r.tape, r.mode, r.recorded, r.missed]).sort()).toEqual(tests.map((t) => [t.tape, 'record', 2, 0]).sort());
    // Each tape holds its own test's two requests and nothing else.
    const store = createDirStore(dir);
    for (const t of tests) {
      const tape = await store.load(t.tape);
      expect(tape.exchanges).toHaveLength(2);
      const bodies = JSON.stringify(tape.exchanges.map((ex) => ex.request.body));
      for (const other of tests) expect(bodies.includes(other.words)).toBe(other === t);
      expect(JSON.stringify(tape)).not.toContain('sk-test-SERVE');
    }
  });

  it('auto mode replays every tape with the upstream gone, in parallel, with the same answers; the header names a tape too', async () => {
    const before = upstream.requests.length;
    const server = await startServe(serveOptions('auto', 'http://127.0.0.1:9'));
    const results = await Promise.all(
      tests.map(async (t, i) =>
        i % 2 === 0
          ? agent(`${server.url}/@${encodeURIComponent(t.tape)}/openai/v1`, t.words)
          : agentWithHeader(`${server.url}/openai/v1`, t.tape, t.words),
      ),
    );
    const report = await server.close();
    tests.forEach((t, i) => expect(results[i]).toEqual(live[t.tape]));
    expect(upstream.requests.length).toBe(before);
    expect(report.every((r) => r.mode === 'replay' && r.replayed === 2 && r.missed === 0 && r.savedAs === undefined)).toBe(true);
    // Replay tapes are not kept by default: the folder holds the recordings only.
    expect((await createDirStore(dir).names()).filter((n) => n.includes('.replay-'))).toEqual([]);
  });

  it('a request that names no tape gets a 400 saying how to name one; with a default tape it goes there', async () => {
    const server = await startServe(serveOptions('auto', upstream.url));
    const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${server.url}/openai/v1`, maxRetries: 0 });
    const err = await openai.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toMatch(/names no tape: start its path with \/@NAME/);
    const bad = await fetch(`${server.url}/@..%2Fescape/openai/v1/chat/completions`, { method: 'POST', body: '{}' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('invalid tape name');
    expect(await server.close()).toEqual([]);

    const withDefault = await startServe(serveOptions('record', upstream.url, { defaultTape: 'default-tape' }));
    expect(await agent(`${withDefault.url}/openai/v1`, 'no name')).toEqual(['echo: no name', 'echo: stream no name']);
    expect((await withDefault.close()).map((r) => [r.tape, r.recorded])).toEqual([['default-tape', 2]]);
  });

  it('replay mode: a missing tape is a clear 404 for that test only; the others replay', async () => {
    const server = await startServe(serveOptions('replay', 'http://127.0.0.1:9'));
    const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${server.url}/@never-recorded/openai/v1`, maxRetries: 0 });
    const err = await openai.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as Error).message).toMatch(/never-recorded/);
    const t = tests[0]!;
    expect(await agent(`${server.url}/@${encodeURIComponent(t.tape)}/openai/v1`, t.words)).toEqual(live[t.tape]);
    // A request the tape does not hold is a miss, reported.
    const other = new OpenAI({ apiKey: 'sk-test', baseURL: `${server.url}/@${encodeURIComponent(t.tape)}/openai/v1`, maxRetries: 0 });
    await expect(
      other.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'not on the tape' }] }),
    ).rejects.toThrow();
    const report = await server.close();
    expect(report.find((r) => r.tape === 'never-recorded')?.error?.code).toBe('TAPE_NOT_FOUND');
    expect(report.find((r) => r.tape === t.tape)).toMatchObject({ mode: 'replay', replayed: 2, missed: 1 });
  });

  it('DELETE /@NAME closes a tape when its test is over (file and lock given back); a later request records on', async () => {
    const server = await startServe(serveOptions('record', upstream.url));
    const base = `${server.url}/@closed-early`;
    await agent(`${base}/openai/v1`, 'first');
    const closed = await fetch(base, { method: 'DELETE' });
    expect(closed.status).toBe(200);
    expect(await closed.json()).toMatchObject({ tape: { tape: 'closed-early', mode: 'record', recorded: 2 } });
    // Closed: another writer may have it now (the lock is free), and this server opens it again to append.
    const store = createDirStore(dir);
    await (await store.openWriter({ name: 'closed-early', ifExists: 'append', header: { mode: 'record', routes: [] } })).close();
    await agent(`${base}/openai/v1`, 'second');
    expect(await (await fetch(`${server.url}/@never-opened`, { method: 'DELETE' })).json()).toEqual({ tape: null });
    expect((await server.close()).map((r) => [r.tape, r.recorded])).toEqual([['closed-early', 4]]);
    expect((await store.load('closed-early')).exchanges).toHaveLength(4);
  });

  it('refresh re-records a tape; record mode refuses a tape that exists', async () => {
    const t = tests[1]!;
    const refresh = await startServe(serveOptions('refresh', upstream.url));
    await agent(`${refresh.url}/@${encodeURIComponent(t.tape)}/openai/v1`, 'fresh words');
    expect((await refresh.close())[0]).toMatchObject({ tape: t.tape, mode: 'record', recorded: 2 });
    const tape = await createDirStore(dir).load(t.tape);
    expect(tape.exchanges).toHaveLength(2);
    expect(JSON.stringify(tape.exchanges[0]?.request.body)).toContain('fresh words');

    const record = await startServe(serveOptions('record', upstream.url));
    const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${record.url}/@${encodeURIComponent(t.tape)}/openai/v1`, maxRetries: 0 });
    const err = await openai.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.ConflictError);
    expect((await record.close())[0]?.error?.code).toBe('TAPE_EXISTS');
  });
});

async function agentWithHeader(baseURL: string, tape: string, words: string): Promise<string[]> {
  const openai = new OpenAI({ apiKey: 'sk-test-SERVE-0123456789', baseURL, maxRetries: 0, defaultHeaders: { 'x-tapedeck-tape': tape } });
  const plain = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: words }] });
  const stream = await openai.chat.completions.create({
    model: 'gpt-4o-mini',
    stream: true,
    messages: [{ role: 'user', content: `stream ${words}` }],
  });
  const parts: string[] = [];
  for await (const chunk of stream) parts.push(chunk.choices[0]?.delta.content ?? '');
  return [plain.choices[0]?.message.content ?? '', parts.join('')];
}

describe('tapedeck serve: MCP Streamable HTTP, sessions kept per tape', () => {
  let everything: EverythingServer;
  beforeAll(async () => {
    everything = await startEverything('streamableHttp');
  });
  afterAll(async () => everything?.stop());

  const session = async (url: string, message: string): Promise<unknown[]> => {
    const client = new Client({ name: 'serve-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const tools = await client.listTools();
    const echo = await client.callTool({ name: 'echo', arguments: { message } });
    await client.close();
    return [tools.tools.map((t) => t.name), echo];
  };

  it('records two MCP tapes in parallel, then replays both in parallel with the server stopped', async () => {
    const opts = (mode: ServeMode): ServeOptions => ({
      ...serveOptions(mode, 'http://127.0.0.1:9'),
      record: { routes: [{ prefix: '/everything/mcp', upstream: `${everything.url}/mcp` }] },
    });
    const names = ['mcp-a', 'mcp-b'];
    const recordServer = await startServe(opts('auto'));
    const recorded = await Promise.all(names.map(async (n) => session(`${recordServer.url}/@${n}/everything/mcp`, `hello from ${n}`)));
    expect((await recordServer.close()).map((r) => r.mode)).toEqual(['record', 'record']);
    expect(JSON.stringify(recorded[0])).toContain('hello from mcp-a');
    expect(JSON.stringify(recorded[1])).toContain('hello from mcp-b');

    await everything.stop();
    const replayServer = await startServe(opts('auto'));
    const replayed = await Promise.all(names.map(async (n) => session(`${replayServer.url}/@${n}/everything/mcp`, `hello from ${n}`)));
    const report = await replayServer.close();
    expect(replayed).toEqual(recorded);
    expect(report.map((r) => [r.tape, r.mode, r.missed])).toEqual([
      ['mcp-a', 'replay', 0],
      ['mcp-b', 'replay', 0],
    ]);
  });
});

describe('tapedeck serve: WebSocket sessions and forward-proxy requests, each on the tape they name', () => {
  it('records a Realtime session on the /@NAME tape and replays it with the upstream gone', async () => {
    const upstream = await startWsUpstream(realtimeScript());
    try {
      const opts = (mode: ServeMode): ServeOptions => ({
        ...serveOptions(mode, upstream.url),
        record: { routes: [{ prefix: '/openai', upstream: upstream.url }] },
      });
      const rec = await startServe(opts('auto'));
      const recorded = await weatherAgent(`${rec.url.replace('http', 'ws')}/@ws-a/openai/v1/realtime?model=gpt-realtime`);
      expect((await rec.close()).map((r) => [r.tape, r.mode, r.recorded])).toEqual([['ws-a', 'record', 1]]);
      const tape = await createDirStore(dir).load('ws-a');
      expect(tape.exchanges[0]?.transport).toBe('websocket');

      await upstream.close();
      const rep = await startServe(opts('auto'));
      const replayed = await weatherAgent(`${rep.url.replace('http', 'ws')}/@ws-a/openai/v1/realtime?model=gpt-realtime`);
      expect((await rep.close()).map((r) => [r.tape, r.mode, r.replayed, r.missed])).toEqual([['ws-a', 'replay', 1, 0]]);
      expect(replayed.events.map((e) => e.type)).toEqual(recorded.events.map((e) => e.type));
      expect(upstream.connections).toBe(1);
    } finally {
      await upstream.close();
    }
  });

  it('a client that uses serve as its HTTP proxy names its tape with x-tapedeck-tape; the header is not recorded', async () => {
    const upstream = await startScriptedUpstream((req) => openaiChat({ content: `echo: ${lastUserText(req.body)}` }));
    // As an HTTP proxy client sends it: the absolute URL as the request target, to the proxy's port.
    const call = async (proxyUrl: string, tape: string, words: string): Promise<unknown> => {
      const proxy = new URL(proxyUrl);
      const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: words }] });
      const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpRequest(
          {
            host: proxy.hostname,
            port: proxy.port,
            method: 'POST',
            path: `${upstream.url}/v1/chat/completions`,
            headers: { host: new URL(upstream.url).host, 'content-type': 'application/json', 'x-tapedeck-tape': tape },
          },
          (res) => {
            let text = '';
            res.on('data', (d: Buffer) => (text += d.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      expect(answer.status, answer.text).toBe(200);
      return (JSON.parse(answer.text) as { choices: { message: { content: string } }[] }).choices[0]?.message.content;
    };
    try {
      const rec = await startServe(serveOptions('auto', upstream.url));
      expect(await Promise.all([call(rec.url, 'proxied-a', 'a'), call(rec.url, 'proxied-b', 'b')])).toEqual(['echo: a', 'echo: b']);
      await rec.close();
      const tape = await createDirStore(dir).load('proxied-a');
      expect(tape.exchanges).toHaveLength(1);
      expect(tape.exchanges[0]?.route).toBe(upstream.url);
      expect(tape.exchanges[0]?.request.headers['x-tapedeck-tape']).toBeUndefined();
      await upstream.close();

      const rep = await startServe(serveOptions('auto', 'http://127.0.0.1:9'));
      expect(await call(rep.url, 'proxied-b', 'b')).toBe('echo: b');
      expect((await rep.close()).map((r) => [r.tape, r.mode, r.replayed])).toEqual([['proxied-b', 'replay', 1]]);
      expect(upstream.requests).toHaveLength(2);
    } finally {
      await upstream.close();
    }
  });
});
