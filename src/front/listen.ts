/**
 * The listening side of a proxy, whatever decides which tape a request goes to: the HTTP server on one port for
 * http:// and https:// (ws:// and wss://), HTTP/1.1 and HTTP/2, the forward proxy (CONNECT and absolute-form requests), the Host guard's
 * own names, and the stop sequence (stop accepting, end every connection, tunnel and open stream). `startProxy` (one
 * tape) and `startServe` (a tape per request) both listen here.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { TapedeckError } from '../errors.js';
import type { Logger } from '../log.js';
import { ownHosts, type OwnHosts } from '../own-hosts.js';
import { defaultCaDir, loadOrCreateCa, type CertificateAuthority } from './ca.js';
import { createForwardProxy, isSelfFor, type ForwardProxy } from './forward-proxy.js';
import { createConnections } from './connections.js';
import { createPortServer } from './port-sniff.js';
import type { ForwardProxySettings } from './proxy-options.js';
import { guardSocketHandler } from './socket-guard.js';

export interface ListenOptions {
  host?: string | undefined;
  /** 0 takes any free port. Default 8787. */
  port?: number | undefined;
  allowHosts?: readonly string[] | undefined;
  forwardProxy?: ForwardProxySettings | undefined;
  log: Logger;
}

/** What answers the requests: built once the proxy knows its own names and has its forward proxy. */
export interface Front {
  request: (req: IncomingMessage, res: ServerResponse) => void;
  upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
}

export interface Listening {
  url: string;
  host: string;
  port: number;
  forward: ForwardProxy;
  /**
   * Stop accepting and end every connection, tunnel and long-lived stream (`endSessions` ends the WebSocket sessions
   * before waiting); resolves once the server is closed. What is still in flight then settles on its own.
   */
  stop(endSessions: () => void): Promise<void>;
}

export async function listenProxy(opts: ListenOptions, build: (own: OwnHosts, forward: ForwardProxy) => Front): Promise<Listening> {
  const log = opts.log;
  const host = opts.host ?? '127.0.0.1';
  const own = ownHosts({ bound: host, allow: opts.allowHosts });
  let boundPort = -1;
  // One CA for the forward proxy's interception and for TLS on tapedeck's own port, made (or loaded) on first use.
  let authority: CertificateAuthority | undefined;
  const ca = (): CertificateAuthority => (authority ??= (opts.forwardProxy?.ca ?? (() => loadOrCreateCa(defaultCaDir())))());
  const forward = createForwardProxy({
    ca,
    passThrough: opts.forwardProxy?.passThrough ?? [],
    anyClient: opts.forwardProxy?.anyClient === true,
    isSelf: isSelfFor(own, () => boundPort),
    log,
  });
  const front = build(own, forward);
  const server: Server = createServer({ keepAliveTimeout: 65_000 }, front.request);
  // HTTP/1.1 and HTTP/2 (cleartext with prior knowledge, or chosen by ALPN where tapedeck ends TLS) alike.
  const connections = createConnections(server, front.request, log);
  server.on('connect', forward.onConnect(connections));
  server.on('upgrade', guardSocketHandler('upgrade', log, front.upgrade));
  // The port takes http:// and https:// (ws:// and wss://) alike, told apart by each connection's first bytes.
  const port = createPortServer(server, connections, { tlsContext: (name) => ca().contextFor(name), log });
  const info = await new Promise<AddressInfo>((resolve, reject) => {
    port.server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new TapedeckError('PORT_IN_USE', `port ${opts.port ?? 8787} on ${host} is in use`, {
              details: { port: opts.port ?? 8787, host },
            })
          : err,
      ),
    );
    port.server.listen(opts.port ?? 8787, host, () => resolve(port.server.address() as AddressInfo));
  });
  boundPort = info.port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${info.port}`,
    host,
    port: info.port,
    forward,
    async stop(endSessions) {
      const closed = new Promise<void>((resolve) => port.server.close(() => resolve()));
      server.close();
      // Long-lived streams (MCP GET streams, slow SSE) end now; their exchanges are still written.
      server.closeAllConnections();
      port.closeAll();
      forward.closeAll();
      endSessions();
      await closed;
    },
  };
}

/** Resolves after `drain`, or after `ms` with a warning: the bound is a safety net on stop, never the normal path. */
export async function drainWithin(drain: Promise<void>, ms: number, log: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bounded = new Promise<void>(
    (resolve) =>
      (timer = setTimeout(() => {
        log.warn({ shutdownMs: ms }, 'some exchanges did not finish in time after the stop; closing the tape without them');
        resolve();
      }, ms)),
  );
  await Promise.race([drain, bounded]);
  clearTimeout(timer);
}
