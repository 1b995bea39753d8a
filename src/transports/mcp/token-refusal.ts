/**
 * A recorded answer that refused the client's token rather than answering its message: a 401 for a token the server
 * no longer took (expired, revoked), a 403 `insufficient_scope` asking for more (step-up). Replayed in order like any
 * answer, it goes out as the HTTP answer it was (its status, its body, its `WWW-Authenticate`, whose
 * `resource_metadata` names tapedeck's metadata for the route), so the client runs the OAuth flow again as it did
 * while recording (`transports/oauth/`).
 */
import { challengeOf } from '../../providers/oauth.js';
import { bodyText } from '../../tape/body.js';
import type { HeaderMap } from '../../tape/schema.js';
import { clientChallenge, clientOrigin } from '../../http/oauth-mount.js';
import type { ProxyRequest } from '../../http/types.js';
import type { Decision } from './engine.js';

export interface TokenRefusal {
  status: number;
  headers: HeaderMap;
  text: string;
}

/** The refusal a decision's recorded answer was, when it was one; undefined otherwise. */
export function tokenRefusal(d: Decision, req: ProxyRequest): TokenRefusal | undefined {
  const res = d.source?.response;
  if (d.kind !== 'answered' || res === undefined || challengeOf(res) === undefined) return undefined;
  const headers: HeaderMap = {
    'www-authenticate': clientChallenge(res.headers['www-authenticate'] as string, clientOrigin(req.headers), req.route.prefix),
  };
  if (res.headers['content-type'] !== undefined) headers['content-type'] = res.headers['content-type'];
  return { status: res.status, headers, text: bodyText(res.body) ?? '' };
}
