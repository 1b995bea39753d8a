/**
 * Over stdio, a recorded `sampling/createMessage` in the middle of a call is a contract too: replay writes the server's
 * request, reads the client's answer from stdin (one line at a time, as ever), and serves the recorded result only when
 * the answer is the recorded one.
 */
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { createExchangeLog } from '../../../src/engine/exchange-log.js';
import { createReplayMatcher } from '../../../src/replay/pipeline.js';
import { policyForTape } from '../../../src/replay/side-effects.js';
import { stdioEvent, stdioRequest } from '../../../src/transports/stdio/exchange.js';
import { replayStdio } from '../../../src/transports/stdio/replay.js';
import { createMemoryStore } from '../../../src/tape/stores/memory-store.js';
import type { NewExchange } from '../../../src/tape/stores/tape-writer.js';
import { PipeClientTransport } from '../../helpers/pipe-client-transport.js';
import { log } from './stdio-tape.js';

const ROUTE = 'stdio:writer';
const SAMPLED = { model: 'stub', role: 'assistant', content: { type: 'text', text: 'a short poem' } };
const RESULT = { content: [{ type: 'text', text: 'the server wrote: a short poem' }] };

/** A tape as `mcp-stdio --mode record` writes it: `write_poem` asked the client to sample, the client answered. */
async function recorded() {
  const store = createMemoryStore();
  const writer = await store.openWriter({ name: 'poem', header: { mode: 'record', routes: [] } });
  const out = createExchangeLog(writer, log);
  const put = (at: number, request: Record<string, unknown>, answer?: Record<string, unknown>, events: Record<string, unknown>[] = []) => {
    const ex: NewExchange = {
      startedAt: new Date().toISOString(),
      offsetMs: at,
      transport: 'stdio',
      route: ROUTE,
      upstream: 'node writer.js',
      request: stdioRequest(request),
      response:
        answer === undefined
          ? { status: 202, headers: {}, body: { kind: 'empty' } }
          : {
              status: 200,
              headers: {},
              body: { kind: 'json', json: answer },
              ...(events.length > 0 ? { events: events.map((e, i) => stdioEvent(e, i + 1)) } : {}),
            },
      timing: { durationMs: answer === undefined ? 0 : 30 },
    };
    out.write(ex);
  };
  const caps = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'writer', version: '1' } };
  put(
    0,
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: { sampling: {} }, clientInfo: { name: 'c', version: '1' } },
    },
    { jsonrpc: '2.0', id: 0, result: caps },
  );
  put(5, { jsonrpc: '2.0', method: 'notifications/initialized' });
  const ask = {
    jsonrpc: '2.0',
    id: 0,
    method: 'sampling/createMessage',
    params: { messages: [{ role: 'user', content: { type: 'text', text: 'a poem' } }], maxTokens: 20 },
  };
  // The client's answer is its own exchange, recorded while the call was open.
  put(
    10,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write_poem', arguments: {} } },
    { jsonrpc: '2.0', id: 1, result: RESULT },
    [ask],
  );
  put(12, { jsonrpc: '2.0', id: 0, result: SAMPLED });
  await out.drain();
  await writer.close();
  return { store, tape: await store.load('poem') };
}

async function replayWith(sampled: unknown, saveAs: string) {
  const { store, tape } = await recorded();
  const out = await store.openWriter({ name: saveAs, header: { mode: 'replay', routes: [] } });
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const served = replayStdio({
    tape,
    name: ROUTE,
    matcher: (served) => createReplayMatcher(served),
    policy: policyForTape(tape.exchanges, undefined),
    onMiss: 'strict',
    out,
    log,
    stdin,
    stdout,
  });
  const client = new Client({ name: 'c', version: '1' }, { capabilities: { sampling: {} } });
  const asked: unknown[] = [];
  client.setRequestHandler(CreateMessageRequestSchema, (req) => {
    asked.push(req.params.messages);
    return sampled as never;
  });
  await client.connect(new PipeClientTransport(stdin, stdout));
  const got = await client.callTool({ name: 'write_poem', arguments: {} }).then(
    (r) => r,
    (err: Error) => ({ threw: err.message }),
  );
  await client.close();
  expect(await served).toBe(0);
  return { got, asked, replayed: await store.load(saveAs) };
}

describe('stdio replay holds the client to its recorded answer to a server request', () => {
  it('the same answer: the recorded result', async () => {
    const { got, asked, replayed } = await replayWith(SAMPLED, 'same');
    expect(asked).toHaveLength(1);
    expect(got).toEqual(RESULT);
    expect(replayed.exchanges.map((ex) => [ex.mcp?.method, ex.match?.kind])).toEqual([
      ['initialize', 'semantic'],
      ['notifications/initialized', 'exact'],
      ['tapedeck/response', 'exact'],
      ['tools/call', 'exact'],
    ]);
  });

  it('another answer: a JSON-RPC error naming what differed, a miss on the replay tape', async () => {
    const { got, replayed } = await replayWith({ ...SAMPLED, content: { type: 'text', text: 'a long novel' } }, 'other');
    expect(got).toEqual({ threw: expect.stringContaining('result.content.text: "a short poem" vs "a long novel"') });
    const call = replayed.exchanges.find((ex) => ex.mcp?.method === 'tools/call');
    expect(call?.match).toMatchObject({ kind: 'miss', stage: 'mcp-server-request' });
  });
});
