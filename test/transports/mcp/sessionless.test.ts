import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLogger } from '../../../src/log.js';
import { createMcpResponder } from '../../../src/transports/mcp/responder.js';
import { startProxy } from '../../../src/front/server.js';
import { loadTape } from '../../../src/tape/tape-reader.js';

const log = createLogger('silent');
let dir: string;
let server: Server;
let upstream: string;

/** A sessionless MCP server (the SDK's stateless mode: no Mcp-Session-Id, a fresh server per request). */
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-sessionless-'));
  server = createServer((req, res) => {
    const mcp = new McpServer({ name: 'stateless', version: '1.0.0' });
    mcp.registerTool(
      'add',
      { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() }, annotations: { readOnlyHint: true } },
      ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close());
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

/** The 2026-07-28 shape: no initialize, version in `_meta`, `Mcp-Method` header. Unknown to this SDK server: its error is recorded and replayed. */
async function discover(url: string): Promise<{ status: number; body: unknown; session: string | null }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-method': 'server/discover' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'd1', method: 'server/discover', params: { _meta: { protocolVersion: '2026-07-28' } } }),
  });
  return { status: res.status, body: await res.json(), session: res.headers.get('mcp-session-id') };
}

async function run(url: string): Promise<unknown[]> {
  const client = new Client({ name: 'sessionless', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const out = [await client.listTools(), await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } }), await discover(url)];
  await client.close();
  return out;
}

describe('a sessionless server passes through and replays without session checks', () => {
  it('records and replays identically; replay mints no session id', async () => {
    const rec = await startProxy({ mode: 'record', tape: 'stateless', dir, port: 0, routes: [{ prefix: '/m', upstream }], log });
    const recorded = await run(`${rec.url}/m`);
    await rec.close();
    expect((recorded[1] as { content: { text: string }[] }).content[0]!.text).toBe('42');
    const tape = await loadTape(dir, 'stateless');
    expect(tape.exchanges.some((ex) => ex.response?.headers['mcp-session-id'] !== undefined)).toBe(false);

    const rep = await startProxy({
      mode: 'replay',
      tape: 'stateless',
      dir,
      port: 0,
      routes: [],
      saveAs: 'stateless-replay',
      responders: [createMcpResponder()],
      log,
    });
    const replayed = await run(`${rep.url}/m`);
    await rep.close();
    expect(replayed).toEqual(recorded);
    expect((replayed[2] as { session: string | null }).session).toBeNull();
  });
});
