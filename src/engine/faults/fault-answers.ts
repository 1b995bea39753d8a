/**
 * What an injected answer looks like. An HTTP status is the provider's own error, status, body and headers, so an
 * official SDK reads it (and retries it, or not) exactly as it would the real API's: OpenAI's 429 is
 * `rate_limit_exceeded` with `retry-after`; Anthropic's overload is 529 `overloaded_error`; Gemini's quota is
 * `RESOURCE_EXHAUSTED`; a call that is no LLM API gets a plain JSON error with the same status. An MCP tool error is
 * the `tools/call` result with `isError`, a JSON-RPC error the error response, whatever transport carries them.
 */
import type { ErrorAnswer } from '../../providers/errors.js';
import { providerErrorBody } from '../../providers/errors.js';
import type { ApiId } from '../../providers/types.js';
import { rpcError, type Message, type RequestId } from '../../providers/mcp.js';
import type { FaultThen } from './fault-rules.js';

/** The words each provider uses for a status (type, and OpenAI's code), and its default message. */
const OPENAI: Record<number, { type: string; code: string | null; message: string }> = {
  429: { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests. Please try again later.' },
  500: { type: 'server_error', code: null, message: 'The server had an error while processing your request. Sorry about that!' },
  503: { type: 'server_error', code: null, message: 'The engine is currently overloaded, please try again later' },
};
const ANTHROPIC: Record<number, { type: string; message: string }> = {
  429: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' },
  500: { type: 'api_error', message: 'Internal server error' },
  529: { type: 'overloaded_error', message: 'Overloaded' },
};
/** Bedrock's exceptions: the name in `x-amzn-errortype` (what the AWS SDKs read), a message in the body. */
const BEDROCK: Record<number, { type: string; message: string }> = {
  429: { type: 'ThrottlingException', message: 'Too many requests, please wait before trying again.' },
  500: { type: 'InternalServerException', message: 'The server encountered an internal error.' },
  503: { type: 'ServiceUnavailableException', message: 'Bedrock is unable to process your request.' },
};
const GEMINI: Record<number, string> = {
  429: 'Resource has been exhausted (e.g. check quota).',
  500: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  503: 'The model is overloaded. Please try again later.',
};

/** The error answer of an injected status for a call to `api` (undefined: not an LLM call). */
export function faultStatusAnswer(then: FaultThen, api: ApiId | undefined): ErrorAnswer {
  const status = then.status ?? 500;
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-tapedeck-fault': 'injected' };
  if (then.retryAfter !== undefined) {
    headers['retry-after'] = String(then.retryAfter);
    headers['retry-after-ms'] = String(Math.round(then.retryAfter * 1000));
  }
  const provider = api?.provider;
  if (provider === 'openai' || provider === 'openai-compatible' || provider === 'azure-openai') {
    const words = OPENAI[status] ?? { type: 'api_error', code: null, message: `HTTP ${status}` };
    if (status === 429) headers['x-ratelimit-remaining-requests'] = '0';
    return {
      status,
      headers,
      body: { error: { message: then.message ?? words.message, type: words.type, param: null, code: words.code } },
    };
  }
  if (provider === 'anthropic' || provider === 'vertex') {
    const words = ANTHROPIC[status] ?? { type: status >= 500 ? 'api_error' : 'invalid_request_error', message: `HTTP ${status}` };
    return { status, headers, body: providerErrorBody(api, status, words.type, then.message ?? words.message) };
  }
  if (provider === 'bedrock') {
    const words = BEDROCK[status] ?? { type: status >= 500 ? 'InternalServerException' : 'ValidationException', message: `HTTP ${status}` };
    headers['x-amzn-errortype'] = words.type;
    return { status, headers, body: { message: then.message ?? words.message, __type: words.type } };
  }
  if (provider === 'ollama') return { status, headers, body: providerErrorBody(api, status, '', then.message ?? `HTTP ${status}`) };
  if (provider === 'gemini')
    return { status, headers, body: providerErrorBody(api, status, '', then.message ?? GEMINI[status] ?? `HTTP ${status}`) };
  return {
    status,
    headers,
    body: { error: { type: 'injected_fault', message: then.message ?? `HTTP ${status} (a fault tapedeck injected)` } },
  };
}

/** The JSON-RPC answer an injected MCP fault gives `request`: the tool error of a `tools/call`, else the JSON-RPC error. */
export function faultRpcAnswer(then: Pick<FaultThen, 'toolError' | 'rpcError'>, request: Message): Message {
  const id = request.id as RequestId;
  if (then.toolError !== undefined && request.method === 'tools/call')
    return { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: then.toolError }], isError: true } };
  return rpcError(id, then.rpcError?.code ?? -32603, then.rpcError?.message ?? then.toolError ?? 'injected fault');
}
