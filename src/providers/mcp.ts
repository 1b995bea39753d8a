import { bodyJson } from '../tape/body.js';
import type { McpMeaning } from '../tape/schema.js';
import { looksLikeRpc, recordedMessages, type RpcId } from '../mcp/jsonrpc.js';
import type { ExchangeView } from './index.js';

type View = ExchangeView & { transport: 'http' | 'stdio' };

/** The method tapedeck gives a recorded server-to-client stream (a GET stream, legacy or standalone): not a JSON-RPC method. */
export const STREAM_METHOD = 'tapedeck/stream';
/** The method tapedeck gives a client's JSON-RPC response (to a server request such as sampling). */
export const RESPONSE_METHOD = 'tapedeck/response';

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
  const msg = req as Record<string, unknown>;
  const method = typeof msg.method === 'string' ? msg.method : RESPONSE_METHOD;
  const id = msg.id as RpcId | undefined;
  const params = (msg.params ?? {}) as Record<string, unknown>;
  const messages = recordedMessages(ex);
  const answerAt =
    id === undefined || method === RESPONSE_METHOD ? -1 : messages.findIndex((m) => m.message.id === id && !('method' in m.message));
  const answer = answerAt === -1 ? undefined : (messages[answerAt]?.message as Record<string, unknown>);
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
