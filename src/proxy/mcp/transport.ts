/**
 * The boundary between the MCP engine and what carries messages to and from a peer, in the MCP SDK's `Transport`
 * shape (start / send / close, with onmessage / onerror / onclose), so that the SDK's own transports plug in (tests
 * drive the stdio replay through `InMemoryTransport`). Two things differ from the SDK's interface, both for
 * JSON-RPC batches (MCP 2025-03-26), which the SDK no longer carries: a batch arrives as one array of messages
 * and its answer is sent as one array. And a message that cannot be read (not JSON, not JSON-RPC, a line over the
 * limit) goes to `onerror` as a `TapedeckError` with the text it was, so it can be answered and recorded.
 */
import type { TapedeckError } from '../../errors.js';
import type { Message } from '../../providers/mcp.js';

export interface McpTransport {
  start(): Promise<void>;
  /** Resolves once the message is on its way (a stream transport waits for `drain`); sends keep their order. */
  send(message: Message | Message[]): Promise<void>;
  close(): Promise<void>;
  // Callbacks in method syntax, so the SDK's transports (whose callbacks take one `JSONRPCMessage`, a plain
  // `Error`) are assignable to this interface.
  /** One message, or a JSON-RPC batch. A returned promise holds the next message back until it settles. */
  onmessage?(message: Message | Message[]): void | Promise<void>;
  /** A message that could not be read, with the text it was when there is one (none for a line over the limit). */
  onerror?(error: TapedeckError, unread?: { text?: string }): void | Promise<void>;
  onclose?(): void;
}
