/** Replay answers framed as the upstream framed them (chunked or a length; HEAD keeps its length), and without tapedeck's headers on request. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayCommand } from '../../../src/cli/replay.js';
import { createLogger } from '../../../src/log.js';
import { createMcpResponder } from '../../../src/transports/mcp/responder.js';
import { startProxy } from '../../../src/front/server.js';
import { startEverything } from '../../helpers/everything-server.js';
import { loadTape } from '../../../src/tape/tape-reader.js';
import { spawnCli, waitForListening } from '../../helpers/cli.js';
import { rawRequest, type RawResponse } from '../../helpers/raw-http.js';
import { openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../../helpers/scripted-upstream.js';

const log = createLogger('silent');
const REPORT = 'x'.repeat(12_345);
let dir: string;
let upstream: Server;
let upstreamUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-replay-headers-'));
  // An upstream that frames its answers in each of the ways HTTP/1.1 allows for a body that is not a stream.
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/chunked') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"framing":');
        res.end('"chunked"}');
      } else if (req.url === '/length') {
        const body = '{"framing":"length"}';
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
        res.end(body);
      } else if (req.url === '/report.bin') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(REPORT.length) });
        res.end(req.method === 'HEAD' ? undefined : REPORT);
      } else {
        res.writeHead(404).end();
      }
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise<void>((r) => upstream.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

describe('framing in replay', () => {
  const ask = async (base: string): Promise<Record<string, RawResponse>> => ({
    chunked: await rawRequest(base, { path: '/api/chunked' }),
    length: await rawRequest(base, { path: '/api/length' }),
    head: await rawRequest(base, { method: 'HEAD', path: '/api/report.bin' }),
    get: await rawRequest(base, { path: '/api/report.bin' }),
  });
  let recorded: Record<string, RawResponse>;
  let replayed: Record<string, RawResponse>;

  beforeAll(async () => {
    const rec = await startProxy({
      mode: 'record',
      tape: 'framing',
      dir,
      port: 0,
      routes: [{ prefix: '/api', upstream: upstreamUrl }],
      log,
    });
    recorded = await ask(rec.url);
    await rec.close();
    const rep = await startProxy({ mode: 'replay', tape: 'framing', dir, port: 0, routes: [], saveAs: 'framing-replay', log });
    replayed = await ask(rep.url);
    await rep.close();
  });

  it('the tape keeps how each answer was framed', async () => {
    const tape = await loadTape(dir, 'framing');
    const byPath = Object.fromEntries(tape.exchanges.map((ex) => [`${ex.request.method} ${ex.request.path}`, ex.response?.headers]));
    expect(byPath['GET /chunked']?.['transfer-encoding']).toBe('chunked');
    expect(byPath['GET /chunked']?.['content-length']).toBeUndefined();
    expect(byPath['GET /length']?.['content-length']).toBe('20');
    expect(byPath['HEAD /report.bin']?.['content-length']).toBe('12345');
  });

  it('a chunked answer replays chunked, an answer with a length replays with it', () => {
    for (const r of [recorded, replayed]) {
      expect(r.chunked?.headers['transfer-encoding']).toBe('chunked');
      expect(r.chunked?.headers['content-length']).toBeUndefined();
      expect(r.chunked?.body).toBe('{"framing":"chunked"}');
      expect(r.length?.headers['content-length']).toBe('20');
      expect(r.length?.headers['transfer-encoding']).toBeUndefined();
      expect(r.length?.body).toBe('{"framing":"length"}');
    }
    expect(replayed.chunked?.headers['x-tapedeck-match']).toBe('exact');
  });

  it('HEAD replays with the recorded content-length and no body (issue 13 #13)', () => {
    for (const r of [recorded, replayed]) {
      expect(r.head?.status).toBe(200);
      expect(r.head?.headers['content-length']).toBe('12345');
      expect(r.head?.body).toBe('');
      expect(r.get?.headers['content-length']).toBe('12345');
      expect(r.get?.body).toBe(REPORT);
    }
  });
});

describe('--no-match-headers', () => {
  let llm: ScriptedUpstream;
  const routes = (): { prefix: string; upstream: string }[] => [{ prefix: '/openai', upstream: llm.url }];
  const tapedeckHeaders = (h: Headers | RawResponse['headers']): string[] =>
    (h instanceof Headers ? [...h.keys()] : Object.keys(h)).filter((k) => k.startsWith('x-tapedeck-'));

  beforeAll(async () => {
    llm = await startScriptedUpstream(() => openaiChat({ content: 'Hello from the tape' }));
    const rec = await startProxy({ mode: 'record', tape: 'headers', dir, port: 0, routes: routes(), log });
    const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${rec.url}/openai/v1`, maxRetries: 0 });
    await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] });
    await rec.close();
  });
  afterAll(async () => llm.close());

  it('an SDK that exposes raw headers sees no x-tapedeck-* header on a hit or a miss; the replay tape still says how each matched', async () => {
    for (const matchHeaders of [true, false]) {
      const rep = await startProxy({
        mode: 'replay',
        tape: 'headers',
        dir,
        port: 0,
        routes: [],
        saveAs: `headers-replay-${matchHeaders}`,
        log,
        matchHeaders,
      });
      const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${rep.url}/openai/v1`, maxRetries: 0 });
      const hit = await openai.chat.completions
        .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] })
        .withResponse();
      const miss = await openai.chat.completions
        .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Something never recorded' }] })
        .catch((e: unknown) => e as InstanceType<typeof OpenAI.NotFoundError>);
      await rep.close();
      expect(hit.data.choices[0]?.message.content).toBe('Hello from the tape');
      expect(miss).toBeInstanceOf(OpenAI.NotFoundError);
      if (matchHeaders) {
        expect(tapedeckHeaders(hit.response.headers)).toEqual(expect.arrayContaining(['x-tapedeck-match', 'x-tapedeck-source']));
        expect(tapedeckHeaders((miss as InstanceType<typeof OpenAI.NotFoundError>).headers)).toContain('x-tapedeck-match');
      } else {
        expect(tapedeckHeaders(hit.response.headers)).toEqual([]);
        expect(tapedeckHeaders((miss as InstanceType<typeof OpenAI.NotFoundError>).headers)).toEqual([]);
        // Not a tapedeck header: the SDKs' own "do not retry" stays.
        expect((miss as InstanceType<typeof OpenAI.NotFoundError>).headers.get('x-should-retry')).toBe('false');
      }
      const out = await loadTape(dir, `headers-replay-${matchHeaders}`);
      expect(out.exchanges.map((ex) => ex.match?.kind)).toEqual(['exact', 'miss']);
    }
  });

  it('MCP answers from the tape carry no x-tapedeck-* header either', async () => {
    const server = await startEverything('streamableHttp');
    const mcpRoutes = [{ prefix: '/everything/mcp', upstream: `${server.url}/mcp` }];
    const session = async (url: string): Promise<string[]> => {
      const seen: string[] = [];
      const fetchAndLook: typeof fetch = async (input, init) => {
        const res = await fetch(input, init);
        seen.push(...tapedeckHeaders(res.headers));
        return res;
      };
      const client = new Client({ name: 'headers', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/everything/mcp`), { fetch: fetchAndLook }));
      await client.callTool({ name: 'echo', arguments: { message: 'no headers' } });
      await client.close();
      return seen;
    };
    try {
      const rec = await startProxy({ mode: 'record', tape: 'mcp-headers', dir, port: 0, routes: mcpRoutes, log });
      await session(rec.url);
      await rec.close();
    } finally {
      await server.stop();
    }
    const rep = await startProxy({
      mode: 'replay',
      tape: 'mcp-headers',
      dir,
      port: 0,
      routes: [],
      saveAs: 'mcp-headers-replay',
      responders: [createMcpResponder()],
      log,
      matchHeaders: false,
    });
    const seen = await session(rep.url);
    await rep.close();
    expect(seen).toEqual([]);
    const out = await loadTape(dir, 'mcp-headers-replay');
    expect(out.exchanges.find((ex) => ex.mcp?.toolName === 'echo')?.match?.kind).toBe('exact');
  });

  it('the replay command takes --no-match-headers', async () => {
    const child = spawnCli(['replay', '--tape', 'headers', '--dir', dir, '--port', '0', '--no-match-headers', '--save-as', 'headers-cli']);
    try {
      const url = await waitForListening(child);
      const res = await rawRequest(url, {
        method: 'POST',
        path: '/openai/v1/chat/completions',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] }),
      });
      expect(res.status).toBe(200);
      expect(tapedeckHeaders(res.headers)).toEqual([]);
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
    }
    expect(replayCommand.usage).toContain('--no-match-headers');
  });
});
