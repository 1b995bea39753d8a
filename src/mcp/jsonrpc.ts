/**
 * JSON-RPC as MCP speaks it: classify messages with the MCP SDK's own schemas, pull the recorded messages out of an
 * exchange, and rewrite ids and progress tokens so a recorded answer fits the request that is asking now.
 */
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { bodyJson } from '../tape/body.js';
import type { Exchange } from '../tape/schema.js';

export type RpcId = string | number;
export type { JSONRPCMessage };

/** What a JSON-RPC message is: a request (method + id), a notification (method, no id), or a response (id + result/error). */
export type RpcKind = 'request' | 'notification' | 'response';

export function rpcKind(msg: JSONRPCMessage): RpcKind {
  if ('method' in msg) return 'id' in msg && msg.id !== undefined ? 'request' : 'notification';
  return 'response';
}

export type ParsedRpc = { ok: true; message: JSONRPCMessage } | { ok: false; code: number; message: string };

/** Parse wire text as one JSON-RPC message; a failure carries the JSON-RPC error code the protocol prescribes. */
export function parseRpc(text: string): ParsedRpc {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, code: ErrorCode.ParseError, message: 'Parse error: the message is not valid JSON' };
  }
  return validateRpc(value);
}

export function validateRpc(value: unknown): ParsedRpc {
  if (Array.isArray(value))
    return {
      ok: false,
      code: ErrorCode.InvalidRequest,
      message: 'Invalid Request: JSON-RPC batches are not supported by this MCP protocol version',
    };
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (!parsed.success)
    return {
      ok: false,
      code: ErrorCode.InvalidRequest,
      message: `Invalid Request: not a JSON-RPC 2.0 message (${parsed.error.issues[0]?.message ?? 'invalid'})`,
    };
  return { ok: true, message: value as JSONRPCMessage };
}

/** True when a value looks like JSON-RPC 2.0 (one message or a batch): how MCP traffic is recognised, by content. */
export function looksLikeRpc(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0 && value.every(looksLikeRpc);
  return value !== null && typeof value === 'object' && (value as Record<string, unknown>).jsonrpc === '2.0';
}

export function rpcError(id: RpcId | null | undefined, code: number, message: string, data?: unknown): Record<string, unknown> {
  return { jsonrpc: '2.0', id: id ?? null, error: data === undefined ? { code, message } : { code, message, data } };
}

/** The JSON-RPC messages an exchange's response carried, in order, with their offsets: SSE events, then the body. */
export function recordedMessages(ex: Pick<Exchange, 'response'>): { offsetMs: number; message: Record<string, unknown> }[] {
  const out: { offsetMs: number; message: Record<string, unknown> }[] = [];
  for (const ev of ex.response?.events ?? []) {
    if (ev.data === '' || (ev.event !== undefined && ev.event !== 'message')) continue;
    try {
      const m: unknown = JSON.parse(ev.data);
      if (looksLikeRpc(m) && !Array.isArray(m)) out.push({ offsetMs: ev.offsetMs, message: m as Record<string, unknown> });
    } catch {
      // not JSON: not a message
    }
  }
  const body = bodyJson(ex.response?.body);
  const last = out.at(-1)?.offsetMs ?? 0;
  if (Array.isArray(body)) for (const m of body) if (looksLikeRpc(m)) out.push({ offsetMs: last, message: m as Record<string, unknown> });
  if (looksLikeRpc(body) && !Array.isArray(body)) out.push({ offsetMs: last, message: body as Record<string, unknown> });
  return out;
}

/** The request's progress token (`params._meta.progressToken`), if it asked for progress. */
export function progressToken(msg: unknown): RpcId | undefined {
  const t = (msg as { params?: { _meta?: { progressToken?: unknown } } } | undefined)?.params?._meta?.progressToken;
  return typeof t === 'string' || typeof t === 'number' ? t : undefined;
}

/**
 * A recorded message as it must go out now: the response to the recorded request gets the incoming request's id,
 * and progress notifications for the recorded token carry the incoming token (or lose it when the incoming request
 * asked for none). Everything else (server-initiated requests, logging) is sent as recorded.
 */
export function rewriteForIncoming(
  message: Record<string, unknown>,
  recorded: { id: RpcId | undefined; progressToken: RpcId | undefined },
  incoming: { id: RpcId; progressToken: RpcId | undefined },
): Record<string, unknown> | undefined {
  const isResponse = !('method' in message) && 'id' in message;
  if (isResponse) return message.id === recorded.id ? { ...message, id: incoming.id } : message;
  const params = message.params as Record<string, unknown> | undefined;
  if (recorded.progressToken !== undefined && params?.progressToken === recorded.progressToken) {
    if (incoming.progressToken === undefined) return undefined; // the client did not ask for progress this time
    return { ...message, params: { ...params, progressToken: incoming.progressToken } };
  }
  return message;
}
