import { describe, expect, it } from 'vitest';
import { describeMcp, STREAM_METHOD } from '../../src/providers/mcp.js';
import { rewriteLegacyEndpoint } from '../../src/upstream/legacy-endpoint.js';
import { rewriteForIncoming } from '../../src/providers/mcp.js';
import type { ResponseSink } from '../../src/http/sink.js';
import type { ProxyRequest } from '../../src/http/types.js';
import type { Exchange } from '../../src/tape/schema.js';

type View = Pick<Exchange, 'route' | 'request' | 'response' | 'error'> & { transport: 'http' | 'stdio' };
const post = (json: unknown, response: Exchange['response'], headers: Record<string, string> = {}): View => ({
  transport: 'http',
  route: '/mcp',
  request: { method: 'POST', path: '/', query: [], headers, body: { kind: 'json', json } },
  response,
});

describe('describeMcp', () => {
  it('ties the notifications on an SSE answer to the request and finds its result by id', () => {
    const call = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'slow', arguments: { n: 2 }, _meta: { progressToken: 'p' } },
    };
    const progress = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } };
    const answer = { jsonrpc: '2.0', id: 7, result: { content: [], isError: true } };
    const ex = post(
      call,
      {
        status: 200,
        headers: { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' },
        events: [
          { offsetMs: 5, event: 'message', data: JSON.stringify(progress) },
          { offsetMs: 9, event: 'message', data: JSON.stringify(answer) },
        ],
      },
      { 'mcp-protocol-version': '2025-11-25' },
    );
    expect(describeMcp(ex)).toEqual({
      direction: 'client-to-server',
      method: 'tools/call',
      jsonrpcId: 7,
      toolName: 'slow',
      arguments: { n: 2 },
      result: answer.result,
      isError: true,
      notifications: [{ offsetMs: 5, message: progress }],
      sessionId: 's1',
      protocolVersion: '2025-11-25',
      transport: 'streamable-http',
    });
  });

  it('recognises JSON-RPC by content only: an LLM call is not MCP', () => {
    expect(
      describeMcp(post({ model: 'gpt-4o', messages: [] }, { status: 200, headers: {}, body: { kind: 'json', json: {} } })),
    ).toBeUndefined();
  });

  it('marks a request answered 202 as the legacy transport, and a GET stream with an endpoint event as its stream', () => {
    const legacy = describeMcp({
      ...post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { status: 202, headers: {}, body: { kind: 'text', text: 'Accepted' } }),
      request: {
        method: 'POST',
        path: '/message',
        query: [['sessionId', 'abc']],
        headers: {},
        body: { kind: 'json', json: { jsonrpc: '2.0', id: 1, method: 'tools/list' } },
      },
    });
    expect(legacy).toMatchObject({ method: 'tools/list', transport: 'sse', sessionId: 'abc' });
    expect(legacy?.result).toBeUndefined();
    const stream = describeMcp({
      transport: 'http',
      route: '/l',
      request: { method: 'GET', path: '/sse', query: [], headers: {}, body: { kind: 'empty' } },
      response: {
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
        events: [
          { offsetMs: 1, event: 'endpoint', data: '/message?sessionId=abc' },
          { offsetMs: 2, event: 'message', data: '{"jsonrpc":"2.0","id":1,"result":{}}' },
        ],
      },
    });
    expect(stream).toMatchObject({
      method: STREAM_METHOD,
      direction: 'server-to-client',
      transport: 'sse',
      notifications: [{ offsetMs: 2, message: { id: 1 } }],
    });
  });
});

describe('rewriteForIncoming', () => {
  it('gives the answer the incoming id and progress notifications the incoming token, leaves other messages alone', () => {
    const recorded = { id: 3, progressToken: 3 };
    const incoming = { id: 'abc', progressToken: 'tok' };
    expect(rewriteForIncoming({ jsonrpc: '2.0', id: 3, result: {} }, recorded, incoming)).toEqual({
      jsonrpc: '2.0',
      id: 'abc',
      result: {},
    });
    expect(
      rewriteForIncoming(
        { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 3, progress: 1 } },
        recorded,
        incoming,
      ),
    ).toEqual({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok', progress: 1 } });
    const sampling = { jsonrpc: '2.0', id: 0, method: 'sampling/createMessage', params: {} };
    expect(rewriteForIncoming(sampling, recorded, incoming)).toBe(sampling);
    expect(
      rewriteForIncoming({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 3 } }, recorded, {
        id: 1,
        progressToken: undefined,
      }),
    ).toBeUndefined();
  });
});

describe('rewriteLegacyEndpoint', () => {
  const sinkInto = (out: string[]): ResponseSink => ({
    head: () => undefined,
    write: (c) => (out.push(Buffer.from(c).toString()), true),
    onDrain: () => undefined,
    end: () => undefined,
    cut: () => undefined,
    onClose: () => undefined,
  });
  const req = (method: string): ProxyRequest => ({
    route: { prefix: '/legacy', upstream: 'http://127.0.0.1:9/' },
    method,
    path: '/sse',
    query: [],
    headers: {},
    body: Buffer.alloc(0),
    startedAt: new Date(),
    offsetMs: 0,
    t0: 0,
  });

  it('puts the route prefix on the endpoint, even when the event arrives split, and passes the rest byte for byte', () => {
    const out: string[] = [];
    const sink = rewriteLegacyEndpoint(req('GET'), sinkInto(out));
    sink.head(200, { 'content-type': 'text/event-stream' });
    sink.write(Buffer.from('event: endpoint\ndata: /mess'));
    sink.write(Buffer.from('age?sessionId=42\n\nevent: message\r\ndata: {"x":1}\r\n\r\n'));
    sink.write(Buffer.from(': ping\n\n'));
    expect(out.join('')).toBe('event: endpoint\ndata: /legacy/message?sessionId=42\n\nevent: message\r\ndata: {"x":1}\r\n\r\n: ping\n\n');
  });

  it('passes what follows the endpoint whole when the stream begins with a byte order mark', () => {
    const out: string[] = [];
    const sink = rewriteLegacyEndpoint(req('GET'), sinkInto(out));
    sink.head(200, { 'content-type': 'text/event-stream' });
    sink.write(Buffer.from('\uFEFFevent: endpoint\ndata: /message?sessionId=1\n\ndata: {"x":1}\n\n'));
    expect(out.join('')).toBe('event: endpoint\ndata: /legacy/message?sessionId=1\n\ndata: {"x":1}\n\n');
  });

  it('leaves a POST, a non-stream answer, and a first event that is not endpoint untouched', () => {
    for (const [method, type, text] of [
      ['POST', 'text/event-stream', 'event: endpoint\ndata: /message\n\n'],
      ['GET', 'application/json', 'event: endpoint\ndata: /message\n\n'],
      ['GET', 'text/event-stream', 'data: {"a":1}\n\nevent: endpoint\ndata: /message\n\n'],
    ] as const) {
      const out: string[] = [];
      const sink = rewriteLegacyEndpoint(req(method), sinkInto(out));
      sink.head(200, { 'content-type': type });
      sink.write(Buffer.from(text));
      sink.end();
      expect(out.join('')).toBe(text);
    }
  });
});
