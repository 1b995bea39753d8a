import type { LlmMeaning, RequestRecord } from '../tape/schema.js';
import type { ApiId, ExchangeView } from './index.js';

/** Which LLM API a request is for, from its route and path (and method); undefined for non-LLM traffic. */
export function detectLlmApi(_route: string, _path: string, _method: string): ApiId | undefined {
  return undefined; // providers helper: implement
}

/** Request-side meaning (provider, api, model, params, streamed) of an LLM request, for matching and miss reports. */
export function requestSideLlm(_route: string, _request: RequestRecord): LlmMeaning | undefined {
  return undefined; // providers helper: implement
}

/** Full meaning of a completed exchange: request side plus usage, tool calls, output text, stop reason. */
export function describeLlm(_ex: ExchangeView): LlmMeaning | undefined {
  return undefined; // providers helper: implement
}
