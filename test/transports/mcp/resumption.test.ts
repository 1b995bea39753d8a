/**
 * Resumable streams (the 2025-11-25 revision's "Resumability and Redelivery") and sampling with tools, recorded and
 * replayed with the official SDK on both sides: a server with the SDK's event store that closes a call's stream
 * after its first progress (the polling pattern, `closeSSEStream`), so the client reconnects with `Last-Event-ID` and
 * gets the rest on a GET; and a tool that asks the client to sample with tools (`tool_use`, then `tool_result`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  type CreateMessageRequest,
  type CreateMessageResult,
  type CreateMessageResultWithTools,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLogger } from '../../../src/log.js';
import { startProxy } from '../../../src/front/server.js';
import { createMcpResponder } from '../../../src/transports/mcp/responder.js';
import { loadTape } from '../../../src/tape/tape-reader.js';
import type { Exchange } from '../../../src/tape/schema.js';

const log = createLogger('silent');
const RETRY_MS = 20;

/** The server: `count {n}` sends n progress notifications, closing the call's stream after the first; `plan {goal}` samples with tools. */
function mcpServer(): McpServer {
  const server = new McpServer({ name: 'resumable-test-server', version: '1.0.0' });
  server.registerTool('count', { description: 'Count to n', inputSchema: { n: z.number() } }, async ({ n }, extra) => {
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= n; i++) {
      if (token !== undefined)
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: n } });
      // The server lets go of the stream: the client comes back with Last-Event-ID for the rest.
      if (i === 1) extra.closeSSEStream?.();
    }
    return { content: [{ type: 'text', text: `counted ${n}` }] };
  });
  server.registerTool('plan', { description: 'Plan with the weather', inputSchema: { goal: z.string() } }, async ({ goal }) => {
    const tools = [
      {
        name: 'weather',
        description: 'The weather in a city',
        inputSchema: { type: 'object' as const, properties: { city: { type: 'string' } } },
      },
    ];
    const first = await server.server.createMessage({
      messages: [{ role: 'user', content: { type: 'text', text: goal } }],
      maxTokens: 200,
      tools,
      toolChoice: { mode: 'auto' },
    });
    const use = (Array.isArray(first.content) ? first.content : [first.content]).find((c) => c.type === 'tool_use');
    if (use?.type !== 'tool_use') return { content: [{ type: 'text', text: `no tool asked (${first.stopReason ?? ''})` }] };
    const second = await server.server.createMessage({
      messages: [
        { role: 'user', content: { type: 'text', text: goal } },
        { role: 'assistant', content: [use] },
        { role: 'user', content: [{ type: 'tool_result', toolUseId: use.id, content: [{ type: 'text', text: 'sunny, 21 C' }] }] },
      ],
      maxTokens: 200,
      tools,
    });
    const text = (Array.isArray(second.content) ? second.content : [second.content]).map((c) => (c.type === 'text' ? c.text : '')).join('');
    return { content: [{ type: 'text', text: `plan: ${text}` }] };
  });
  return server;
}

/**
 * An event store that keeps the order events were stored in (the SDK example's store orders ids made in the same
 * millisecond by a random suffix, so a resume there can skip or reorder them).
 */
function eventStore(): EventStore {
  const events: { id: string; stream: string; message: JSONRPCMessage }[] = [];
  return {
    storeEvent(stream, message) {
      const id = `${stream}_${events.length + 1}`;
      events.push({ id, stream, message });
      return Promise.resolve(id);
    },
    getStreamIdForEventId(id) {
      return Promise.resolve(events.find((e) => e.id === id)?.stream);
    },
    async replayEventsAfter(lastEventId, { send }) {
      const at = events.findIndex((e) => e.id === lastEventId);
      const stream = events[at]?.stream ?? '';
      for (const e of events.slice(at + 1)) if (e.stream === stream && Object.keys(e.message).length > 0) await send(e.id, e.message);
      return stream;
    },
  };
}

async function startServer(): Promise<{ url: string; stop(): Promise<void> }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (transport === undefined) {
      if (typeof sid === 'string') return void res.writeHead(404).end();
      const made = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: eventStore(),
        retryInterval: RETRY_MS,
        onsessioninitialized: (id) => void sessions.set(id, made),
      });
      transport = made;
      await mcpServer().connect(made);
    }
    await transport.handleRequest(req, res);
  };
  const http: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    async stop() {
      for (const t of sessions.values()) await t.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}

/** The client's sampling: asks for the weather in `city` first, then answers with what the tool said. */
function sampler(city: string): (req: CreateMessageRequest) => CreateMessageResult | CreateMessageResultWithTools {
  return (req) => {
    const last = req.params.messages.at(-1);
    const content = Array.isArray(last?.content) ? last.content : [last?.content];
    const result = content.find((c) => c?.type === 'tool_result');
    if (result?.type === 'tool_result') {
      const said = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
      return { role: 'assistant', model: 'test-model', stopReason: 'endTurn', content: { type: 'text', text: `go out, it is ${said}` } };
    }
    return {
      role: 'assistant',
      model: 'test-model',
      stopReason: 'toolUse',
      content: [{ type: 'tool_use', id: 'call_1', name: 'weather', input: { city } }],
    };
  };
}

interface Run {
  counted: string;
  progress: number[];
  planned: string;
}

async function agent(url: string, city = 'Paris'): Promise<Run> {
  const client = new Client({ name: 'resume-agent', version: '1' }, { capabilities: { sampling: { tools: {} } } });
  client.setRequestHandler(CreateMessageRequestSchema, sampler(city) as never);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    reconnectionOptions: { initialReconnectionDelay: RETRY_MS, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1.5, maxRetries: 3 },
  });
  await client.connect(transport);
  const text = (r: unknown): string => (r as { content: { text: string }[] }).content[0]?.text ?? '';
  try {
    const progress: number[] = [];
    const counted = await client
      .callTool({ name: 'count', arguments: { n: 3 } }, undefined, { onprogress: (p) => void progress.push(p.progress) })
      .then(text, (err: Error) => `threw: ${err.message}`);
    const planned = await client
      .callTool({ name: 'plan', arguments: { goal: 'a walk in the afternoon' } })
      .then(text, (err: Error) => `threw: ${err.message}`);
    return { counted, progress, planned };
  } finally {
    await client.close();
  }
}

let dir: string;
let server: { url: string; stop(): Promise<void> } | undefined;
let recorded: Run;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-resume-'));
  server = await startServer();
  const rec = await startProxy({ mode: 'record', tape: 'resume', dir, port: 0, routes: [{ prefix: '/r/mcp', upstream: server.url }], log });
  try {
    recorded = await agent(`${rec.url}/r/mcp`);
  } finally {
    await rec.close();
    await server.stop();
    server = undefined;
  }
}, 120_000);
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function replayed(saveAs: string, city?: string, tape = 'resume'): Promise<{ run: Run; tape: Exchange[] }> {
  const rep = await startProxy({
    mode: 'replay',
    tape,
    dir,
    port: 0,
    routes: [],
    saveAs,
    responders: [createMcpResponder()],
    log,
  });
  try {
    const run = await agent(`${rep.url}/r/mcp`, city);
    await rep.close();
    return { run, tape: (await loadTape(dir, saveAs)).exchanges };
  } finally {
    await rep.close();
  }
}

const countCall = (ex: Exchange): boolean => ex.request.method === 'POST' && ex.mcp?.toolName === 'count';
const resumeGet = (ex: Exchange): boolean => ex.request.method === 'GET' && ex.request.headers['last-event-id'] !== undefined;

describe('resumable streams', () => {
  it('records the event ids the server sent: the priming event with its retry, then the GET that resumed after one', async () => {
    expect(recorded).toEqual({ counted: 'counted 3', progress: [1, 2, 3], planned: 'plan: go out, it is sunny, 21 C' });
    const tape = (await loadTape(dir, 'resume')).exchanges;
    const call = tape.find(countCall);
    const events = call?.response?.events ?? [];
    expect(events[0]).toMatchObject({ data: '', retry: RETRY_MS });
    expect(events.every((e) => typeof e.id === 'string' && e.id !== '')).toBe(true);
    const get = tape.find(resumeGet);
    expect(events.map((e) => e.id)).toContain(get?.request.headers['last-event-id']);
    expect(get?.response?.events?.some((e) => e.id !== undefined && e.data.includes('counted 3'))).toBe(true);
  });

  it('replays them with the server gone: the stream ends where the server ended it, and Last-Event-ID gets the rest from the tape', async () => {
    const { run, tape } = await replayed('resume-replay');
    expect(run).toEqual(recorded);
    expect(tape.filter((ex) => ex.match?.kind === 'miss').map((ex) => ex.match?.reason)).toEqual([]);
    // The call's own stream: the priming event (an id, the recorded retry) and the first progress, then it ends.
    const call = tape.find(countCall);
    const sent = call?.response?.events ?? [];
    expect(sent[0]).toMatchObject({ data: '', retry: RETRY_MS });
    expect(sent.filter((e) => e.data !== '')).toHaveLength(1);
    expect(sent.every((e) => typeof e.id === 'string')).toBe(true);
    // The client came back with the last id it had, and got progress 2 and 3 and the result.
    const get = tape.find(resumeGet);
    expect(get?.request.headers['last-event-id']).toBe(sent.at(-1)?.id);
    expect(get?.match).toMatchObject({ kind: 'exact', stage: 'mcp-resume' });
    expect(
      get?.response?.events?.map((e) => JSON.parse(e.data) as { params?: { progress?: number } }).map((m) => m.params?.progress),
    ).toEqual([2, 3, undefined]);
    // The replay tape keeps the ids replay sent: replaying it resumes the same way.
    const again = await replayed('resume-replay-again', undefined, 'resume-replay');
    expect(again.run).toEqual(recorded);
    expect(again.tape.find(resumeGet)?.match).toMatchObject({ kind: 'exact', stage: 'mcp-resume' });
  });
});

describe('resuming anywhere in replay', () => {
  it('a client resuming with a token it was given (the SDK resumptionToken) gets what followed it; an id never sent is a 400', async () => {
    const rep = await startProxy({
      mode: 'replay',
      tape: 'resume',
      dir,
      port: 0,
      routes: [],
      saveAs: 'resume-token',
      responders: [createMcpResponder()],
      log,
    });
    const client = new Client({ name: 'resume-agent', version: '1' }, { capabilities: { sampling: { tools: {} } } });
    const transport = new StreamableHTTPClientTransport(new URL(`${rep.url}/r/mcp`));
    try {
      await client.connect(transport);
      const call = { method: 'tools/call' as const, params: { name: 'count', arguments: { n: 3 } } };
      const tokens: string[] = [];
      await client.request(call, CallToolResultSchema, { onprogress: () => undefined, onresumptiontoken: (t) => void tokens.push(t) });
      // tokens[0]: the priming event; tokens[1]: the first progress. Picking up from there gets the rest again.
      const again = await client.request(call, CallToolResultSchema, { resumptionToken: tokens[1] });
      expect(again.content[0]).toEqual({ type: 'text', text: 'counted 3' });
      const unknown = await fetch(`${rep.url}/r/mcp`, {
        headers: {
          accept: 'text/event-stream',
          'mcp-session-id': transport.sessionId ?? '',
          'mcp-protocol-version': '2025-11-25',
          'last-event-id': 'not-an-id',
        },
      });
      expect(unknown.status).toBe(400);
      await unknown.body?.cancel();
    } finally {
      await client.close();
      await rep.close();
    }
    const tape = (await loadTape(dir, 'resume-token')).exchanges;
    const gets = tape.filter(resumeGet);
    expect(gets.map((ex) => ex.request.headers['last-event-id'])).toEqual([expect.any(String), tokens1(tape), 'not-an-id']);
    expect(gets[1]?.response?.events?.map((e) => (JSON.parse(e.data) as { params?: { progress?: number } }).params?.progress)).toEqual([
      2,
      3,
      undefined,
    ]);
    expect(gets[2]?.match).toMatchObject({ kind: 'miss' });
  });
});

/** The id of the first progress event the call's stream carried on a replay tape. */
function tokens1(tape: Exchange[]): string | undefined {
  return tape.find(countCall)?.response?.events?.[1]?.id;
}

describe('sampling with tools', () => {
  it('records the tool_use and tool_result turns, and replays them when the client samples the same', async () => {
    const tape = (await loadTape(dir, 'resume')).exchanges;
    const replies = tape.filter((ex) => ex.mcp?.method === 'tapedeck/response').map((ex) => JSON.stringify(ex.request.body));
    expect(replies.some((r) => r.includes('"tool_use"') && r.includes('Paris'))).toBe(true);
    const { run } = await replayed('sampling-same');
    expect(run.planned).toBe(recorded.planned);
  });

  it('a client whose model now asks for another tool input is a miss naming the field', async () => {
    const { run, tape } = await replayed('sampling-other', 'Rome');
    expect(run.planned).toMatch(/^threw: .*sampling\/createMessage differently from the recording/);
    expect(run.planned).toContain('"Paris" vs "Rome"');
    expect(tape.find((ex) => ex.mcp?.toolName === 'plan')?.match).toMatchObject({ kind: 'miss', stage: 'mcp-server-request' });
  });
});
