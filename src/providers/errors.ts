/**
 * How a `TapedeckError` answers a client, in one place (hono's `HTTPException.getResponse()` is the model): over HTTP
 * in the API's own error shape (so its official SDK surfaces it as a normal API error), tapedeck's own shape
 * `{error:{code,type,message}}` for everything else (the viewer, a route that is no LLM API), over MCP as a JSON-RPC
 * error or, for a tool call the agent should read and carry on from, as a tool result with `isError`. Callers pick
 * the shape; the status, headers and body come from here, and reach the client through {@link errorResponse} (fetch),
 * `sendError` (a node response, `http/sink.ts`), `sendErrorAnswer` (a response sink, `http/sink-send.ts`) or
 * `refuseRaw` (a raw socket, `http/raw-answer.ts`).
 */
import type { TapedeckError } from '../errors.js';
import { rpcError, type Message, type RequestId } from './mcp.js';
import { adapterFor } from './registry.js';
import type { ApiId } from './types.js';

export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * An error body in the API's own shape (OpenAI `{error:{message,type,param,code}}`, Anthropic
 * `{type:"error",error:{type,message}}`, Gemini `{error:{code,message,status}}`); anything else gets
 * `{error:{type,message}}` (with `code` when given). `extra` is merged in at the top level (e.g. `tapedeck: {...}`
 * details), which the SDKs ignore.
 */
export function providerErrorBody(
  api: ApiId | undefined,
  status: number,
  type: string,
  message: string,
  extra: Record<string, unknown> = {},
  code?: string,
): unknown {
  const adapter = adapterFor(api?.api);
  if (adapter) return adapter.errorBody(status, type, message, extra);
  return { error: { ...(code === undefined ? {} : { code }), type, message }, ...extra };
}

/**
 * Over HTTP: the error's status and headers, its body in the shape of `api` when the request is an LLM call, else in
 * tapedeck's own shape `{error:{code,type,message}, tapedeck?: details}` (what the viewer answers too).
 */
export function httpError(err: TapedeckError, api?: ApiId): ErrorAnswer {
  return {
    status: err.status,
    headers: { 'content-type': 'application/json', ...err.headers },
    body: providerErrorBody(api, err.status, err.type, err.message, err.details === undefined ? {} : { tapedeck: err.details }, err.code),
  };
}

/** The answer's body as sent. */
export function errorText(answer: ErrorAnswer): string {
  return JSON.stringify(answer.body);
}

/** The answer as a fetch `Response` (hono's `HTTPException.getResponse()`): what the viewer's hono app returns. */
export function errorResponse(answer: ErrorAnswer): Response {
  return new Response(errorText(answer), { status: answer.status, headers: answer.headers });
}

/**
 * Over JSON-RPC: an error response to request `id`, or with `toolResult` a `tools/call` result with `isError`
 * (a blocked side effect, a lenient miss): the agent reads it as the tool's answer and carries on.
 */
export function rpcErrorMessage(err: TapedeckError, id: RequestId | null, opts: { toolResult?: boolean } = {}): Message {
  if (opts.toolResult === true) return { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: err.message }], isError: true } };
  return rpcError(id, err.rpcCode, err.message, err.details === undefined ? undefined : { tapedeck: err.details });
}

/** MCP's transport errors over HTTP (no session, a malformed message, GET refused): the JSON-RPC error as the body. */
export function rpcHttpError(err: TapedeckError, id: RequestId | null = null): ErrorAnswer {
  return { status: err.status, headers: { 'content-type': 'application/json', ...err.headers }, body: rpcErrorMessage(err, id) };
}
