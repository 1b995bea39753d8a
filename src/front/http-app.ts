/**
 * The front door of every HTTP request the proxy serves: where it goes (its route, or its origin when tapedeck is a
 * forward proxy), whether it may be served at all (the Host guard), its body (spilled to the store when too large to
 * hold), and the mode's handler it is handed to.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isTapedeckError, TapedeckError } from '../errors.js';
import { detectLlmApi } from '../providers/detect.js';
import { httpError } from '../providers/errors.js';
import { sendError } from '../http/sink.js';
import type { OwnHosts } from '../own-hosts.js';
import { hostRefusal } from '../host-guard.js';
import type { Logger } from '../log.js';
import type { HeaderMap, Route } from '../tape/schema.js';
import { noRouteError } from './closest-route.js';
import type { ForwardProxy, ProxiedTarget } from './forward-proxy.js';
import { createRouteTable, type ResolvedRoute } from './routes.js';
import { wellKnownRoute } from './well-known.js';
import type { ProxyRequest } from '../http/types.js';
import { startSpill, type BodySpill, type LargeBody, type Spilling } from '../http/body-spill.js';

type RouteTable = ReturnType<typeof createRouteTable>;

export type ProxyHandler = (req: ProxyRequest, res: ServerResponse) => Promise<void>;

export interface ProxyAppOptions {
  routes: readonly Route[];
  handle: ProxyHandler;
  /** Offset of "now" on the tape's timeline. */
  clock: () => number;
  log: Logger;
  /** The names requests must address the proxy by (DNS rebinding protection). */
  own: OwnHosts;
  /** Requests that come as to a forward proxy (absolute-form, or inside an intercepted CONNECT tunnel). */
  forward?: ForwardProxy;
  /** Where bodies too large to hold go as they stream (the tape being written); without it every body is held. */
  spill?: BodySpill;
}

/**
 * The request listener: resolve the route, read the body, hand a `ProxyRequest` to the mode's handler.
 * Plain `node:http` rather than a framework adapter: the proxy is one catch-all on the hot path, and converting
 * every request and response to fetch-API objects cost more than half of the proxy's CPU in `npm run bench`.
 */
export function createRequestListener(opts: ProxyAppOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const table = createRouteTable(opts.routes);
  // Whatever a client sends, an exception while taking its request in ends that request with a 500, never the process.
  return (incoming, res) => {
    try {
      serve(opts, table, incoming, res);
    } catch (err) {
      opts.log.error({ err: (err as Error).message, url: String(incoming.url).slice(0, 200) }, 'could not take a request in');
      incoming.resume();
      fail(res, new TapedeckError('INTERNAL', 'tapedeck could not handle this request'), incoming.method ?? 'GET', '/');
    }
  };
}

/**
 * Answer with an error in the shape of the API the request is for (an SDK shows it as its own), or cut a started
 * answer. Before its route is known, the API is told by the path alone; after, by the route too, as everywhere else.
 */
function fail(res: ServerResponse, err: TapedeckError, method: string, path: string, route?: Route): void {
  sendError(res, httpError(err, detectLlmApi(route?.prefix ?? '', path, method, route?.upstream)));
}

/** One request arrived: its route (or the answer that it has none, or may not be served), then its body. */
function serve(opts: ProxyAppOptions, table: RouteTable, incoming: IncomingMessage, res: ServerResponse): void {
  const t0 = performance.now();
  const offsetMs = opts.clock();
  const startedAt = new Date();
  let url = incoming.url ?? '/';
  // As a forward proxy, the route is the request's origin. The Host check is for requests addressed to tapedeck by
  // name (a browser cannot be made to send absolute-form or CONNECT by a page it visits).
  const target = opts.forward?.targetOf(incoming);
  let proxied: Route | undefined;
  if (target !== undefined) {
    url = target.url;
    if (!target.self) {
      proxied = proxiedRoute(opts, incoming, res, target);
      if (proxied === undefined) return;
    }
  }
  const refused = proxied ? undefined : hostRefusal(incoming.headers, { own: opts.own });
  if (refused !== undefined) {
    incoming.resume();
    opts.log.warn({ host: incoming.headers.host, origin: incoming.headers.origin }, 'refused a request not addressed to tapedeck');
    fail(res, refused, incoming.method ?? 'GET', url);
    return;
  }
  const q = url.indexOf('?');
  const pathname = q === -1 ? url : url.slice(0, q);
  // A root well-known path of OAuth names its route (`well-known.ts`).
  const resolved = proxied ? { route: proxied, path: pathname } : (wellKnownRoute(pathname, table) ?? table.resolve(pathname));
  if (resolved === undefined) {
    incoming.resume();
    const err = noRouteError(pathname, incoming.method ?? 'GET', table.routes);
    fail(res, err, incoming.method ?? 'GET', pathname);
    return;
  }
  takeBody(opts, incoming, res, resolved, url, q, t0, offsetMs, startedAt);
}

/**
 * The route of a request that came as to a forward proxy: its origin. Undefined when it was answered here instead: a
 * client on another machine refused, or a pass-through host's request forwarded untouched.
 */
function proxiedRoute(opts: ProxyAppOptions, incoming: IncomingMessage, res: ServerResponse, target: ProxiedTarget): Route | undefined {
  // Inside a tunnel the client was checked at CONNECT.
  const refused = incoming.url?.startsWith('/') ? undefined : opts.forward?.refusal(incoming.socket.remoteAddress);
  if (refused !== undefined) {
    incoming.resume();
    fail(res, new TapedeckError('FORBIDDEN', refused), incoming.method ?? 'GET', target.url);
    return undefined;
  }
  if (opts.forward?.passesThrough(target.origin)) {
    opts.forward.passHttp(incoming, res, target);
    return undefined;
  }
  return { prefix: target.origin, upstream: target.origin };
}

/**
 * Read the body of a routed request, then hand it to the handler. Positional arguments, not an object: this runs for
 * every request. `url` is the request's origin-form URL and `q` where its query starts (-1: none); `t0`, `offsetMs` and
 * `startedAt` are when it arrived.
 */
function takeBody(
  opts: ProxyAppOptions,
  incoming: IncomingMessage,
  res: ServerResponse,
  resolved: ResolvedRoute,
  url: string,
  q: number,
  t0: number,
  offsetMs: number,
  startedAt: Date,
): void {
  const chunks: Buffer[] = [];
  // A body that grows past the spill limit goes to the store as it comes (bounded memory), not into `chunks`.
  let size = 0;
  let spilling: Spilling | undefined;
  incoming.on('data', (c: Buffer) => {
    if (spilling !== undefined) return spilling.write(c);
    chunks.push(c);
    if (opts.spill !== undefined && (size += c.byteLength) > opts.spill.limit) {
      const started = startSpill(opts.spill, chunks, incoming.headers['content-type']);
      spilling = started;
      chunks.length = 0;
      // A client that goes away mid-upload leaves nothing half-stored.
      incoming.on('close', () => {
        if (!incoming.complete) started.abort();
      });
    }
  });
  incoming.on('error', () => {
    spilling?.abort();
    res.destroy();
  });
  incoming.on('end', () => {
    if (spilling === undefined) return dispatch(undefined);
    spilling.end().then(dispatch, (err: unknown) => {
      opts.log.error({ err: (err as Error).message, path: resolved.path }, 'could not store a large request body');
      const known = isTapedeckError(err)
        ? err
        : new TapedeckError('TAPE_WRITE_FAILED', `could not store a large request body: ${(err as Error).message}`);
      fail(res, known, incoming.method ?? 'GET', resolved.path, resolved.route);
    });
  });
  const dispatch = (large: LargeBody | undefined): void => {
    // Optional fields set after, not spread in: this runs for every request.
    const req: ProxyRequest = {
      route: resolved.route,
      method: incoming.method ?? 'GET',
      path: resolved.path,
      query: q === -1 ? [] : [...new URLSearchParams(url.slice(q + 1))],
      headers: headerMap(incoming.headers),
      body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
      startedAt,
      offsetMs,
      t0,
    };
    if (q !== -1) req.rawQuery = url.slice(q + 1);
    if (large) req.large = large;
    handOver(opts, req, res);
  };
}

/** The request to the mode's handler; what it throws is answered as an error (logged, when it is not a known one). */
function handOver(opts: ProxyAppOptions, req: ProxyRequest, res: ServerResponse): void {
  opts.handle(req, res).catch((err: unknown) => {
    if (!isTapedeckError(err)) {
      opts.log.error(
        { err: (err as Error).message, stack: (err as Error).stack, route: req.route.prefix, path: req.path },
        'unhandled proxy error',
      );
    }
    const known = isTapedeckError(err)
      ? err
      : new TapedeckError('INTERNAL', `tapedeck internal error: ${(err as Error).message}`, { cause: err });
    fail(res, known, req.method, req.path, req.route);
  });
}

function headerMap(raw: IncomingMessage['headers']): HeaderMap {
  const out: HeaderMap = {};
  for (const k in raw) {
    const v = raw[k];
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(k === 'set-cookie' ? '\n' : ', ') : v;
  }
  return out;
}
