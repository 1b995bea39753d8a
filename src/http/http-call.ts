/**
 * An HTTP request as a call (`engine/call.ts`): its route, its place on the tape's timeline, and the request as the
 * tape records it (headers without hop-by-hop ones, the body encoded once, as `request-meaning.ts` encoded it).
 */
import { callOf, type Call } from '../engine/call.js';
import type { Body } from '../tape/schema.js';
import { tapeHeaders } from './headers.js';
import { requestMeaning } from './request-meaning.js';
import type { IncomingRequest } from '../replay/matcher.js';
import type { ProxyRequest } from './types.js';

/** `body`: the body that was sent instead of the client's (a modified replay rewrites it before it goes live). */
export function httpCall(req: ProxyRequest, body?: Body): Call {
  const { record, bodyText } = requestMeaning(req);
  const call = callOf('http', req.route.prefix, req.route.upstream, req, {
    method: record.method,
    path: record.path,
    query: record.query,
    headers: tapeHeaders(req.headers),
    body: body ?? record.body,
  });
  if (body === undefined && bodyText !== undefined) call.requestBodyText = bodyText;
  return call;
}

/**
 * The request with another body (one message of a JSON-RPC batch, as if sent alone): its meaning is computed anew
 * for that body, never carried over from the request it came in.
 */
export function withBody(req: ProxyRequest, body: Buffer): ProxyRequest {
  const { meaning: _batch, ...rest } = req;
  return { ...rest, body };
}

/** The request in tape terms with its meaning, as computed once for this request (`request-meaning.ts`). */
export function toIncoming(req: ProxyRequest): IncomingRequest {
  const { record, llm } = requestMeaning(req);
  const incoming: IncomingRequest = { route: req.route.prefix, request: record, transport: 'http' };
  if (llm !== undefined) incoming.llm = llm;
  return incoming;
}
