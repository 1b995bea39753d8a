/** Which API a WebSocket session speaks, asking each registered adapter that reads sessions. */
import { providerAdapters } from '../registry.js';
import type { LlmProvider, ProviderAdapter, SessionReader } from '../types.js';

/** Per-run identifiers in a WebSocket API tapedeck has no adapter for (JSON-RPC ids, event and request ids). */
export const GENERIC_ID_KEYS: readonly string[] = [
  'id',
  'event_id',
  'eventId',
  'request_id',
  'requestId',
  'message_id',
  'messageId',
  'correlation_id',
  'nonce',
];

export interface SessionApi {
  provider: LlmProvider;
  adapter: ProviderAdapter;
  reader: SessionReader;
}

/** The adapter that reads a session on this route and path (the upgrade request's), or undefined for a plain WebSocket API. */
export function detectSession(route: string, path: string, upstream?: string): SessionApi | undefined {
  const target = { route, path: path.split('?')[0] ?? path, method: 'GET', upstream };
  for (const adapter of providerAdapters()) {
    const reader = adapter.session;
    const provider = reader?.detect(target);
    if (reader !== undefined && provider !== undefined) return { provider, adapter, reader };
  }
  return undefined;
}

/** The fields a session's messages carry per-run identifiers in. */
export function sessionIdKeys(api: SessionApi | undefined): readonly string[] {
  return api?.reader.idKeys ?? GENERIC_ID_KEYS;
}
