/**
 * What an exchange means per LLM API. The proxy calls `describeLlm` once an exchange completes, before it is
 * written; inspect, diff and matching read the resulting `exchange.llm`.
 */
export type { ApiId, ExchangeView, LlmApi, LlmProvider } from './types.js';
export { describeLlm, requestSideLlm } from './describe.js';
export { detectLlmApi } from './detect.js';
export { providerErrorBody } from './errors.js';
