/**
 * MCP as the tape sees it. Messages are JSON-RPC 2.0, classified with the MCP SDK's own schemas and guards; this
 * module says what an exchange means (`describeMcp`), which messages a recorded answer carried, and how a recorded
 * answer is fitted to the request asking now (its JSON-RPC id and progress token).
 */
import {
  JSONRPCMessageSchema,
  ProgressTokenSchema,
  RequestIdSchema,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { TapedeckError } from '../errors.js';
import { bodyJson } from '../tape/body.js';
import type { Exchange, McpMeaning } from '../tape/schema.js';
import { isObj } from './json.js';
import type { ExchangeView, SemanticBuilder } from './types.js';

export type { JSONRPCMessage, RequestId };
/** A JSON-RPC message as a plain object (what is read from a tape and rewritten for the incoming request). */
export type Message = Record<string, unknown>;
/** A recorded message with its offset from the start of the request that caused it. */
export interface TimedMessage {
  offsetMs: number;
  message: Message;
}

import { RESPONSE_METHOD, STREAM_METHOD } from '../tape/schema.js';
import { parseJson } from '../tape/json-depth.js';

export { STREAM_METHOD, RESPONSE_METHOD };

// --- JSON-RPC messages

/** A parsed message, or why it is not one (`PARSE_ERROR`: not JSON; `BAD_REQUEST`: not a JSON-RPC 2.0 message). */
export type ParsedRpc = { ok: true; message: JSONRPCMessage } | { ok: false; error: TapedeckError };

export function validateRpc(value: unknown): ParsedRpc {
  if (Array.isArray(value)) {
    return {
      ok: false,
      error: new TapedeckError('BAD_REQUEST', 'Invalid Request: JSON-RPC batches are not supported by this MCP protocol version'),
    };
  }
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (!parsed.success) {
    const why = parsed.error.issues[0]?.message ?? 'invalid';
    return { ok: false, error: new TapedeckError('BAD_REQUEST', `Invalid Request: not a JSON-RPC 2.0 message (${why})`) };
  }
  return { ok: true, message: value as JSONRPCMessage };
}

/** True when a value looks like JSON-RPC 2.0 (one message or a batch): how MCP traffic is recognised, by content. */
export function looksLikeRpc(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0 && value.every(looksLikeRpc);
  return value !== null && typeof value === 'object' && (value as Record<string, unknown>).jsonrpc === '2.0';
}

/** A JSON-RPC error response. */
export function rpcError(id: RequestId | null | undefined, code: number, message: string, data?: unknown): Message {
  return { jsonrpc: '2.0', id: id ?? null, error: data === undefined ? { code, message } : { code, message, data } };
}

/** The request id of a message, when it has a valid one. */
export function requestId(msg: unknown): RequestId | undefined {
  const id = (msg as { id?: unknown } | undefined)?.id;
  return RequestIdSchema.safeParse(id).success ? (id as RequestId) : undefined;
}

/** The request's progress token (`params._meta.progressToken`), if it asked for progress. */
export function progressToken(msg: unknown): RequestId | undefined {
  const t = (msg as { params?: { _meta?: { progressToken?: unknown } } } | undefined)?.params?._meta?.progressToken;
  return ProgressTokenSchema.safeParse(t).success ? (t as RequestId) : undefined;
}

/** The JSON-RPC messages an exchange's response carried, in order, with their offsets: SSE events, then the body. */
export function recordedMessages(ex: Pick<Exchange, 'response'>): TimedMessage[] {
  const out: TimedMessage[] = [];
  for (const ev of ex.response?.events ?? []) {
    if (ev.data === '' || (ev.event !== undefined && ev.event !== 'message')) continue;
    try {
      const m: unknown = parseJson(ev.data);
      if (looksLikeRpc(m) && !Array.isArray(m)) out.push({ offsetMs: ev.offsetMs, message: m as Message });
    } catch {
      // not JSON: not a message
    }
  }
  const body = bodyJson(ex.response?.body);
  const last = out.at(-1)?.offsetMs ?? 0;
  if (Array.isArray(body)) for (const m of body) if (looksLikeRpc(m)) out.push({ offsetMs: last, message: m as Message });
  if (looksLikeRpc(body) && !Array.isArray(body)) out.push({ offsetMs: last, message: body as Message });
  return out;
}

/**
 * A recorded message as it must go out now: the response to the recorded request gets the incoming request's id,
 * and progress notifications for the recorded token carry the incoming token (or lose it when the incoming request
 * asked for none). Everything else (server-initiated requests, logging) is sent as recorded.
 */
export function rewriteForIncoming(
  message: Message,
  recorded: { id: RequestId | undefined; progressToken: RequestId | undefined },
  incoming: { id: RequestId; progressToken: RequestId | undefined },
): Message | undefined {
  const isResponse = !('method' in message) && 'id' in message;
  if (isResponse) return message.id === recorded.id ? { ...message, id: incoming.id } : message;
  const params = message.params as Record<string, unknown> | undefined;
  if (recorded.progressToken !== undefined && params?.progressToken === recorded.progressToken) {
    if (incoming.progressToken === undefined) return undefined; // the client did not ask for progress this time
    return { ...message, params: { ...params, progressToken: incoming.progressToken } };
  }
  return message;
}

// --- what an MCP exchange means

type View = ExchangeView & { transport: 'http' | 'stdio' | 'websocket' };

/** The request-side meaning of an incoming client message (what matching reads: method, id, tool and arguments). */
export function requestSideMcp(message: Message, transport: McpMeaning['transport']): McpMeaning {
  const params = (message.params ?? {}) as Record<string, unknown>;
  const m: McpMeaning = { direction: 'client-to-server', method: String(message.method), notifications: [], transport };
  const id = requestId(message);
  if (id !== undefined) m.jsonrpcId = id;
  if (message.method === 'tools/call' && typeof params.name === 'string') {
    m.toolName = params.name;
    m.arguments = params.arguments ?? {};
  }
  return m;
}

/**
 * What an MCP exchange means, when its request body is a JSON-RPC message (recognised by content, not route), or
 * when it is a server-to-client event stream carrying JSON-RPC messages (a GET stream). The answer to a request is
 * the message with the request's id among the response's messages (JSON body or SSE events); every other message
 * before it is a notification tied to the request (progress, logging, server requests), with its offset.
 */
export function describeMcp(ex: View): McpMeaning | undefined {
  const req = bodyJson(ex.request.body);
  const sessionId =
    ex.request.headers['mcp-session-id'] ?? ex.response?.headers['mcp-session-id'] ?? queryValue(ex.request.query, 'sessionId');
  const protocolVersion = ex.request.headers['mcp-protocol-version'];
  if (req === undefined || !looksLikeRpc(req) || Array.isArray(req)) {
    if (ex.request.method !== 'GET' || ex.response?.events === undefined) return undefined;
    const messages = recordedMessages(ex);
    const legacy = ex.response.events.some((e) => e.event === 'endpoint');
    if (messages.length === 0 && !legacy && sessionId === undefined) return undefined;
    return withOptional(
      {
        direction: 'server-to-client',
        method: STREAM_METHOD,
        notifications: messages,
        transport: ex.transport === 'stdio' ? 'stdio' : legacy ? 'sse' : 'streamable-http',
      },
      { sessionId, protocolVersion },
    );
  }
  const msg = req as Message;
  const method = typeof msg.method === 'string' ? msg.method : RESPONSE_METHOD;
  const id = msg.id as RequestId | undefined;
  const params = (msg.params ?? {}) as Record<string, unknown>;
  const messages = recordedMessages(ex);
  const answerAt =
    id === undefined || method === RESPONSE_METHOD ? -1 : messages.findIndex((m) => m.message.id === id && !('method' in m.message));
  const answer = answerAt === -1 ? undefined : messages[answerAt]?.message;
  const notifications = answerAt === -1 ? (method === RESPONSE_METHOD ? [] : messages) : messages.slice(0, answerAt);
  // A request answered 202 with its answer elsewhere is the legacy HTTP+SSE transport (answers travel on the GET stream).
  const legacy = ex.transport === 'http' && method !== RESPONSE_METHOD && id !== undefined && ex.response?.status === 202;
  const meaning: McpMeaning = {
    direction: method === RESPONSE_METHOD ? 'server-to-client' : 'client-to-server',
    method,
    notifications,
    transport:
      ex.transport === 'stdio' ? 'stdio' : legacy || queryValue(ex.request.query, 'sessionId') !== undefined ? 'sse' : 'streamable-http',
  };
  if (id !== undefined) meaning.jsonrpcId = id;
  if (method === 'tools/call') {
    if (typeof params.name === 'string') meaning.toolName = params.name;
    meaning.arguments = params.arguments ?? {};
  }
  if (method === RESPONSE_METHOD) {
    if ('result' in msg) meaning.result = msg.result;
    if ('error' in msg) meaning.error = msg.error;
  } else if (answer !== undefined) {
    if ('result' in answer) meaning.result = answer.result;
    if ('error' in answer) meaning.error = answer.error;
    const isError = (answer.result as { isError?: unknown } | undefined)?.isError;
    if (typeof isError === 'boolean') meaning.isError = isError;
  }
  const negotiated =
    protocolVersion ??
    (method === 'initialize'
      ? ((meaning.result as { protocolVersion?: string } | undefined)?.protocolVersion ?? (params.protocolVersion as string | undefined))
      : undefined);
  return withOptional(meaning, { sessionId, protocolVersion: negotiated });
}

function withOptional(meaning: McpMeaning, extra: { sessionId: string | undefined; protocolVersion: string | undefined }): McpMeaning {
  if (extra.sessionId !== undefined) meaning.sessionId = extra.sessionId;
  if (extra.protocolVersion !== undefined) meaning.protocolVersion = extra.protocolVersion;
  return meaning;
}

function queryValue(query: readonly [string, string][], name: string): string | undefined {
  return query.find(([k]) => k === name)?.[1];
}

/**
 * An MCP request as semantic matching sees it: the method and every parameter exact, except a `tools/call`'s or
 * `prompts/get`'s arguments, which are compared by key (identifiers exact, words compared).
 */
export function mcpSemantic(body: Message, b: SemanticBuilder): unknown {
  const params = isObj(body.params) ? body.params : undefined;
  if ((body.method === 'tools/call' || body.method === 'prompts/get') && params !== undefined) {
    const { arguments: args, ...rest } = params;
    return { method: body.method, params: { ...rest, arguments: b.args('params.arguments', args ?? {}) } };
  }
  return { method: body.method, params };
}
