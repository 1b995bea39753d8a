/**
 * Record mode, legacy HTTP+SSE transport: the server's first event on the GET stream is `endpoint`, a URL the client
 * resolves against the origin it connected to (tapedeck's). Without the route prefix the client's POSTs would miss
 * the route, so the client gets the endpoint rewritten to go through tapedeck; the tape keeps what the server said.
 * A sink wrapper: only a GET answered with an event stream is looked at, and only its first event.
 */
import { overSink, type ResponseSink } from '../http/sink.js';
import { upstreamUrl } from '../tape/routes.js';
import type { ProxyRequest } from '../http/types.js';
import type { Route } from '../tape/schema.js';
import { SseSplitter, serializeSseFields } from '../tape/framing/sse.js';

export function rewriteLegacyEndpoint(req: ProxyRequest, sink: ResponseSink): ResponseSink {
  if (req.method !== 'GET') return sink;
  let state: 'pass' | 'first' = 'pass';
  const splitter = new SseSplitter();
  let held: Uint8Array[] = [];

  const flushHeld = (): void => {
    for (const c of held) sink.write(c);
    held = [];
  };

  return overSink(sink, {
    head(status, headers) {
      if ((headers['content-type'] ?? '').toLowerCase().startsWith('text/event-stream')) state = 'first';
      sink.head(status, headers);
    },
    write(chunk) {
      if (state === 'pass') return sink.write(chunk);
      held.push(chunk);
      const blocks = splitter.write(chunk);
      if (blocks.length === 0) return true;
      state = 'pass';
      const first = blocks[0];
      if (first?.event !== 'endpoint') {
        flushHeld();
        return true;
      }
      const below = endpointBelowRoute(first.data, req.route, upstreamUrl(req.route, req.path, req.query, req.rawQuery));
      if (below === undefined) {
        flushHeld();
        return true;
      }
      // Everything held after the first event goes out unchanged, byte for byte.
      const all = Buffer.concat(held);
      held = [];
      // The bytes of the first event: a leading byte order mark (three bytes in UTF-8) is not in its text.
      const rest = all.subarray((splitter.bom ? 3 : 0) + Buffer.byteLength(first.raw));
      const rewritten = serializeSseFields({
        event: 'endpoint',
        data: `${req.route.prefix}${below.path}${below.search}`,
        id: first.id,
        retry: first.retry,
      });
      sink.write(Buffer.from(rewritten));
      return rest.byteLength > 0 ? sink.write(rest) : true;
    },
    end() {
      flushHeld();
      sink.end();
    },
    cut() {
      flushHeld();
      sink.cut();
    },
  });
}

/**
 * Map the `endpoint` event of a legacy server to a path below the route, if it lies under the route's upstream:
 * `/message?sessionId=1` from upstream `http://h:1` on route `/ev` -> `{ path: '/message', search: '?sessionId=1' }`.
 */
export function endpointBelowRoute(data: string, route: Route, streamUrl: string): { path: string; search: string } | undefined {
  let target: URL;
  let upstream: URL;
  try {
    target = new URL(data.trim(), streamUrl);
    upstream = new URL(route.upstream);
  } catch {
    return undefined;
  }
  if (target.origin !== upstream.origin) return undefined;
  const base = upstream.pathname.replace(/\/$/, '');
  if (base !== '' && target.pathname !== base && !target.pathname.startsWith(base + '/')) return undefined;
  return { path: target.pathname.slice(base.length) || '/', search: target.search };
}
