import type { ServerResponse } from 'node:http';
import type { HeaderMap, MatchInfo } from '../tape/schema.js';
import { REDACTED } from '../tape/redaction/redact.js';

/**
 * Hop-by-hop headers are never forwarded (RFC 9110 7.6.1), nor headers the transport recomputes. `expect` too:
 * node:http answers a client's `100-continue` itself, and tapedeck has the whole body before it forwards it.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'host',
  'content-length',
  'expect',
]);

/** Request headers to send upstream: everything but hop-by-hop; `accept-encoding: identity` so streams arrive uncompressed. */
export function upstreamRequestHeaders(headers: HeaderMap): Record<string, string> {
  const out: Record<string, string> = {};
  // `for...in` rather than Object.entries: these run several times per request, and entries builds an array per header.
  for (const k in headers) {
    const name = k.toLowerCase();
    if (HOP_BY_HOP.has(name) || name.startsWith('proxy-')) continue;
    out[name] = headers[k] as string;
  }
  out['accept-encoding'] = 'identity';
  return out;
}

/** Headers as they go on the tape: without hop-by-hop headers, which belong to one connection, not to the exchange. */
export function tapeHeaders(headers: HeaderMap): HeaderMap {
  const out: HeaderMap = {};
  for (const k in headers) {
    if (!HOP_BY_HOP.has(k) && !k.startsWith('proxy-')) out[k] = headers[k] as string;
  }
  return out;
}

/** How a response was framed on the wire: its length, or chunked. Kept on the tape so replay can frame it the same way. */
const FRAMING = new Set(['content-length', 'transfer-encoding']);

/** Response headers as they go on the tape: like `tapeHeaders`, but the framing (`content-length`, `transfer-encoding`) is kept. */
export function tapeResponseHeaders(headers: HeaderMap): HeaderMap {
  const out: HeaderMap = {};
  for (const k in headers) {
    if (FRAMING.has(k) || (!HOP_BY_HOP.has(k) && !k.startsWith('proxy-'))) out[k] = headers[k] as string;
  }
  return out;
}

/**
 * Response headers to pass to the client: no hop-by-hop headers, nothing redacted, and no `content-encoding` when
 * the body is served decoded (replay serves the decoded body from the tape).
 */
export function clientHeaderMap(headers: HeaderMap, opts: { decoded?: boolean } = {}): HeaderMap {
  const out: HeaderMap = {};
  for (const k in headers) {
    const v = headers[k] as string;
    if (HOP_BY_HOP.has(k) || v === REDACTED || (opts.decoded && k === 'content-encoding')) continue;
    out[k] = v;
  }
  return out;
}

/** Node/undici response headers (string | string[]) as a tape header map; multiple set-cookie values are joined by newlines. */
export function headerMapOf(raw: Record<string, string | string[] | undefined>): HeaderMap {
  const out: HeaderMap = {};
  for (const k in raw) {
    const v = raw[k];
    if (v === undefined) continue;
    out[k.toLowerCase()] = Array.isArray(v) ? v.join(k.toLowerCase() === 'set-cookie' ? '\n' : ', ') : v;
  }
  return out;
}

/** How a replayed answer matched, as response headers: kind and source, and for a semantic match its stage and score. */
export function matchHeaders(match: MatchInfo): HeaderMap {
  const h: HeaderMap = { 'x-tapedeck-match': match.kind };
  if (match.source !== undefined) h['x-tapedeck-source'] = match.source;
  if (match.score !== undefined && match.kind === 'semantic') h['x-tapedeck-score'] = match.score.toFixed(2);
  if (match.stage !== undefined && match.kind === 'semantic') h['x-tapedeck-stage'] = match.stage;
  return h;
}

/** tapedeck's own response headers (`x-tapedeck-match`, `-source`, `-stage`, `-score`, `-lenient`, `-error`). */
export const isTapedeckHeader = (name: string): boolean => name.toLowerCase().startsWith('x-tapedeck-');

/**
 * Keep tapedeck's own headers off a response, whichever path writes it (an answer from the tape, a miss, an MCP
 * responder, a live forward): for agents that snapshot response headers. Patches this one response's `writeHead`.
 */
export function withoutTapedeckHeaders(res: ServerResponse): void {
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  const strip = (h: unknown): unknown => {
    if (h === null || typeof h !== 'object') return h;
    if (Array.isArray(h)) {
      // Raw headers: [name, value, name, value, ...] or [[name, value], ...].
      if (h.every((x) => Array.isArray(x))) return (h as unknown[][]).filter((pair) => !isTapedeckHeader(String(pair[0])));
      const out: unknown[] = [];
      for (let i = 0; i + 1 < h.length; i += 2) if (!isTapedeckHeader(String(h[i]))) out.push(h[i], h[i + 1]);
      return out;
    }
    return Object.fromEntries(Object.entries(h as Record<string, unknown>).filter(([k]) => !isTapedeckHeader(k)));
  };
  res.writeHead = ((...args: unknown[]) => {
    for (const name of res.getHeaderNames()) if (isTapedeckHeader(name)) res.removeHeader(name);
    return writeHead(...args.map((a, i) => (i === 0 ? a : strip(a))));
  }) as ServerResponse['writeHead'];
}
