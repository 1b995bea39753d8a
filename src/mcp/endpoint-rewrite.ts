/**
 * Record mode, legacy HTTP+SSE transport: the server's first event on the GET stream is `endpoint`, a URL the client
 * resolves against the origin it connected to (tapedeck's). Without the route prefix the client's POSTs would miss
 * the route, so the client gets the endpoint rewritten to go through tapedeck; the tape keeps what the server said.
 * A sink wrapper: only a GET answered with an event stream is looked at, and only its first event.
 */
import type { ResponseSink } from '../proxy/sink.js';
import { upstreamUrl } from '../proxy/routes.js';
import type { ProxyRequest } from '../proxy/types.js';
import { SseSplitter, serializeSseFields } from '../tape/sse.js';
import { endpointBelowRoute } from './route-index.js';

export function rewriteLegacyEndpoint(req: ProxyRequest, sink: ResponseSink): ResponseSink {
  if (req.method !== 'GET') return sink;
  let state: 'pass' | 'first' = 'pass';
  const splitter = new SseSplitter();
  const decoder = new TextDecoder();
  let held: Uint8Array[] = [];

  const flushHeld = (): void => {
    for (const c of held) sink.write(c);
    held = [];
  };

  return {
    ...sink,
    head(status, headers) {
      if ((headers['content-type'] ?? '').toLowerCase().startsWith('text/event-stream')) state = 'first';
      sink.head(status, headers);
    },
    write(chunk) {
      if (state === 'pass') return sink.write(chunk);
      held.push(chunk);
      const blocks = splitter.push(decoder.decode(chunk, { stream: true }));
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
      const rest = all.subarray(Buffer.byteLength(first.raw));
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
  };
}
