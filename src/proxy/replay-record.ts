import { isoTimestamp } from '../tape/timestamp.js';
import { encodeBody } from '../tape/body.js';
import { round } from '../tape/sse.js';
import type { RequestRecord } from '../tape/schema.js';
import type { NewExchange } from '../tape/tape-writer.js';
import { tapeHeaders } from './headers.js';
import type { ProxyRequest } from './types.js';

/**
 * What every replay-tape record of an HTTP request starts with: the request as it came (headers as they go on a
 * tape), on the tape's timeline. Pass `request` when its body is already encoded.
 */
export function incomingRecord(
  req: ProxyRequest,
  request?: Omit<RequestRecord, 'headers'>,
): Pick<NewExchange, 'startedAt' | 'offsetMs' | 'transport' | 'route' | 'upstream' | 'request'> {
  const base = request ?? {
    method: req.method,
    path: req.path,
    query: req.query,
    body: req.large?.body ?? encodeBody(req.body, req.headers['content-type']),
  };
  return {
    startedAt: isoTimestamp(req.startedAt),
    offsetMs: round(req.offsetMs),
    transport: 'http',
    route: req.route.prefix,
    upstream: req.route.upstream,
    request: { method: base.method, path: base.path, query: base.query, headers: tapeHeaders(req.headers), body: base.body },
  };
}
