/** What drift calls a change and how severe: shapes, streams, MCP answers (in process, on built exchanges). */
import { describe, expect, it } from 'vitest';
import { compareCall } from '../../src/drift/compare.js';
import { DEFAULT_THRESHOLDS } from '../../src/drift/finding.js';
import { compareShapes, shapeOf } from '../../src/drift/shape.js';
import { compareStreams, streamShape } from '../../src/drift/stream-shape.js';
import { describeExchange } from '../../src/providers/describe.js';
import type { Exchange, SseEvent } from '../../src/tape/schema.js';

const events = (...types: string[]): SseEvent[] =>
  types.map((t, i) => ({ offsetMs: i, event: t, data: JSON.stringify({ type: t, index: 0 }) }));

function mcpExchange(method: string, result: unknown, params: Record<string, unknown> = {}): Exchange {
  const ex = describeExchange({
    startedAt: new Date(0).toISOString(),
    offsetMs: 0,
    transport: 'http',
    route: '/mcp',
    upstream: 'http://127.0.0.1:1/mcp',
    request: { method: 'POST', path: '/', query: [], headers: {}, body: { kind: 'json', json: { jsonrpc: '2.0', id: 1, method, params } } },
    response: {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: { kind: 'json', json: { jsonrpc: '2.0', id: 1, result } },
    },
    timing: { durationMs: 1 },
  });
  return { ...ex, type: 'exchange', id: '000000', seq: 0 };
}

const compare = (a: Exchange, b: Exchange) => compareCall(a, b, { thresholds: DEFAULT_THRESHOLDS, costOf: () => null }).findings;

describe('JSON shapes', () => {
  it('values never count; more array items are the same shape; null is no type change', () => {
    const a = shapeOf({ id: 'a', items: [{ n: 1 }], content: 'text' });
    const b = shapeOf({ id: 'b', items: [{ n: 2 }, { n: 3 }, { n: 4 }], content: null });
    expect(compareShapes(a, b)).toEqual([]);
  });

  it('a removed, a renamed, an added field and a changed type; only the top of a removed subtree', () => {
    const a = shapeOf({ usage: { prompt_tokens: 1, details: { cached: 1, audio: 0 } }, n: 1, gone: { deep: { x: 1 } } });
    const b = shapeOf({ usage: { input_tokens: 1, details: { cached: 1, audio: 0 } }, n: '1', extra: true });
    expect(compareShapes(a, b)).toEqual([
      { kind: 'renamed', path: '$.usage.prompt_tokens', to: '$.usage.input_tokens', types: ['number'] },
      { kind: 'added', path: '$.extra', types: ['boolean'] },
      { kind: 'removed', path: '$.gone', types: ['object'] },
      { kind: 'type', path: '$.n', from: ['number'], to: ['string'] },
    ]);
  });

  it('objects with a type are variants: another kind of content is not missing fields', () => {
    const a = shapeOf({ content: [{ type: 'text', text: 'hi' }] });
    const b = shapeOf({ content: [{ type: 'tool_use', id: 't', name: 'x', input: {} }] });
    expect(compareShapes(a, b)).toEqual([
      { kind: 'variant-removed', path: '$.content[]<text>' },
      { kind: 'variant-added', path: '$.content[]<tool_use>' },
    ]);
    // within a variant both sides have, fields are compared
    const c = shapeOf({ content: [{ type: 'text', value: 'hi' }] });
    expect(compareShapes(a, c)).toEqual([
      { kind: 'renamed', path: '$.content[]<text>.text', to: '$.content[]<text>.value', types: ['string'] },
    ]);
  });
});

describe('stream shapes', () => {
  const start = [
    'message_start',
    'content_block_start',
    'content_block_delta',
    'content_block_delta',
    'content_block_stop',
    'message_stop',
  ];

  it('more or fewer deltas and where a ping falls are no change', () => {
    const a = streamShape(events(...start));
    const b = streamShape(
      events('message_start', 'ping', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_stop'),
    );
    expect(compareStreams(a, b).filter((c) => !('keepalive' in c && c.keepalive))).toEqual([]);
  });

  it('a type gone, a new type, another order, another end', () => {
    const a = streamShape(events(...start));
    expect(compareStreams(a, streamShape(events('message_start', 'content_block_start', 'content_block_stop', 'message_stop')))).toEqual([
      { kind: 'event-removed', type: 'content_block_delta', keepalive: false },
    ]);
    expect(compareStreams(a, streamShape(events(...start.slice(0, 5), 'citation', 'message_stop')))).toEqual([
      { kind: 'event-added', type: 'citation', keepalive: false },
    ]);
    expect(
      compareStreams(
        a,
        streamShape(events('content_block_start', 'message_start', 'content_block_delta', 'content_block_stop', 'message_stop')),
      ),
    ).toEqual([
      {
        kind: 'order',
        before: ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_stop'],
        after: ['content_block_start', 'message_start', 'content_block_delta', 'content_block_stop', 'message_stop'],
      },
    ]);
    expect(compareStreams(streamShape(events('a', 'b', 'done')), streamShape(events('a', 'b', 'done', 'b')))).toEqual([
      { kind: 'end', before: 'done', after: 'b' },
    ]);
  });

  it("data-only streams are typed by their data; an event type's fields are compared", () => {
    const chunk = (delta: unknown): SseEvent => ({
      offsetMs: 0,
      data: JSON.stringify({ object: 'chat.completion.chunk', choices: [{ delta }] }),
    });
    const a = streamShape([chunk({ content: 'a' }), { offsetMs: 1, data: '[DONE]' }]);
    const b = streamShape([chunk({ text: 'a' }), { offsetMs: 1, data: '[DONE]' }]);
    expect(a.order).toEqual(['chat.completion.chunk', '[DONE]']);
    expect(compareStreams(a, b)).toEqual([
      {
        kind: 'renamed',
        path: '«chat.completion.chunk».choices[].delta.content',
        to: '«chat.completion.chunk».choices[].delta.text',
        types: ['string'],
      },
    ]);
  });
});

describe('MCP answers', () => {
  const tools = (list: unknown[]) => mcpExchange('tools/list', { tools: list });
  const get = { name: 'get', inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } };

  it('a tool gone is breaking, a new one notable, a newly required argument breaking', () => {
    const before = tools([get, { name: 'old', inputSchema: { type: 'object' } }]);
    const after = tools([
      {
        ...get,
        inputSchema: { ...get.inputSchema, properties: { id: { type: 'string' }, tenant: { type: 'string' } }, required: ['id', 'tenant'] },
      },
      { name: 'new', inputSchema: { type: 'object' } },
    ]);
    expect(compare(before, after)).toEqual([
      { severity: 'breaking', aspect: 'tools', message: 'tool "old" is no longer offered' },
      { severity: 'notable', aspect: 'tools', message: 'new tool "new"' },
      { severity: 'breaking', aspect: 'tools', message: 'tool "get" requires "tenant" now' },
    ]);
  });

  it('isError where there was none is breaking; another result text is notable', () => {
    const call = (text: string, isError?: boolean) =>
      mcpExchange(
        'tools/call',
        { content: [{ type: 'text', text }], ...(isError ? { isError } : {}) },
        { name: 'get', arguments: { id: '1' } },
      );
    expect(compare(call('ok'), call('boom', true))).toContainEqual({
      severity: 'breaking',
      aspect: 'error',
      message: 'tools/call get reports isError: true now',
    });
    expect(compare(call('the order shipped on Monday'), call('no such order'))).toEqual([
      { severity: 'notable', aspect: 'answer', message: 'another result (similarity 0.00 < 0.5): "no such order"' },
    ]);
    expect(compare(call('the order shipped on Monday'), call('the order shipped on Monday'))).toEqual([]);
  });
});
