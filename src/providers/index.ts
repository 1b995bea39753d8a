/**
 * What an exchange means per API. The proxy describes each exchange once it completes, before it is written;
 * inspect, diff and matching read the recorded `exchange.llm` / `exchange.mcp` afterwards.
 */
export type * from './types.js';
export type { RequestSigner, SignableRequest, SignOptions } from './signing.js';
export { signRequest } from './signing.js';
export { describeLlm, requestSideLlm, describeExchange, conversationOf } from './describe.js';
export { detectLlmApi, detectAdapter } from './detect.js';
export { providerErrorBody, httpError, rpcErrorMessage, rpcHttpError, type ErrorAnswer } from './errors.js';
export { providerAdapters, registerProvider, adapterFor, signerFor } from './registry.js';
export { convertResponse, streamConvertible, streamUsageAsked } from './stream-convert.js';
