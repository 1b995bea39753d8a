/**
 * The error boundary of a raw-socket handler (`connect`, `upgrade`): whatever a client sends, an exception (or a
 * rejected promise) in the handler ends that client's connection with an HTTP error, logged once, and never reaches
 * the process (an uncaught exception there would end tapedeck and every exchange in flight).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../log.js';

export type SocketHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void | Promise<void>;

export function guardSocketHandler(
  what: string,
  log: Logger,
  handler: SocketHandler,
): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const failed = (req: IncomingMessage, socket: Duplex, err: unknown): void => {
    log.error({ err: (err as Error)?.message ?? String(err), target: String(req.url).slice(0, 200) }, `${what} failed`);
    if (socket.writable && !socket.destroyed)
      socket.end('HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\ntapedeck: internal error\n');
    else socket.destroy();
  };
  return (req, socket, head) => {
    try {
      const done = handler(req, socket, head);
      if (done instanceof Promise) done.catch((err: unknown) => failed(req, socket, err));
    } catch (err) {
      failed(req, socket, err);
    }
  };
}
