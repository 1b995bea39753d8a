/**
 * OpenTelemetry export: a real agent run (OpenAI SDK + MCP SDK against server-everything, recorded through the
 * CLI) pushed by `tapedeck export --format otlp --otlp-endpoint` to a local OTLP/HTTP endpoint started here, and
 * what arrived checked attribute by attribute against the GenAI and MCP semantic conventions. Then the file
 * output, and the edge cases (tool error, JSON-RPC error, stdio) on a hand-made tape. The CLI runs in-process
 * (test/helpers/cli-in-process.ts), but where a failure must print one line and no credential: the real process.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_URL, tapeSpans, otlpJson } from '../../src/export/otlp.js';
import { loadTape } from '../../src/tape/tape-reader.js';
import type { Exchange } from '../../src/tape/schema.js';
import { runCli } from '../helpers/cli.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { ASK, SYSTEM, recordRunAndModifiedReplay } from '../view/record-run.js';
import { llmCall, toolCall, writeTape } from '../view/synthetic-tape.js';
import { exchange } from '../inspect/exchanges.js';
import { spanShape } from '../../src/export/otel-attributes.js';

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values: OtlpValue[] };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: OtlpValue }[];
  events: { name: string; attributes: { key: string; value: OtlpValue }[] }[];
  status: { code?: number; message?: string };
}
interface OtlpRequest {
  resourceSpans: {
    resource: { attributes: { key: string; value: OtlpValue }[] };
    schemaUrl?: string;
    scopeSpans: { scope: { name: string }; schemaUrl?: string; spans: OtlpSpan[] }[];
  }[];
}

const value = (v: OtlpValue): unknown =>
  v.stringValue ??
  (v.intValue !== undefined ? Number(v.intValue) : undefined) ??
  v.doubleValue ??
  v.boolValue ??
  v.arrayValue?.values.map(value);
const attrs = (list: { key: string; value: OtlpValue }[]): Record<string, unknown> =>
  Object.fromEntries(list.map((a) => [a.key, value(a.value)]));
const spansOf = (reqs: OtlpRequest[]): OtlpSpan[] =>
  reqs.flatMap((r) => r.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans)));

/** A local OTLP/HTTP traces endpoint: records each request's headers and decoded JSON body. */
async function startCollector(): Promise<{
  url: string;
  requests: { headers: IncomingHttpHeaders; body: OtlpRequest }[];
  close: () => Promise<void>;
}> {
  const requests: { headers: IncomingHttpHeaders; body: OtlpRequest }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      requests.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpRequest });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

let dir: string;
let collector: Awaited<ReturnType<typeof startCollector>>;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-otlp-'));
  collector = await startCollector();
  await recordRunAndModifiedReplay(dir);
  await writeTape(dir, 'edge', [
    llmCall(0, { status: 400 }),
    toolCall(10, { isError: true }),
    toolCall(20, { rpcError: true, tool: 'missing' }),
    toolCall(30, { transport: 'stdio' }),
  ]);
}, 60_000);
afterAll(async () => {
  await collector?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('tapedeck export --format otlp --otlp-endpoint', () => {
  it('pushes one trace per tape, a span per exchange, that a local OTLP/HTTP endpoint receives with the GenAI and MCP attributes', async () => {
    const r = await runCliInProcess(['export', 'run', '--format', 'otlp', '--otlp-endpoint', collector.url, '--dir', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(''); // pushed, not printed
    expect(collector.requests.length).toBeGreaterThan(0);
    expect(collector.requests[0]!.headers['content-type']).toContain('application/json');
    const body = collector.requests[0]!.body;
    expect(body.resourceSpans[0]!.schemaUrl).toBe(SCHEMA_URL);
    expect(body.resourceSpans[0]!.scopeSpans[0]!.schemaUrl).toBe(SCHEMA_URL);
    expect(attrs(body.resourceSpans[0]!.resource.attributes)).toMatchObject({ 'service.name': 'tapedeck', 'tapedeck.tape.name': 'run' });

    const tape = await loadTape(dir, 'run');
    const spans = spansOf(collector.requests.map((q) => q.body));
    expect(spans).toHaveLength(tape.exchanges.length + 1);
    const root = spans.find((s) => s.parentSpanId === undefined || s.parentSpanId === '')!;
    expect(root.name).toBe('record run');
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([root.traceId]));
    expect(root.traceId).toMatch(/^[0-9a-f]{32}$/);
    for (const s of spans.filter((x) => x !== root)) {
      expect(s.parentSpanId).toBe(root.spanId);
      expect(s.kind).toBe(3); // CLIENT
    }
    // One span per exchange, at the recorded times.
    const byId = new Map(spans.map((s) => [attrs(s.attributes)['tapedeck.exchange.id'], s]));
    for (const ex of tape.exchanges) {
      const s = byId.get(ex.id)!;
      expect(s, ex.id).toBeDefined();
      expect(BigInt(s.startTimeUnixNano)).toBe(BigInt(Date.parse(ex.startedAt)) * 1_000_000n);
      const ns = Number(BigInt(s.endTimeUnixNano) - BigInt(s.startTimeUnixNano));
      expect(ns / 1e6).toBeCloseTo(ex.timing.durationMs, 3);
    }

    // The first LLM call: asked for the echo tool.
    const llms = tape.exchanges.filter((e) => e.llm).sort((a, b) => a.offsetMs - b.offsetMs);
    const first = attrs(byId.get(llms[0]!.id)!.attributes);
    expect(byId.get(llms[0]!.id)!.name).toBe('chat gpt-4o-mini');
    expect(first).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.request.temperature': 0.2,
      'gen_ai.response.model': 'gpt-4o-mini',
      'gen_ai.response.id': 'chatcmpl-test1',
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 4,
      'server.address': '127.0.0.1',
      'http.response.status_code': 200,
      'tapedeck.tool_calls': ['echo'],
    });
    expect(first['server.port']).toBe(Number(new URL(llms[0]!.upstream!).port));
    expect(first).not.toHaveProperty('gen_ai.request.stream');
    expect(JSON.parse(first['gen_ai.system_instructions'] as string)).toEqual([{ type: 'text', content: SYSTEM }]);
    expect(JSON.parse(first['gen_ai.input.messages'] as string)).toEqual([{ role: 'user', parts: [{ type: 'text', content: ASK }] }]);
    expect(JSON.parse(first['gen_ai.output.messages'] as string)).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'call_1', name: 'echo', arguments: { message: 'hello' } }],
        finish_reason: 'tool_calls',
      },
    ]);
    // The second, streamed: stream flag, time to first chunk, the tool result in its input.
    const second = attrs(byId.get(llms[1]!.id)!.attributes);
    expect(second).toMatchObject({
      'gen_ai.request.stream': true,
      'gen_ai.response.model': 'gpt-4o-mini',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 30,
    });
    expect(second['gen_ai.response.time_to_first_chunk']).toBeCloseTo(llms[1]!.timing.ttfbMs! / 1000, 6);
    const input = JSON.parse(second['gen_ai.input.messages'] as string) as { role: string; parts: { type: string; result?: string }[] }[];
    expect(input.at(-1)).toEqual({ role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', result: 'Echo: hello' }] });

    // The MCP tool call, by the MCP conventions.
    const call = tape.exchanges.find((e) => e.mcp?.method === 'tools/call')!;
    const mcpSpan = byId.get(call.id)!;
    expect(mcpSpan.name).toBe('tools/call echo');
    const m = attrs(mcpSpan.attributes);
    expect(m).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'echo',
      'jsonrpc.request.id': String(call.mcp!.jsonrpcId),
      'mcp.session.id': call.mcp!.sessionId,
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'gen_ai.tool.call.arguments': '{"message":"hello"}',
    });
    expect(call.mcp!.sessionId).toMatch(/\S/);
    expect(m['mcp.protocol.version']).toBe(call.mcp!.protocolVersion);
    expect(m['gen_ai.tool.call.result']).toContain('Echo: hello');
    expect(m).not.toHaveProperty('error.type');
    expect(mcpSpan.status.code ?? 0).toBe(0);
    const init = spans.find((s) => attrs(s.attributes)['mcp.method.name'] === 'initialize')!;
    expect(init.name).toBe('initialize');
    expect(attrs(init.attributes)).not.toHaveProperty('gen_ai.operation.name');
  });

  it('marks the blocked side effect of a modified replay as tapedeck.blocked (not a tool error), and leaves content out with --no-content', async () => {
    const before = collector.requests.length;
    const r = await runCliInProcess([
      'export',
      'run-live',
      '--format',
      'otlp',
      '--otlp-endpoint',
      `${collector.url}/v1/traces`,
      '--no-content',
      '--dir',
      dir,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const spans = spansOf(collector.requests.slice(before).map((q) => q.body));
    const blocked = spans.find((s) => attrs(s.attributes)['tapedeck.match.kind'] === 'blocked')!;
    expect(blocked.name).toBe('tools/call echo');
    expect(attrs(blocked.attributes)['error.type']).toBe('tapedeck.blocked');
    expect(blocked.status.code).toBe(2); // ERROR
    const llm = spans.find((s) => s.name === 'chat gpt-4.1')!;
    expect(attrs(llm.attributes)).toMatchObject({ 'gen_ai.request.model': 'gpt-4.1', 'tapedeck.match.kind': 'live' });
    for (const s of spans)
      for (const key of ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.tool.call.arguments'])
        expect(attrs(s.attributes)).not.toHaveProperty(key);
  });

  it('fails with one line when the endpoint refuses, and exit 2 on a bad URL', async () => {
    // A 404 is final (a refused connection is retried by the exporter for up to its 10 s timeout).
    const refused = await runCli(['export', 'run', '--format', 'otlp', '--otlp-endpoint', `${collector.url}/nope`, '--dir', dir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toMatch(/^tapedeck export: could not push spans to http:\/\/127\.0\.0\.1:\d+\/nope: Not Found$/);
    // Credentials in the endpoint never reach a message: the push fails, the success line, a bad URL.
    const withPassword = collector.url.replace('http://', 'http://otel-user:s3cr3t-pw@');
    const denied = await runCli(['export', 'run', '--format', 'otlp', '--otlp-endpoint', `${withPassword}/nope`, '--dir', dir]);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain('http://otel-user:***@127.0.0.1');
    expect(denied.stderr).not.toContain('s3cr3t-pw');
    const pushed = await runCli(['export', 'run', '--format', 'otlp', '--otlp-endpoint', withPassword, '--dir', dir]);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(pushed.stderr).toContain('pushed to http://otel-user:***@127.0.0.1');
    expect(pushed.stderr).not.toContain('s3cr3t-pw');
    const badWithPassword = await runCli([
      'export',
      'run',
      '--format',
      'otlp',
      '--otlp-endpoint',
      'ftp://u:s3cr3t-pw@host/x',
      '--dir',
      dir,
    ]);
    expect(badWithPassword.code).toBe(2);
    expect(badWithPassword.stderr).not.toContain('s3cr3t-pw');
    const bad = await runCli(['export', 'run', '--format', 'otlp', '--otlp-endpoint', 'not a url', '--dir', dir]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe(
      'tapedeck export: --otlp-endpoint: not a URL: "not a url" (an OTLP/HTTP endpoint looks like http://127.0.0.1:4318)',
    );
  });
});

describe('OTLP/JSON to a file and edge cases', () => {
  it('writes the same payload to a file', async () => {
    const out = path.join(dir, 'run.otlp.json');
    const r = await runCliInProcess(['export', 'run', '--format', 'otlp', '--out', out, '--dir', dir]);
    expect(r.code, r.stderr).toBe(0);
    const file = JSON.parse(readFileSync(out, 'utf8')) as OtlpRequest;
    const tape = await loadTape(dir, 'run');
    expect(spansOf([file])).toHaveLength(tape.exchanges.length + 1);
    expect(JSON.parse(otlpJson(tapeSpans(tape)))).toEqual(file); // same ids, same times: the export is repeatable
  });

  it('sets error.type from the JSON-RPC error code, tool_error on isError, pipe for stdio, the HTTP status for an API error', async () => {
    const tape = await loadTape(dir, 'edge');
    const spans = JSON.parse(otlpJson(tapeSpans(tape))) as OtlpRequest;
    const list = spansOf([spans]);
    const by = (ex: Exchange): OtlpSpan => list.find((s) => attrs(s.attributes)['tapedeck.exchange.id'] === ex.id)!;
    const [api, toolErr, rpcErr, stdio] = tape.exchanges as [Exchange, Exchange, Exchange, Exchange];
    expect(attrs(by(api).attributes)).toMatchObject({ 'error.type': 'invalid_request_error', 'http.response.status_code': 400 });
    expect(by(api).status.code).toBe(2);
    expect(attrs(by(toolErr).attributes)['error.type']).toBe('tool_error');
    expect(attrs(by(toolErr).attributes)).not.toHaveProperty('gen_ai.tool.call.result'); // only on success
    expect(attrs(by(rpcErr).attributes)).toMatchObject({
      'error.type': '-32602',
      'rpc.response.status_code': '-32602',
      'gen_ai.tool.name': 'missing',
    });
    expect(by(rpcErr).status.message).toBe('Tool missing not found');
    expect(attrs(by(stdio).attributes)).toMatchObject({ 'network.transport': 'pipe', 'mcp.method.name': 'tools/call' });
    expect(attrs(by(stdio).attributes)).not.toHaveProperty('network.protocol.name');
    expect(attrs(by(stdio).attributes)).not.toHaveProperty('mcp.session.id');
    expect(by(toolErr).events.map((e) => e.name)).toEqual(['notifications/progress']);
  });

  it("names a replay's own refusals tapedeck.miss / tapedeck.blocked, whatever error shape the client got", () => {
    const rpcMiss = exchange({
      offsetMs: 0,
      mcp: { toolName: 'get_weather', error: { code: -32002, message: 'not on the tape' } },
      match: { kind: 'miss', reason: 'no recorded call of get_weather' },
    });
    const blocked = exchange({
      offsetMs: 1,
      mcp: { toolName: 'send_email', isError: true, result: { content: [], isError: true } },
      match: { kind: 'blocked', reason: 'send_email is a side effect' },
    });
    const llmMiss = exchange({ offsetMs: 2, status: 404, llm: { errorType: 'tapedeck_miss' }, match: { kind: 'miss' } });
    expect(spanShape(rpcMiss, false).error).toEqual({ type: 'tapedeck.miss', message: 'no recorded call of get_weather' });
    expect(spanShape(blocked, false).error).toEqual({ type: 'tapedeck.blocked', message: 'send_email is a side effect' });
    expect(spanShape(llmMiss, false).error?.type).toBe('tapedeck.miss');
    // The JSON-RPC code the client saw is still there.
    expect(spanShape(rpcMiss, false).attributes['rpc.response.status_code']).toBe('-32002');
  });
});
