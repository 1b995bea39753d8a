/** The types every provider module shares: which API an exchange is for, and the parts of an exchange adapters read. */
import type { Exchange, LlmMeaning } from '../tape/schema.js';

export type LlmProvider = LlmMeaning['provider'];
export type LlmApi = LlmMeaning['api'];

export interface ApiId {
  provider: LlmProvider;
  api: LlmApi;
}

/** The parts of an exchange a provider adapter reads. */
export type ExchangeView = Pick<Exchange, 'route' | 'request' | 'response' | 'error'>;
