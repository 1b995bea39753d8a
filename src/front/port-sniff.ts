/**
 * One port for http:// and https:// (ws:// and wss://): the first byte of each connection says which it is (a TLS
 * handshake record starts with 22, an HTTP request with a method's letter), and the connection is handed to the HTTP
 * server as it is, or through a TLS layer in front of it with a certificate from the local CA for the name the client
 * asked for (SNI) or the address it connected to (127.0.0.1, ::1, localhost). The Node `openai` SDK opens its Realtime
 * WebSocket as `wss://` whatever scheme its base URL has, so tapedeck's own port must speak TLS too.
 */
import type { Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { TLSSocket, type SecureContext } from 'node:tls';
import type { Logger } from '../log.js';

const TLS_HANDSHAKE = 0x16;

export interface PortServerOptions {
  /** A TLS context for a name or address; asked for on the first TLS connection (the CA is made then, if need be). */
  tlsContext: (name: string) => SecureContext;
  log: Logger;
  /** How long a connection may stay silent before its first byte (default 60 s). */
  firstByteMs?: number;
}

export interface PortServer {
  server: Server;
  /** Close every connection (on stop; the HTTP server does not track connections it did not accept itself). */
  closeAll(): void;
}

export function createPortServer(http: HttpServer, opts: PortServerOptions): PortServer {
  const open = new Set<Socket>();
  // noDelay as node:http's own server sets it: without it, an answer written in pieces (head, then body; stream
  // events) waits for the client's delayed ACK, 40 ms per request on Linux.
  const server = createServer({ noDelay: true }, (socket) => {
    open.add(socket);
    socket.setTimeout(opts.firstByteMs ?? 60_000, () => socket.destroy());
    socket.on('error', () => socket.destroy());
    socket.once('close', () => open.delete(socket));
    socket.once('data', (first: Buffer) => {
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(first);
      if (first[0] !== TLS_HANDSHAKE) {
        http.emit('connection', socket);
        socket.resume();
        return;
      }
      // The name the client asked for (SNI), else the address it connected to (an IP address has no SNI).
      const local = (socket.localAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
      let tls: TLSSocket;
      try {
        tls = new TLSSocket(socket, {
          isServer: true,
          secureContext: opts.tlsContext(local),
          SNICallback: (name, cb) => {
            try {
              cb(null, opts.tlsContext(name || local));
            } catch (err) {
              cb(err as Error);
            }
          },
          ALPNProtocols: ['http/1.1'],
        });
      } catch (err) {
        opts.log.error({ err: (err as Error).message }, 'no certificate for a TLS connection to tapedeck');
        socket.destroy();
        return;
      }
      tls.on('error', (err) => {
        opts.log.warn({ err: err.message }, 'TLS with the client failed (does it trust the tapedeck CA?)');
        socket.destroy();
      });
      http.emit('connection', tls);
    });
  });
  // node:http starts tracking connections (its header and request timeouts) when it starts listening; it never
  // listens here, so it is told when this server does.
  server.once('listening', () => http.emit('listening'));
  return {
    server,
    closeAll() {
      for (const s of open) s.destroy();
      open.clear();
    },
  };
}
