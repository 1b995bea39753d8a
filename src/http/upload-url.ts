/**
 * Resumable uploads (Google's `X-Goog-Upload-URL`, a `Location` after a `201` or `308`) hand the client an absolute
 * URL of the upstream for the rest of the upload: followed as it is, those requests would leave tapedeck, unrecorded in
 * record and reaching the real service in replay. In base-URL mode (a route with a path prefix) such a URL under the
 * route's upstream is rewritten, in the client's answer only, to come back through the route on the address the
 * client used. The tape keeps what the upstream said; the rewrite is made again when replay serves it.
 */
import type { HeaderMap } from '../tape/schema.js';
import { upstreamUrl } from '../tape/routes.js';
import type { ResponseSink } from './sink.js';
import type { ProxyRequest } from './types.js';

/** Headers that may carry a URL the client is to send the upload's next requests to. */
const UPLOAD_URL_HEADERS = ['location', 'x-goog-upload-url', 'content-location'];

/** `sink` with upload URLs under the route's upstream rewritten to tapedeck's route; `sink` itself when none can be. */
export function rewriteUploadUrls(req: ProxyRequest, sink: ResponseSink): ResponseSink {
  // Only a route with a path prefix (base-URL mode): a forward proxy's route is the origin itself, and keeps it.
  if (!req.route.prefix.startsWith('/') || req.headers.host === undefined) return sink;
  return {
    ...sink,
    head(status: number, headers: HeaderMap) {
      let out = headers;
      for (const name of UPLOAD_URL_HEADERS) {
        const value = headers[name];
        if (value === undefined) continue;
        const through = throughRoute(req, value);
        if (through !== undefined) out = { ...out, [name]: through };
      }
      sink.head(status, out);
    },
  };
}

/** `url` through tapedeck's route, when it is an absolute URL under the route's upstream. */
export function throughRoute(req: Pick<ProxyRequest, 'route' | 'headers'>, url: string): string | undefined {
  let target: URL;
  let base: URL;
  try {
    target = new URL(url);
    base = new URL(upstreamUrl(req.route, '', []));
  } catch {
    return undefined;
  }
  if (target.origin !== base.origin) return undefined;
  const prefix = base.pathname.replace(/\/$/, '');
  if (prefix !== '' && target.pathname !== prefix && !target.pathname.startsWith(`${prefix}/`)) return undefined;
  const own = `${req.headers['x-forwarded-proto'] === 'https' ? 'https' : 'http'}://${req.headers.host}`;
  return `${own}${req.route.prefix}${target.pathname.slice(prefix.length)}${target.search}`;
}
