/** The client end of a stdio connection over two streams, read the way the SDK's stdio client reads its pipe. */
import type { Readable, Writable } from 'node:stream';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * The client end of a stdio connection as the SDK's `StdioClientTransport` reads its pipe (its `ReadBuffer`, every
 * message of a read handled at once), each read taking whatever the server wrote until the reader got to it.
 */
export class PipeClientTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: Transport['onclose'];
  onerror?: Transport['onerror'];
  private readonly buffer = new ReadBuffer();
  constructor(
    private readonly toServer: Writable,
    private readonly fromServer: Readable,
  ) {}
  start(): Promise<void> {
    this.fromServer.on('readable', () => {
      for (let chunk: Buffer | null; (chunk = this.fromServer.read() as Buffer | null) !== null;) this.buffer.append(chunk);
      for (let m: JSONRPCMessage | null; (m = this.buffer.readMessage()) !== null;) this.onmessage?.(m);
    });
    return Promise.resolve();
  }
  send(message: JSONRPCMessage): Promise<void> {
    this.toServer.write(serializeMessage(message));
    return Promise.resolve();
  }
  close(): Promise<void> {
    this.toServer.end();
    this.onclose?.();
    return Promise.resolve();
  }
}
