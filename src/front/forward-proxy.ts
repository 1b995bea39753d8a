/**
 * tapedeck as an HTTP(S) forward proxy (`HTTP_PROXY` / `HTTPS_PROXY`): absolute-form requests (`GET http://host/p`)
 * and `CONNECT host:443` tunnels, whose TLS is terminated with a certificate from the local CA (`ca.ts`) so the
 * requests inside can be recorded and replayed like any other. Such a request's route is its origin
 * (`https://api.search.example`), so one tape holds LLM calls, MCP over HTTP and any other HTTP API. Hosts named as
 * pass-through are tunnelled (or forwarded) untouched and only counted: they are never on a tape.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
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
import { ALPN_PROTOCOLS, sessionKey, type Connections } from './connections.js';

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
  /** The server's `connect` handler: an intercepted tunnel's requests are served by `connections` (HTTP/1.1 or HTTP/2). */
  onConnect(connections: Connections): (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** Hosts passed through untouched, with how many connections or requests each. */
  readonly passedThrough: ReadonlyMap<string, number>;
  /** End every tunnel (shutdown). */
  closeAll(): void;
}

export function createForwardProxy(opts: ForwardProxyOptions): ForwardProxy {
  const state: ProxyState = {
    opts,
    tunnels: new WeakMap<object, string>(),
    open: new Set<Duplex>(),
    passedThrough: new Map<string, number>(),
    pass: new Set((opts.passThrough ?? []).map((h) => h.toLowerCase())),
    ca: undefined,
  };
  return {
    passedThrough: state.passedThrough,
    passesThrough: (origin) => passesThrough(state, origin),
    refusal: (peer) => refusal(opts, peer),
    targetOf: (req) => targetOf(state, req),
    passHttp: (req, res, target) => passHttp(state, req, res, target),
    // Whatever a client sends, an exception here ends its connection, never the process.
    onConnect: (connections) =>
      guardSocketHandler('CONNECT', opts.log, (req, socket, head) => tunnel(state, connections, req, socket, head)),
    closeAll() {
      for (const s of state.open) s.destroy();
      state.open.clear();
    },
  };
}

/** One forward proxy's state: its tunnels' origins by socket, the sockets open, the pass-through hosts and counts. */
interface ProxyState {
  readonly opts: ForwardProxyOptions;
  /** The origin of each intercepted tunnel, by its TLS socket (HTTP/1.1) or HTTP/2 session: the requests inside find it by that. */
  readonly tunnels: WeakMap<object, string>;
  readonly open: Set<Duplex>;
  readonly passedThrough: Map<string, number>;
  /** Pass-through hosts, lower case. */
  readonly pass: Set<string>;
  /** Created on the first intercepted tunnel. */
  ca: CertificateAuthority | undefined;
}

function passesThrough(state: ProxyState, origin: string): boolean {
  const u = new URL(origin);
  const name = bareHostname(u.host);
  return state.pass.has(name) || state.pass.has(`${name}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`);
}

function count(state: ProxyState, hostPort: string): void {
  state.passedThrough.set(hostPort, (state.passedThrough.get(hostPort) ?? 0) + 1);
}

function refusal(opts: ForwardProxyOptions, peer: string | undefined): string | undefined {
  return opts.anyClient === true || isLoopback(peer)
    ? undefined
    : `tapedeck serves as a forward proxy to clients on this machine only (this one is ${peer ?? 'unknown'}); set forwardProxyClients: any in the config to serve others`;
}

function targetOf(state: ProxyState, req: IncomingMessage): ProxiedTarget | undefined {
  const tunnel = state.tunnels.get(sessionKey(req));
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
  return { origin: u.origin, url: `${u.pathname}${u.search}`, self: state.opts.isSelf(bareHostname(u.host), port) };
}

function passHttp(state: ProxyState, req: IncomingMessage, res: ServerResponse, target: ProxiedTarget): void {
  const u = new URL(target.origin);
  count(state, u.host);
  state.opts.log.info({ host: u.host }, 'pass-through: forwarded untouched, not on the tape');
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
}

/** A `CONNECT`: refused, tunnelled untouched (a pass-through host), or intercepted with a certificate from the CA. */
function tunnel(state: ProxyState, connections: Connections, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const { opts } = state;
  const target = parseAuthority(req.url ?? '');
  socket.on('error', () => socket.destroy());
  if (!target.ok) {
    refuseRaw(socket, httpError(new TapedeckError('BAD_REQUEST', `tapedeck: ${target.reason}`)));
    return;
  }
  const refused = refusal(opts, (socket as Socket).remoteAddress);
  if (refused !== undefined) {
    opts.log.warn({ peer: (socket as Socket).remoteAddress }, 'refused a CONNECT from another machine');
    refuseRaw(socket, httpError(new TapedeckError('FORBIDDEN', `tapedeck: ${refused}`)));
    return;
  }
  const { host, port, origin } = target;
  state.open.add(socket);
  socket.once('close', () => state.open.delete(socket));
  if (passesThrough(state, origin)) return passTunnel(state, socket, head, host, port);
  try {
    state.ca ??= opts.ca();
  } catch (err) {
    opts.log.error({ err: (err as Error).message }, 'no CA for HTTPS interception');
    refuseRaw(socket, httpError(new TapedeckError('UPSTREAM_ERROR', `tapedeck: ${(err as Error).message}`)));
    return;
  }
  intercept(state, connections, state.ca, socket, head, host, origin);
}

/** A tunnel to a pass-through host: the bytes go both ways untouched, only counted. */
function passTunnel(state: ProxyState, socket: Duplex, head: Buffer, host: string, port: number): void {
  count(state, `${host}:${port}`);
  state.opts.log.info({ host, port }, 'pass-through: tunnelled untouched, not on the tape');
  const up: Socket = connect(port, host, () => {
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) up.write(head);
    up.pipe(socket);
    socket.pipe(up);
  });
  up.on('error', (err) => refuseRaw(socket, unreachable(`${host}:${port}`, err)));
  socket.once('close', () => up.destroy());
}

/** An intercepted tunnel: its TLS ends here, and the requests inside are served by the same listener. */
function intercept(
  state: ProxyState,
  connections: Connections,
  authority: CertificateAuthority,
  socket: Duplex,
  head: Buffer,
  host: string,
  origin: string,
): void {
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
    ALPNProtocols: ALPN_PROTOCOLS,
  });
  tls.on('error', (err) => {
    state.opts.log.warn({ host, err: err.message }, 'TLS with the client failed (does it trust the tapedeck CA?)');
    socket.destroy();
  });
  // The requests inside the tunnel are served by the same listener (HTTP/1.1 or HTTP/2, as the client chose), which
  // finds their origin by their connection.
  connections.tls(tls, (key) => state.tunnels.set(key, origin));
}

/** The check the listener makes for requests that come as a proxy's: none of them is addressed to tapedeck by name. */
export function isSelfFor(own: OwnHosts, port: () => number): (host: string, p: number) => boolean {
  return (host, p) => p === port() && own.allows(host);
}

/** A pass-through upstream that could not be reached: a 502 that says which and why. */
function unreachable(host: string, err: Error): ErrorAnswer {
  return httpError(new TapedeckError('UPSTREAM_ERROR', `tapedeck could not reach ${host}: ${err.message}`));
}
