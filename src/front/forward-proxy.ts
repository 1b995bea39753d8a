/**
 * tapedeck as an HTTP(S) forward proxy (`HTTP_PROXY` / `HTTPS_PROXY`): absolute-form requests (`GET http://host/p`)
 * and `CONNECT host:443` tunnels, whose TLS is terminated with a certificate from the local CA (`ca.ts`) so the
 * requests inside can be recorded and replayed like any other. Such a request's route is its origin
 * (`https://api.search.example`), so one tape holds LLM calls, MCP over HTTP and any other HTTP API. Hosts named as
 * pass-through are tunnelled (or forwarded) untouched and only counted: they are never on a tape.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import { TapedeckError } from '../errors.js';
import type { Logger } from '../log.js';
import { httpError, type ErrorAnswer } from '../providers/errors.js';
import { bareHostname, isLoopback, type OwnHosts } from '../own-hosts.js';
import { parseAuthority } from './authority.js';
import type { CertificateAuthority } from './ca.js';
import { refuseRaw } from '../http/raw-answer.js';
import { sendError } from '../http/sink.js';
import { guardSocketHandler } from './socket-guard.js';

export interface ForwardProxyOptions {
  /** The CA for intercepted HTTPS; asked for on the first tunnel (so a proxy never used as one creates none). */
  ca: () => CertificateAuthority;
  /** Hosts (`name` or `name:port`) tunnelled untouched, never recorded nor replayed. */
  passThrough?: readonly string[];
  /** Whether a host and port is this proxy itself (a client that proxies even its requests to tapedeck). */
  isSelf: (host: string, port: number) => boolean;
  /**
   * Serve as a forward proxy to clients on other machines too. Default false: only clients on this machine (loopback
   * peers) may use it, so that tapedeck listening on every interface is not an open proxy into the network it is on.
   */
  anyClient?: boolean;
  log: Logger;
}

/** Where a proxied request goes: its origin (the route) and its path and query. */
export interface ProxiedTarget {
  origin: string;
  /** Path and query, origin-form (`/search?q=x`). */
  url: string;
  /** The request is addressed to tapedeck itself: serve it as if it came without the proxy. */
  self: boolean;
}

export interface ForwardProxy {
  /** The target of a request that came as a forward-proxy request (absolute-form, or inside a tunnel); else undefined. */
  targetOf(req: IncomingMessage): ProxiedTarget | undefined;
  /** Why a client may not use tapedeck as a forward proxy (it is on another machine), or undefined when it may. */
  refusal(peer: string | undefined): string | undefined;
  /** Whether an origin is to be passed through untouched. */
  passesThrough(origin: string): boolean;
  /** Forward a plain-HTTP request to a pass-through host, unrecorded. */
  passHttp(req: IncomingMessage, res: ServerResponse, target: ProxiedTarget): void;
  /** The server's `connect` handler. */
  onConnect(server: Server): (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** Hosts passed through untouched, with how many connections or requests each. */
  readonly passedThrough: ReadonlyMap<string, number>;
  /** End every tunnel (shutdown). */
  closeAll(): void;
}

export function createForwardProxy(opts: ForwardProxyOptions): ForwardProxy {
  const tunnels = new WeakMap<object, string>();
  const open = new Set<Duplex>();
  const passedThrough = new Map<string, number>();
  const pass = new Set((opts.passThrough ?? []).map((h) => h.toLowerCase()));
  let ca: CertificateAuthority | undefined;

  const passesThrough = (origin: string): boolean => {
    const u = new URL(origin);
    const name = bareHostname(u.host);
    return pass.has(name) || pass.has(`${name}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`);
  };
  const count = (hostPort: string): void => void passedThrough.set(hostPort, (passedThrough.get(hostPort) ?? 0) + 1);

  const refusal = (peer: string | undefined): string | undefined =>
    opts.anyClient === true || isLoopback(peer)
      ? undefined
      : `tapedeck serves as a forward proxy to clients on this machine only (this one is ${peer ?? 'unknown'}); set forwardProxyClients: any in the config to serve others`;

  return {
    passedThrough,
    passesThrough,
    refusal,
    targetOf(req) {
      const tunnel = tunnels.get(req.socket);
      if (tunnel !== undefined) return { origin: tunnel, url: req.url ?? '/', self: false };
      const raw = req.url ?? '/';
      if (!/^https?:\/\//i.test(raw)) return undefined;
      let u: URL;
      try {
        u = new URL(raw);
      } catch {
        return undefined;
      }
      const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
      return { origin: u.origin, url: `${u.pathname}${u.search}`, self: opts.isSelf(bareHostname(u.host), port) };
    },
    passHttp(req, res, target) {
      const u = new URL(target.origin);
      count(u.host);
      opts.log.info({ host: u.host }, 'pass-through: forwarded untouched, not on the tape');
      const headers = { ...req.headers };
      delete headers['proxy-connection'];
      delete headers['proxy-authorization'];
      const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
      const up = send(
        {
          host: u.hostname.replace(/^\[|\]$/g, ''),
          port: u.port || (u.protocol === 'https:' ? 443 : 80),
          method: req.method,
          path: target.url,
          headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      up.on('error', (err) => sendError(res, unreachable(u.host, err)));
      res.on('close', () => up.destroy());
      req.pipe(up);
    },
    onConnect(server) {
      const tunnel = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
        const target = parseAuthority(req.url ?? '');
        socket.on('error', () => socket.destroy());
        if (!target.ok) {
          refuseRaw(socket, httpError(new TapedeckError('BAD_REQUEST', `tapedeck: ${target.reason}`)));
          return;
        }
        const refused = refusal((socket as Socket).remoteAddress);
        if (refused !== undefined) {
          opts.log.warn({ peer: (socket as Socket).remoteAddress }, 'refused a CONNECT from another machine');
          refuseRaw(socket, httpError(new TapedeckError('FORBIDDEN', `tapedeck: ${refused}`)));
          return;
        }
        const { host, port, origin } = target;
        open.add(socket);
        socket.once('close', () => open.delete(socket));
        if (passesThrough(origin)) {
          count(`${host}:${port}`);
          opts.log.info({ host, port }, 'pass-through: tunnelled untouched, not on the tape');
          const up: Socket = connect(port, host, () => {
            socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
            if (head.length > 0) up.write(head);
            up.pipe(socket);
            socket.pipe(up);
          });
          up.on('error', (err) => refuseRaw(socket, unreachable(`${host}:${port}`, err)));
          socket.once('close', () => up.destroy());
          return;
        }
        try {
          ca ??= opts.ca();
        } catch (err) {
          opts.log.error({ err: (err as Error).message }, 'no CA for HTTPS interception');
          refuseRaw(socket, httpError(new TapedeckError('UPSTREAM_ERROR', `tapedeck: ${(err as Error).message}`)));
          return;
        }
        const authority = ca;
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) socket.unshift(head);
        const tls = new TLSSocket(socket, {
          isServer: true,
          // The name the client asked for (SNI), else the CONNECT host (an IP address has no SNI).
          // A name no certificate can be made for fails this handshake only (the callback runs outside any guard).
          SNICallback: (name, cb) => {
            let context: ReturnType<CertificateAuthority['contextFor']>;
            try {
              context = authority.contextFor(name || host);
            } catch (err) {
              cb(err as Error, undefined);
              return;
            }
            cb(null, context);
          },
          secureContext: authority.contextFor(host),
          ALPNProtocols: ['http/1.1'],
        });
        tls.on('error', (err) => {
          opts.log.warn({ host, err: err.message }, 'TLS with the client failed (does it trust the tapedeck CA?)');
          socket.destroy();
        });
        tunnels.set(tls, origin);
        // The requests inside the tunnel are served by the same listener, which finds their origin by the socket.
        server.emit('connection', tls);
      };
      // Whatever a client sends, an exception here ends its connection, never the process.
      return guardSocketHandler('CONNECT', opts.log, tunnel);
    },
    closeAll() {
      for (const s of open) s.destroy();
      open.clear();
    },
  };
}

/** The check the listener makes for requests that come as a proxy's: none of them is addressed to tapedeck by name. */
export function isSelfFor(own: OwnHosts, port: () => number): (host: string, p: number) => boolean {
  return (host, p) => p === port() && own.allows(host);
}

/** A pass-through upstream that could not be reached: a 502 that says which and why. */
function unreachable(host: string, err: Error): ErrorAnswer {
  return httpError(new TapedeckError('UPSTREAM_ERROR', `tapedeck could not reach ${host}: ${err.message}`));
}
