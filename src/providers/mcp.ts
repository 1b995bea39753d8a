import type { McpMeaning } from '../tape/schema.js';
import type { ExchangeView } from './index.js';

/**
 * What an MCP exchange means, when the request body is a JSON-RPC message (recognised by content, not route).
 * Owned by the MCP work (issue 3).
 */
export function describeMcp(_ex: ExchangeView & { transport: 'http' | 'stdio' }): McpMeaning | undefined {
  return undefined;
}
