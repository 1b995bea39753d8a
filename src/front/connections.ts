/**
 * Where an accepted connection goes once its protocol is known: HTTP/1.1 (node:http's server, with its upgrades and
 * CONNECT) or HTTP/2 (node:http2's server, through its compatibility API so the same request listener serves both). A
 * plain connection is HTTP/2 when it opens with the client preface (`PRI * HTTP/2.0`, "prior knowledge": what the AWS
 * SDK for JavaScript sends to an `http://` endpoint); a TLS connection is HTTP/2 when the client chose `h2` by ALPN.
 * An HTTP/2 request is shaped as an HTTP/1.1 one before the listener sees it: its `:authority` as `Host`, no pseudo-
 * headers, and an answer's connection-specific headers (which HTTP/2 forbids) left out.
 */
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { createServer as createH2Server, type Http2ServerRequest, type Http2ServerResponse, type Http2Session } from 'node:http2';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { Logger } from '../log.js';

/** The client preface of HTTP/2 starts with these bytes; no HTTP/1.1 method does. */
const H2_PREFACE = Buffer.from('PRI * HTTP/2.0');
/** What tapedeck offers by ALPN where it ends TLS. */
export const ALPN_PROTOCOLS = ['h2', 'http/1.1'];

/** Headers HTTP/2 forbids in an answer (RFC 9113 8.2.2). */
const CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

export interface Connections {
  /**
   * Whether the first bytes of a plain connection say HTTP/2 (true), HTTP/1.1 (false), or not yet (undefined: wait
   * for more bytes).
   */
  isH2(first: Buffer): boolean | undefined;
  /** Serve a plain connection whose first bytes (`first`, with `h2` from {@link isH2}) were read from it. */
  plain(socket: Socket, first: Buffer, h2: boolean): void;
  /**
   * Serve a TLS connection ended here, by the protocol its client chose. `tag` is called with what the requests
   * inside will be found by (`sessionKey`): the TLS socket for HTTP/1.1, the HTTP/2 session for HTTP/2.
   */
  tls(tls: TLSSocket, tag?: (key: object) => void): void;
}

export function createConnections(
  http: HttpServer,
  request: (req: IncomingMessage, res: ServerResponse) => void,
  log: Logger,
): Connections {
  const h2 = createH2Server({}, (req, res) => request(asHttp1Request(req), asHttp1Response(res)));
  h2.on('sessionError', (err) => log.warn({ err: err.message }, 'an HTTP/2 connection failed'));
  const serveH2 = (socket: Duplex, tag?: (key: object) => void): void => {
    // The session is made while the connection is handed over (synchronously): it is tagged as it is made.
    const onSession = (session: Http2Session): void => tag?.(session);
    if (tag) h2.once('session', onSession);
    h2.emit('connection', socket);
    h2.off('session', onSession);
  };
  return {
    isH2(first) {
      const n = Math.min(first.byteLength, H2_PREFACE.byteLength);
      if (!first.subarray(0, n).equals(H2_PREFACE.subarray(0, n))) return false;
      return n === H2_PREFACE.byteLength ? true : undefined;
    },
    plain(socket, first, isH2) {
      if (isH2) return serveH2(relayed(socket, first));
      socket.unshift(first);
      http.emit('connection', socket);
      socket.resume();
    },
    tls(tls, tag) {
      const serve = (): void => {
        if (tls.alpnProtocol === 'h2') serveH2(relayed(tls), tag);
        else {
          tag?.(tls);
          http.emit('connection', tls);
        }
      };
      // The protocol is known once the handshake is done; what the client sends meanwhile waits in the socket.
      if (tls.alpnProtocol !== null && tls.alpnProtocol !== undefined) serve();
      else tls.once('secure', serve);
    },
  };
}

/** What the requests of a connection are found by (`Connections.tls`'s tag): its HTTP/2 session, else its socket. */
export function sessionKey(req: IncomingMessage): object {
  const stream = (req as unknown as Partial<Http2ServerRequest>).stream;
  return stream?.session ?? req.socket;
}

/** An HTTP/2 request as the HTTP/1.1 listener reads one: `Host` from `:authority`, no pseudo-headers. */
function asHttp1Request(req: Http2ServerRequest): IncomingMessage {
  // The request's own headers keep the pseudo-headers (its `url` and `method` read them): the listener gets a copy.
  const headers: Record<string, string | string[] | undefined> = {};
  for (const [k, v] of Object.entries(req.headers)) if (!k.startsWith(':')) headers[k] = v;
  headers.host ??= req.authority;
  Object.defineProperty(req, 'headers', { value: headers, configurable: true });
  return req as unknown as IncomingMessage;
}

/** An HTTP/2 answer as the proxy writes one: connection-specific headers dropped, `destroyed` as a node response has it. */
function asHttp1Response(res: Http2ServerResponse): ServerResponse {
  const writeHead = res.writeHead.bind(res);
  const patched = res as Http2ServerResponse & { destroyed?: boolean };
  Object.defineProperty(patched, 'destroyed', { get: () => res.stream.destroyed, configurable: true });
  patched.writeHead = ((status: number, ...rest: unknown[]) => {
    const last = rest[rest.length - 1];
    if (last !== null && typeof last === 'object' && !Array.isArray(last)) {
      const headers: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(last)) if (!CONNECTION_SPECIFIC.has(k.toLowerCase())) headers[k] = v;
      rest[rest.length - 1] = headers;
    }
    return (writeHead as (...a: unknown[]) => Http2ServerResponse)(status, ...rest);
  }) as Http2ServerResponse['writeHead'];
  return patched as unknown as ServerResponse;
}

/**
 * A connection as a stream of its own, reading `first` (bytes already read from it) first. node:http2 reads a socket
 * through its native handle: past bytes put back with `unshift`, and not at all from a TLS socket made outside a
 * `tls.Server` (as tapedeck makes them, to sniff the port and intercept tunnels).
 */
function relayed(socket: Duplex, first?: Buffer): Duplex {
  const stream = new Duplex({
    read: () => void socket.resume(),
    write: (chunk: Buffer, _encoding, done) => void socket.write(chunk, done),
    final: (done) => {
      socket.end();
      done();
    },
    destroy: (err, done) => {
      socket.destroy();
      done(err);
    },
  });
  if (first !== undefined) stream.push(first);
  socket.on('data', (chunk: Buffer) => {
    if (!stream.push(chunk)) socket.pause();
  });
  socket.once('end', () => stream.push(null));
  socket.once('close', () => stream.destroy());
  socket.resume();
  return stream;
}
