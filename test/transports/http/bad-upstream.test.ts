/**
 * Inputs and upstreams that used to go wrong (issue 13): `Expect: 100-continue`, a compressed event stream, and
 * one route carrying both an LLM API and an MCP server.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { startProxy } from '../../../src/front/server.js';
import { loadTape } from '../../../src/tape/tape-reader.js';
import { rawRequest } from '../../helpers/raw-http.js';
import { openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../../helpers/scripted-upstream.js';

const log = createLogger('silent');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-bad-upstream-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Expect: 100-continue', () => {
  let upstream: ScriptedUpstream;
  beforeAll(async () => {
    upstream = await startScriptedUpstream(() => openaiChat({ content: 'continued' }));
  });
  afterAll(async () => upstream.close());

  it('is answered 100 by tapedeck and not sent upstream; the request is recorded and answered', async () => {
    const rec = await startProxy({
      mode: 'record',
      tape: 'expect',
      dir,
      port: 0,
      routes: [{ prefix: '/llm', upstream: upstream.url }],
      log,
    });
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    try {
      const res = await rawRequest(rec.url, {
        method: 'POST',
        path: '/llm/v1/chat/completions',
        headers: { 'content-type': 'application/json', expect: '100-continue', 'content-length': String(Buffer.byteLength(body)) },
        body,
      });
      expect(res.status, res.body).toBe(200);
      expect(res.informational).toEqual([100]);
      expect(JSON.parse(res.body)).toMatchObject({ choices: [{ message: { content: 'continued' } }] });
    } finally {
      await rec.close();
    }
    expect(upstream.requests[0]?.headers.expect).toBeUndefined();
    const tape = await loadTape(dir, 'expect');
    expect(tape.exchanges[0]?.llm?.outputText).toBe('continued');
  });
});

describe('a compressed event stream', () => {
  it('is recorded event by event (decoded, whatever accept-encoding said) and replayed as the same stream', async () => {
    const { createServer } = await import('node:http');
    const { createGzip, constants } = await import('node:zlib');
    const chunk = (content: string | null, finish: string | null = null): string =>
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }] })}\n\n`;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        // A server that compresses its stream although the proxy asked for identity.
        res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
        const gzip = createGzip();
        gzip.pipe(res);
        for (const part of [chunk('Zipped '), chunk('stream '), chunk('works'), chunk(null, 'stop'), 'data: [DONE]\n\n'])
          gzip.write(part, () => undefined);
        gzip.flush(constants.Z_SYNC_FLUSH, () => gzip.end());
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const upstream = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const { default: OpenAI } = await import('openai');
    const ask = async (base: string): Promise<string> => {
      const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${base}/llm/v1`, maxRetries: 0 });
      let text = '';
      for await (const c of await client.chat.completions.create({
        model: 'm',
        stream: true,
        messages: [{ role: 'user', content: 'zip' }],
      }))
        text += c.choices[0]?.delta.content ?? '';
      return text;
    };
    const rec = await startProxy({ mode: 'record', tape: 'gzip-sse', dir, port: 0, routes: [{ prefix: '/llm', upstream }], log });
    try {
      expect(await ask(rec.url)).toBe('Zipped stream works');
    } finally {
      await rec.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
    const tape = await loadTape(dir, 'gzip-sse');
    const ex = tape.exchanges[0]!;
    expect(ex.response?.events?.map((e) => e.data.slice(0, 6))).toEqual(['{"id":', '{"id":', '{"id":', '{"id":', '[DONE]']);
    expect(ex.response?.tail).toBeUndefined();
    expect(ex.llm?.outputText).toBe('Zipped stream works');

    const rep = await startProxy({ mode: 'replay', tape: 'gzip-sse', dir, port: 0, routes: [], saveAs: 'gzip-sse-replay', log });
    try {
      expect(await ask(rep.url)).toBe('Zipped stream works');
    } finally {
      await rep.close();
    }
  });
});

describe('one route carrying an LLM API and an MCP server', () => {
  it('decides per request: the chat call is replayed as HTTP, the MCP calls as MCP', async () => {
    const { createTapeWriter } = await import('../../../src/tape/stores/tape-writer.js');
    const { describeExchange } = await import('../../../src/providers/describe.js');
    const { createMcpResponder } = await import('../../../src/transports/mcp/responder.js');
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const { default: OpenAI } = await import('openai');
    const writer = await createTapeWriter({
      dir,
      name: 'mixed',
      header: { mode: 'record', routes: [{ prefix: '/gw', upstream: 'http://127.0.0.1:9' }] },
    });
    const at = {
      startedAt: new Date().toISOString(),
      offsetMs: 0,
      transport: 'http' as const,
      route: '/gw',
      upstream: 'http://127.0.0.1:9',
      timing: { durationMs: 1 },
    };
    const rpc = (method: string, id: number, result: unknown, params?: unknown) =>
      describeExchange({
        ...at,
        request: {
          method: 'POST',
          path: '/mcp',
          query: [],
          headers: { 'content-type': 'application/json' },
          body: { kind: 'json', json: { jsonrpc: '2.0', id, method, params } },
        },
        response: {
          status: 200,
          headers: { 'content-type': 'application/json', 'mcp-session-id': 's1' },
          body: { kind: 'json', json: { jsonrpc: '2.0', id, result } },
        },
      });
    await writer.append(
      rpc(
        'initialize',
        0,
        { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'gw', version: '1' } },
        {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'c', version: '1' },
        },
      ),
    );
    await writer.append(rpc('tools/list', 1, { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }));
    await writer.append(
      describeExchange({
        ...at,
        request: {
          method: 'POST',
          path: '/v1/chat/completions',
          query: [],
          headers: {},
          body: { kind: 'json', json: { model: 'm', messages: [{ role: 'user', content: 'both' }] } },
        },
        response: {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: { kind: 'json', json: (openaiChat({ content: 'llm answer' }) as { body: unknown }).body },
        },
      }),
    );
    await writer.close();

    const rep = await startProxy({
      mode: 'replay',
      tape: 'mixed',
      dir,
      port: 0,
      routes: [],
      saveAs: 'mixed-replay',
      responders: [createMcpResponder()],
      log,
    });
    try {
      const llm = new OpenAI({ apiKey: 'sk-test', baseURL: `${rep.url}/gw/v1`, maxRetries: 0 });
      const chat = await llm.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'both' }] });
      expect(chat.choices[0]?.message.content).toBe('llm answer');
      const client = new Client({ name: 'c', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${rep.url}/gw/mcp`)));
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
      await client.close();
    } finally {
      await rep.close();
    }
  });
});
