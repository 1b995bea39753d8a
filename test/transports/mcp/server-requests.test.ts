import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { createMcpResponder } from '../../../src/transports/mcp/responder.js';
import { startProxy } from '../../../src/front/server.js';
import { loadTape } from '../../../src/tape/tape-reader.js';
import { startEverything, type EverythingServer } from '../../helpers/everything-server.js';

const log = createLogger('silent');
let dir: string;
let server: EverythingServer;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-sampling-'));
  server = await startEverything('streamableHttp');
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A client that can sample: the server asks it for an LLM completion in the middle of a tool call. */
async function sample(url: string): Promise<{ result: unknown; asked: unknown[] }> {
  const client = new Client({ name: 'sampler', version: '1' }, { capabilities: { sampling: {} } });
  const asked: unknown[] = [];
  client.setRequestHandler(CreateMessageRequestSchema, (req) => {
    asked.push(req.params.messages);
    return { model: 'stub-model', role: 'assistant', content: { type: 'text', text: 'sampled answer' } };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const result = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 5 } });
  await client.close();
  return { result, asked };
}

describe('server-to-client requests on the answer stream (sampling)', () => {
  it('records the sampling request with the call and replays it to the client before the answer', async () => {
    const rec = await startProxy({
      mode: 'record',
      tape: 'sampling',
      dir,
      port: 0,
      routes: [{ prefix: '/ev', upstream: `${server.url}/mcp` }],
      log,
    });
    const recorded = await sample(`${rec.url}/ev`);
    await rec.close();
    expect(recorded.asked).toHaveLength(1);
    expect(JSON.stringify(recorded.result)).toContain('sampled answer');
    const tape = await loadTape(dir, 'sampling');
    const call = tape.exchanges.find((ex) => ex.mcp?.toolName === 'trigger-sampling-request');
    expect(call?.mcp?.notifications.map((n) => (n.message as { method?: string }).method)).toContain('sampling/createMessage');
    // The client's answer to the server's request is its own exchange.
    expect(tape.exchanges.some((ex) => ex.mcp?.method === 'tapedeck/response')).toBe(true);

    await server.stop();
    const rep = await startProxy({
      mode: 'replay',
      tape: 'sampling',
      dir,
      port: 0,
      routes: [],
      saveAs: 'sampling-replay',
      responders: [createMcpResponder()],
      log,
    });
    const replayed = await sample(`${rep.url}/ev`);
    await rep.close();
    expect(replayed).toEqual(recorded);
  });
}, 60_000);
