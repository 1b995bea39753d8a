/**
 * The error boundary of a raw-socket handler (`connect`, `upgrade`): whatever a client sends, an exception (or a
 * rejected promise) in the handler ends that client's connection with an HTTP error, logged once, and never reaches
 * the process (an uncaught exception there would end tapedeck and every exchange in flight).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { TapedeckError } from '../errors.js';
import type { Logger } from '../log.js';
import { httpError } from '../providers/errors.js';
import { refuseRaw } from '../http/raw-answer.js';

export type SocketHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void | Promise<void>;

export function guardSocketHandler(
  what: string,
  log: Logger,
  handler: SocketHandler,
): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const failed = (req: IncomingMessage, socket: Duplex, err: unknown): void => {
    log.error({ err: (err as Error)?.message ?? String(err), target: String(req.url).slice(0, 200) }, `${what} failed`);
    if (socket.writable && !socket.destroyed) refuseRaw(socket, httpError(new TapedeckError('INTERNAL', 'tapedeck: internal error')));
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
