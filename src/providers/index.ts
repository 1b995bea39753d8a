/**
 * What an exchange means per LLM API. The proxy calls `describeLlm` once an exchange completes, before it is
 * written; inspect, diff and matching read the resulting `exchange.llm`.
 */
import type { Exchange, LlmMeaning } from '../tape/schema.js';

export type LlmProvider = LlmMeaning['provider'];
export type LlmApi = LlmMeaning['api'];

export interface ApiId {
  provider: LlmProvider;
  api: LlmApi;
}

/** The parts of an exchange a provider adapter reads. */
export type ExchangeView = Pick<Exchange, 'route' | 'request' | 'response' | 'error'>;

export { describeLlm, requestSideLlm } from './describe.js';
export { detectLlmApi } from './detect.js';
export { providerErrorBody } from './errors.js';
