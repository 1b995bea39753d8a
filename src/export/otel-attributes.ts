/**
 * Span names and attributes for one exchange, following the OpenTelemetry semantic conventions (GenAI client
 * spans and MCP client spans, both at Development status; see SCHEMA_URL in otlp.ts):
 * - an LLM call is an inference span `{gen_ai.operation.name} {gen_ai.request.model}`;
 * - an MCP request is `{mcp.method.name} {target}` (the tool or prompt name), `execute_tool` for tools/call;
 * - anything else is an HTTP client span `{method}`.
 * Content (prompts, answers, tool arguments and results) is opt-in in the conventions; it is included unless
 * `content: false`, as JSON strings (OTLP attributes cannot hold structures in the JS SDK).
 */
import type { Attributes, AttributeValue } from '@opentelemetry/api';
import { STREAM_METHOD } from '../providers/mcp.js';
import { adapterFor, providerInfo } from '../providers/registry.js';
import { bodyJson } from '../tape/body.js';
import type { Exchange, LlmMeaning } from '../tape/schema.js';
import { conversationIn, type ConversationMessage } from '../view/model.js';
import { exchangeUrl, serverOf } from './exchange-url.js';
import { parseJson } from '../tape/json-depth.js';

export interface SpanShape {
  name: string;
  attributes: Attributes;
  /** `error.type` and a message, when the exchange failed. */
  error?: { type: string; message: string };
}

export function spanShape(ex: Exchange, content: boolean): SpanShape {
  const shape = ex.llm ? llmShape(ex, ex.llm, content) : ex.mcp && ex.mcp.method !== STREAM_METHOD ? mcpShape(ex, content) : httpShape(ex);
  // A replay's own refusal names itself, whatever shape the refusal took for the client (a tool result with
  // isError, a JSON-RPC error, the provider's error body).
  const refused = replayRefusal(ex);
  if (refused) shape.error = refused;
  const a = shape.attributes;
  a['tapedeck.exchange.id'] = ex.id;
  a['tapedeck.route'] = ex.route;
  if (ex.response) a['http.response.status_code'] = ex.response.status;
  if (ex.match) {
    a['tapedeck.match.kind'] = ex.match.kind;
    if (ex.match.stage !== undefined) a['tapedeck.match.stage'] = ex.match.stage;
    if (ex.match.score !== undefined) a['tapedeck.match.score'] = ex.match.score;
    if (ex.match.source !== undefined) a['tapedeck.match.source'] = ex.match.source;
  }
  if (shape.error) a['error.type'] = shape.error.type;
  return shape;
}

function llmShape(ex: Exchange, llm: LlmMeaning, content: boolean): SpanShape {
  // The operation and the provider's well-known name are the adapter's (an OpenAI-compatible server is `openai`).
  const adapter = adapterFor(llm.api);
  const operation = adapter?.otelOperation;
  const info = providerInfo(llm.provider);
  const provider = info === undefined ? undefined : (info.otelName ?? info.name);
  const a: Attributes = {
    'gen_ai.operation.name': operation,
    'gen_ai.provider.name': provider,
    // The name of the same attribute before semantic conventions 1.37, still read by some backends.
    'gen_ai.system': provider,
    'tapedeck.provider': llm.provider,
  };
  set(a, 'gen_ai.request.model', llm.model);
  // Request parameters, as the adapter names them, to their `gen_ai.request.*` attribute (the first present wins).
  for (const [key, param] of Object.entries(adapter?.otelParams ?? {})) {
    const attr = `gen_ai.request.${param}`;
    const v = llm.params[key];
    if (a[attr] !== undefined || v === undefined || v === null) continue;
    if (typeof v === 'number') a[attr] = v;
    else if (typeof v === 'string' && param === 'stop_sequences') a[attr] = [v];
    else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) a[attr] = v as string[];
  }
  if (llm.streamed) a['gen_ai.request.stream'] = true;
  const facts = responseFacts(ex);
  set(a, 'gen_ai.response.model', facts.model);
  set(a, 'gen_ai.response.id', facts.id);
  if (llm.stopReason !== undefined) a['gen_ai.response.finish_reasons'] = [llm.stopReason];
  const u = llm.usage;
  set(a, 'gen_ai.usage.input_tokens', u?.inputTokens);
  set(a, 'gen_ai.usage.output_tokens', u?.outputTokens);
  set(a, 'gen_ai.usage.cache_read.input_tokens', u?.cachedInputTokens);
  if (llm.streamed && ex.timing.ttfbMs !== undefined) a['gen_ai.response.time_to_first_chunk'] = ex.timing.ttfbMs / 1000;
  server(a, ex);
  if (llm.toolCalls.length > 0) a['tapedeck.tool_calls'] = llm.toolCalls.map((c) => c.name);
  if (content) {
    const conversation = conversationIn(ex);
    const system = conversation.filter((m) => m.role === 'system' || m.role === 'developer');
    if (system.length > 0) a['gen_ai.system_instructions'] = JSON.stringify(system.map((m) => ({ type: 'text', content: m.text })));
    const input = conversation.filter((m) => !system.includes(m)).map(messageOf);
    if (input.length > 0) a['gen_ai.input.messages'] = JSON.stringify(input);
    a['gen_ai.output.messages'] = JSON.stringify([outputMessage(llm)]);
  }
  const error =
    llm.errorType !== undefined
      ? { type: llm.errorType, message: `${llm.errorType}${ex.response ? ` (HTTP ${ex.response.status})` : ''}` }
      : transportError(ex);
  return { name: `${operation} ${llm.model ?? llm.api}`, attributes: a, ...(error ? { error } : {}) };
}

/** A conversation message in the conventions' input-messages shape (role + parts). */
function messageOf(m: ConversationMessage): Record<string, unknown> {
  const parts: Record<string, unknown>[] = [];
  if (m.thinking) parts.push({ type: 'reasoning', content: m.thinking });
  if (m.role === 'tool') parts.push({ type: 'tool_call_response', id: m.toolCallId ?? null, result: m.text });
  else if (m.text !== '') parts.push({ type: 'text', content: m.text });
  for (const c of m.toolCalls ?? []) parts.push({ type: 'tool_call', id: c.id ?? null, name: c.name, arguments: c.arguments });
  return { role: m.role, parts };
}

function outputMessage(llm: LlmMeaning): Record<string, unknown> {
  const parts: Record<string, unknown>[] = [];
  if (llm.thinking) parts.push({ type: 'reasoning', content: llm.thinking });
  if (llm.outputText) parts.push({ type: 'text', content: llm.outputText });
  for (const c of llm.toolCalls) parts.push({ type: 'tool_call', id: c.id ?? null, name: c.name, arguments: c.arguments });
  return { role: 'assistant', parts, finish_reason: llm.stopReason ?? null };
}

function mcpShape(ex: Exchange, content: boolean): SpanShape {
  const mcp = ex.mcp as NonNullable<Exchange['mcp']>;
  const params = paramsOf(ex);
  const a: Attributes = { 'mcp.method.name': mcp.method, 'network.transport': ex.transport === 'stdio' ? 'pipe' : 'tcp' };
  if (ex.transport === 'http') a['network.protocol.name'] = 'http';
  if (mcp.jsonrpcId !== undefined && mcp.jsonrpcId !== null) a['jsonrpc.request.id'] = String(mcp.jsonrpcId);
  set(a, 'mcp.session.id', mcp.sessionId);
  set(a, 'mcp.protocol.version', mcp.protocolVersion);
  let target: string | undefined;
  if (mcp.method === 'tools/call') {
    a['gen_ai.operation.name'] = 'execute_tool';
    target = mcp.toolName;
    set(a, 'gen_ai.tool.name', mcp.toolName);
    if (content && mcp.arguments !== undefined) a['gen_ai.tool.call.arguments'] = JSON.stringify(mcp.arguments);
    if (content && mcp.result !== undefined && mcp.isError !== true) a['gen_ai.tool.call.result'] = JSON.stringify(mcp.result);
  } else if (mcp.method === 'prompts/get' && typeof params?.name === 'string') {
    target = params.name;
    a['gen_ai.prompt.name'] = params.name;
  }
  if (typeof params?.uri === 'string' && /^(resources\/(read|subscribe|unsubscribe)|notifications\/resources\/updated)$/.test(mcp.method))
    a['mcp.resource.uri'] = params.uri;
  server(a, ex);
  let error: SpanShape['error'];
  const rpc = mcp.error as { code?: unknown; message?: unknown } | undefined;
  if (rpc !== undefined && rpc !== null) {
    const code = String(rpc.code ?? 'error');
    a['rpc.response.status_code'] = code;
    error = { type: code, message: typeof rpc.message === 'string' ? rpc.message : JSON.stringify(rpc) };
  } else if (mcp.isError === true) error = { type: 'tool_error', message: `tool ${mcp.toolName ?? '?'} returned isError` };
  else error = transportError(ex);
  return { name: target ? `${mcp.method} ${target}` : mcp.method, attributes: a, ...(error ? { error } : {}) };
}

function httpShape(ex: Exchange): SpanShape {
  const a: Attributes = { 'http.request.method': ex.request.method, 'url.full': exchangeUrl(ex) };
  server(a, ex);
  const error = transportError(ex);
  return { name: ex.request.method, attributes: a, ...(error ? { error } : {}) };
}

/** A replay miss or a blocked side effect: `tapedeck.miss` / `tapedeck.blocked`. */
function replayRefusal(ex: Exchange): SpanShape['error'] {
  if (ex.match?.kind === 'blocked') return { type: 'tapedeck.blocked', message: ex.match.reason ?? 'blocked side effect' };
  if (ex.match?.kind === 'miss') return { type: 'tapedeck.miss', message: ex.match.reason ?? 'not on the tape' };
  return undefined;
}

/** A failure below the protocol: no answer, a cut stream, an HTTP error status. */
function transportError(ex: Exchange): SpanShape['error'] {
  if (ex.error && !(ex.mcp?.method === STREAM_METHOD && ex.error.code === 'CLIENT_CLOSED'))
    return { type: ex.error.code, message: ex.error.message };
  if (ex.response && ex.response.status >= 400) return { type: String(ex.response.status), message: `HTTP ${ex.response.status}` };
  return undefined;
}

function server(a: Attributes, ex: Exchange): void {
  const s = serverOf(ex);
  if (!s) return;
  a['server.address'] = s.address;
  a['server.port'] = s.port;
}

function paramsOf(ex: Exchange): Record<string, unknown> | undefined {
  const body = bodyJson(ex.request.body) as { params?: unknown } | undefined;
  return typeof body?.params === 'object' && body.params !== null ? (body.params as Record<string, unknown>) : undefined;
}

/** The model that answered and the answer's id, from the response body or the first stream events that carry them. */
function responseFacts(ex: Exchange): { model?: string; id?: string } {
  const out: { model?: string; id?: string } = {};
  const take = (v: unknown): void => {
    if (typeof v !== 'object' || v === null) return;
    const o = v as Record<string, unknown>;
    for (const inner of [o.message, o.response]) if (typeof inner === 'object' && inner !== null) take(inner);
    const model = o.model ?? o.modelVersion;
    const id = o.id ?? o.responseId;
    if (out.model === undefined && typeof model === 'string') out.model = model;
    if (out.id === undefined && typeof id === 'string') out.id = id;
  };
  const r = ex.response;
  if (r?.body) take(bodyJson(r.body));
  for (const e of r?.events?.slice(0, 8) ?? []) {
    if (out.model !== undefined && out.id !== undefined) break;
    try {
      take(parseJson(e.data));
    } catch {
      // [DONE] and other non-JSON events
    }
  }
  return out;
}

function set(a: Attributes, key: string, v: AttributeValue | undefined): void {
  if (v !== undefined) a[key] = v;
}
