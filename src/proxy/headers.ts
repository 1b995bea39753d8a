import type { HeaderMap } from '../tape/schema.js';
import { REDACTED } from '../tape/redact.js';

/** Hop-by-hop headers are never forwarded (RFC 9110 7.6.1), nor headers the transport recomputes. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'host', 'content-length']);

/** Request headers to send upstream: everything but hop-by-hop; `accept-encoding: identity` so streams arrive uncompressed. */
export function upstreamRequestHeaders(headers: HeaderMap): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    const name = k.toLowerCase();
    if (HOP_BY_HOP.has(name) || name.startsWith('proxy-')) continue;
    out[name] = v;
  }
  out['accept-encoding'] = 'identity';
  return out;
}

/** Headers as they go on the tape: without hop-by-hop headers, which belong to one connection, not to the exchange. */
export function tapeHeaders(headers: HeaderMap): HeaderMap {
  const out: HeaderMap = {};
  for (const [k, v] of Object.entries(headers)) {
    if (!HOP_BY_HOP.has(k) && !k.startsWith('proxy-')) out[k] = v;
  }
  return out;
}

/** Response headers to pass to the client. */
export function clientResponseHeaders(headers: HeaderMap, opts: { decoded?: boolean } = {}): Headers {
  const out = new Headers();
  for (const [k, v] of Object.entries(headers)) {
    const name = k.toLowerCase();
    if (HOP_BY_HOP.has(name) || v === REDACTED) continue;
    if (opts.decoded && name === 'content-encoding') continue;
    if (name === 'set-cookie') {
      for (const c of v.split('\n')) out.append(name, c);
      continue;
    }
    out.set(name, v);
  }
  return out;
}

/** Node/undici response headers (string | string[]) as a tape header map; multiple set-cookie values are joined by newlines. */
export function headerMapOf(raw: Record<string, string | string[] | undefined>): HeaderMap {
  const out: HeaderMap = {};
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined) continue;
    out[k.toLowerCase()] = Array.isArray(v) ? v.join(k.toLowerCase() === 'set-cookie' ? '\n' : ', ') : v;
  }
  return out;
}

export function fromWebHeaders(h: Headers): HeaderMap {
  const out: HeaderMap = {};
  h.forEach((v, k) => {
    out[k] = v;
  });
  const cookies = h.getSetCookie();
  if (cookies.length > 0) out['set-cookie'] = cookies.join('\n');
  return out;
}

export function isEventStream(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.toLowerCase().startsWith('text/event-stream');
}
