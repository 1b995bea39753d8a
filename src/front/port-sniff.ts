/**
 * One port for http:// and https:// (ws:// and wss://), HTTP/1.1 and HTTP/2: the first bytes of each connection say
 * which it is (a TLS handshake record starts with 22, an HTTP/2 connection with its preface `PRI * HTTP/2.0`, an
 * HTTP/1.1 request with a method's letter), and the connection is handed on as it is (`connections.ts`), or through a
 * TLS layer in front with a certificate from the local CA for the name the client asked for (SNI) or the address it
 * connected to (127.0.0.1, ::1, localhost), HTTP/2 or HTTP/1.1 as the client chose by ALPN. The Node `openai` SDK opens
 * its Realtime WebSocket as `wss://` whatever scheme its base URL has, so tapedeck's own port must speak TLS too.
 */
import type { Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { TLSSocket, type SecureContext } from 'node:tls';
import type { Logger } from '../log.js';
import { ALPN_PROTOCOLS, type Connections } from './connections.js';

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

export function createPortServer(http: HttpServer, connections: Connections, opts: PortServerOptions): PortServer {
  const open = new Set<Socket>();
  // noDelay as node:http's own server sets it: without it, an answer written in pieces (head, then body; stream
  // events) waits for the client's delayed ACK, 40 ms per request on Linux.
  const server = createServer({ noDelay: true }, (socket) => {
    open.add(socket);
    socket.setTimeout(opts.firstByteMs ?? 60_000, () => socket.destroy());
    socket.on('error', () => socket.destroy());
    socket.once('close', () => open.delete(socket));
    let seen: Buffer[] = [];
    const onData = (chunk: Buffer): void => {
      seen.push(chunk);
      const first = seen.length === 1 ? chunk : Buffer.concat(seen);
      // A connection that may still be HTTP/2 (its first bytes so far are the preface's) waits for more.
      const h2 = first[0] === TLS_HANDSHAKE ? false : connections.isH2(first);
      if (h2 === undefined) return;
      socket.off('data', onData);
      seen = [];
      socket.setTimeout(0);
      socket.pause();
      if (first[0] !== TLS_HANDSHAKE) return connections.plain(socket, first, h2);
      socket.unshift(first);
      serveTls(socket, connections, opts);
    };
    socket.on('data', onData);
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

/** A TLS connection to tapedeck's own port: its TLS ends here, then HTTP/1.1 or HTTP/2 as the client chose. */
function serveTls(socket: Socket, connections: Connections, opts: PortServerOptions): void {
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
      ALPNProtocols: ALPN_PROTOCOLS,
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
  connections.tls(tls);
}
