import type { Exchange, HeaderMap } from './schema.js';

export const REDACTED = '[REDACTED]';

/** Header names that always carry secrets (lower case). */
export const SECRET_HEADERS = [
  'authorization',
  'proxy-authorization',
  'proxy-authenticate',
  'x-api-key',
  'x-goog-api-key',
  'api-key',
  'openai-api-key',
  'anthropic-api-key',
  'cookie',
  'set-cookie',
  'x-auth-token',
  'x-amz-security-token',
];

/** Query parameters that carry secrets. */
export const SECRET_QUERY = ['key', 'api_key', 'apikey', 'access_token', 'token', 'sig', 'signature'];

export interface RedactOptions {
  /** Extra header names to redact (case-insensitive). */
  headers?: readonly string[];
  /** Extra query parameter names to redact. */
  query?: readonly string[];
}

export interface Redactor {
  exchange(ex: Exchange): Exchange;
  headers(h: HeaderMap): HeaderMap;
  url(url: string): string;
}

/**
 * Redaction happens at write time (like go-vcr's BeforeSave): the live request keeps its key, the tape never sees it.
 * Both sides are covered: request and response headers, query strings, and credentials in upstream URLs.
 */
export function createRedactor(opts: RedactOptions = {}): Redactor {
  const headerNames = new Set([...SECRET_HEADERS, ...(opts.headers ?? []).map((h) => h.toLowerCase())]);
  const queryNames = new Set([...SECRET_QUERY, ...(opts.query ?? []).map((q) => q.toLowerCase())]);

  const headers = (h: HeaderMap): HeaderMap => {
    let out: HeaderMap | undefined;
    for (const name of Object.keys(h)) {
      if (headerNames.has(name.toLowerCase())) {
        out ??= { ...h };
        out[name] = REDACTED;
      }
    }
    return out ?? h;
  };

  const query = (q: [string, string][]): [string, string][] =>
    q.some(([k]) => queryNames.has(k.toLowerCase())) ? q.map(([k, v]) => [k, queryNames.has(k.toLowerCase()) ? REDACTED : v]) : q;

  const url = (raw: string): string => {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      return raw;
    }
    let changed = false;
    if (u.username !== '' || u.password !== '') {
      u.username = u.username === '' ? '' : REDACTED;
      u.password = u.password === '' ? '' : REDACTED;
      changed = true;
    }
    for (const k of [...u.searchParams.keys()]) {
      if (queryNames.has(k.toLowerCase())) {
        u.searchParams.set(k, REDACTED);
        changed = true;
      }
    }
    return changed ? u.toString().replaceAll('%5BREDACTED%5D', REDACTED) : raw;
  };

  return {
    headers,
    url,
    exchange(ex) {
      const out: Exchange = { ...ex, request: { ...ex.request, headers: headers(ex.request.headers), query: query(ex.request.query) } };
      if (ex.upstream !== undefined) out.upstream = url(ex.upstream);
      if (ex.response !== undefined) out.response = { ...ex.response, headers: headers(ex.response.headers) };
      return out;
    },
  };
}
