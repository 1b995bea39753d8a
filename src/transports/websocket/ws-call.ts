/**
 * A WebSocket session as a call (`engine/call.ts`): its upgrade request as the tape records it (`GET`, the path below
 * the route, the query, headers without hop-by-hop or per-connection handshake values, no body).
 */
import { callOf, type Call } from '../../engine/call.js';
import { wsTapeHeaders } from './session-tape.js';
import type { WsUpgrade } from './types.js';

/** `query`: the query sent upstream when it was rewritten (modified replay). */
export function wsCall(up: WsUpgrade, query: [string, string][] = up.query): Call {
  return callOf('websocket', up.route.prefix, up.route.upstream, up, {
    method: 'GET',
    path: up.path,
    query,
    headers: wsTapeHeaders(up.headers),
    body: { kind: 'empty' },
  });
}
