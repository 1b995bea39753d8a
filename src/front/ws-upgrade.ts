/**
 * The server's `upgrade` listener: a WebSocket upgrade request is resolved to its route the way a request is (the
 * route table, or its origin when it comes through the forward proxy's tunnel), checked the same way (the Host guard,
 * loopback clients for the proxy), and handed to the mode's session handler. Anything else that asks to upgrade
 * (`h2c`) is answered as the plain request it also is, on a connection that then closes. A handshake the client side
 * would refuse (no key, a version other than 13) is refused here, before anything is dialled upstream.
 */
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { TapedeckError } from '../errors.js';
import type { Logger } from '../log.js';
import type { OwnHosts } from '../own-hosts.js';
import { detectLlmApi } from '../providers/detect.js';
import { httpError } from '../providers/errors.js';
import type { HeaderMap, Route } from '../tape/schema.js';
import type { ForwardProxy } from './forward-proxy.js';
import { hostRefusal } from '../host-guard.js';
import { createRouteTable } from './routes.js';
import { refuseRaw } from '../http/raw-answer.js';
import type { SessionHandler } from '../transports/websocket/types.js';
import { ADD_ROUTE } from './closest-route.js';
import { redactUrlCredentials } from '../tape/redaction/url-credentials.js';
import { handshakeProblem } from '../transports/websocket/handshake-check.js';

export interface UpgradeListenerOptions {
  routes: readonly Route[];
  sessions: SessionHandler;
  /** Offset of "now" on the tape's timeline. */
  clock: () => number;
  log: Logger;
  own: OwnHosts;
  forward?: ForwardProxy;
  /** The request listener, for upgrade requests that are not WebSocket ones. */
  plain: (req: IncomingMessage, res: ServerResponse) => void;
}

export function createUpgradeListener(opts: UpgradeListenerOptions): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const table = createRouteTable(opts.routes);
  const refuse = (socket: Duplex, err: TapedeckError, path: string): void => {
    refuseRaw(socket, httpError(err, detectLlmApi('', path, 'GET')));
  };

  return (req, socket, head) => {
    const t0 = performance.now();
    const offsetMs = opts.clock();
    const startedAt = new Date();
    socket.on('error', () => socket.destroy());
    if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return servePlain(req, socket, head, opts.plain);
    let url = req.url ?? '/';
    const target = opts.forward?.targetOf(req);
    let proxied: Route | undefined;
    if (target !== undefined) {
      url = target.url;
      if (!target.self) {
        const refused = req.url?.startsWith('/') ? undefined : opts.forward?.refusal(req.socket.remoteAddress);
        if (refused !== undefined) return refuse(socket, new TapedeckError('FORBIDDEN', refused), url);
        // Secure origins (a tunnel) stay secure upstream: https://host -> wss://host.
        proxied = { prefix: target.origin, upstream: target.origin };
      }
    }
    const refused = proxied ? undefined : hostRefusal(req.headers, { own: opts.own });
    if (refused !== undefined) {
      opts.log.warn({ host: req.headers.host, origin: req.headers.origin }, 'refused a WebSocket upgrade not addressed to tapedeck');
      return refuse(socket, refused, url);
    }
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    const resolved = proxied ? { route: proxied, path: pathname } : table.resolve(pathname);
    if (resolved === undefined) {
      const known = table.routes.map((r) => `${r.prefix} -> ${redactUrlCredentials(r.upstream)}`).join(', ');
      const err = new TapedeckError(
        'NO_ROUTE',
        `tapedeck: no route for the WebSocket ${pathname}; routes: ${known || '(none)'}. ${ADD_ROUTE}`,
        {
          details: { path: pathname, routes: table.routes.map((r) => r.prefix) },
        },
      );
      return refuse(socket, err, pathname);
    }
    const malformed = handshakeProblem(req);
    if (malformed !== undefined) {
      opts.log.debug(
        { route: resolved.route.prefix, path: resolved.path, err: malformed.message },
        'refused a malformed WebSocket handshake',
      );
      return refuse(socket, malformed, pathname);
    }
    const headers: HeaderMap = {};
    for (const k in req.headers) {
      const v = req.headers[k];
      if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    }
    opts.sessions.handle({
      route: resolved.route,
      path: resolved.path,
      query: q === -1 ? [] : [...new URLSearchParams(url.slice(q + 1))],
      ...(q === -1 ? {} : { rawQuery: url.slice(q + 1) }),
      headers,
      startedAt,
      offsetMs,
      t0,
      req,
      socket,
      head,
    });
  };
}

/** An upgrade to something other than WebSocket (`h2c`): served as the HTTP/1.1 request it is, on a connection that then closes. */
function servePlain(req: IncomingMessage, socket: Duplex, head: Buffer, plain: (req: IncomingMessage, res: ServerResponse) => void): void {
  if (head.byteLength > 0 || (req.headers['content-length'] ?? '0') !== '0' || req.headers['transfer-encoding'] !== undefined) {
    const err = new TapedeckError(
      'BAD_REQUEST',
      'tapedeck: an upgrade other than WebSocket with a body is not supported; send the request without Upgrade',
    );
    refuseRaw(socket, httpError(err, detectLlmApi('', req.url ?? '/', req.method ?? 'GET')));
    return;
  }
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as never);
  res.on('finish', () => {
    res.detachSocket(socket as never);
    socket.end();
  });
  // The head is all there is: let the request end as a normal one does.
  req.push(null);
  plain(req, res);
}
