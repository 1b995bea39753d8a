import type { Exchange, HeaderMap } from '../schema.js';
import { secretHeaderMatcher } from './secret-headers.js';
import { PROTOCOL_HEADER, redactProtocols } from './secret-protocols.js';
import { secretQueryMatcher } from './secret-query.js';
import { createSecretDetector, type SecretDetector, type SecretsOptions } from './secrets.js';

export const REDACTED = '[REDACTED]';

export { SECRET_HEADERS } from './secret-headers.js';
/** Query parameters that carry secrets (`secret-query.ts` says which and why). */
export { SECRET_QUERY } from './secret-query.js';

export interface RedactOptions extends SecretsOptions {
  /** Extra header names to redact (case-insensitive), on top of the list and the word rules (`secret-headers.ts`). */
  headers?: readonly string[];
  /** Extra query parameter names to redact (any case, `-` and `_` ignored). */
  query?: readonly string[];
}

export interface Redactor {
  /** Headers, query parameters and upstream URL credentials (always; cheap). Bodies: see `secrets`. */
  exchange(ex: Exchange): Exchange;
  /** Secrets inside bodies, events, meanings (field names and value rules), configured by the same options. */
  readonly secrets: SecretDetector;
  headers(h: HeaderMap): HeaderMap;
  url(url: string): string;
}

/**
 * Redaction happens at write time (like go-vcr's BeforeSave): the live request keeps its key, the tape never sees it.
 * Both sides are covered: request and response headers, query strings, and credentials in upstream URLs; secrets
 * inside bodies and stream events are found by `secrets` (see `secrets.ts`), which the tape writer applies.
 */
export function createRedactor(opts: RedactOptions = {}): Redactor {
  const secretHeader = secretHeaderMatcher(opts.headers);
  const secretQuery = secretQueryMatcher(opts.query);
  const toRedacted = (): string => REDACTED;

  const headers = (h: HeaderMap): HeaderMap => {
    let out: HeaderMap | undefined;
    for (const name of Object.keys(h)) {
      if (secretHeader(name)) {
        out ??= Object.assign({}, h);
        out[name] = REDACTED;
      } else if (name.length === PROTOCOL_HEADER.length && name.toLowerCase() === PROTOCOL_HEADER) {
        // A browser's WebSocket key rides in the subprotocol list: only that entry goes (`secret-protocols.ts`).
        const value = h[name] as string;
        const redacted = redactProtocols(value, toRedacted);
        if (redacted !== value) (out ??= Object.assign({}, h))[name] = redacted;
      }
    }
    return out ?? h;
  };

  const query = (q: [string, string][]): [string, string][] =>
    q.some(([k]) => secretQuery(k)) ? q.map(([k, v]) => [k, secretQuery(k) ? REDACTED : v]) : q;

  // Every exchange of a route carries the same upstream: parse each distinct one once.
  const urls = new Map<string, string>();
  const url = (raw: string): string => {
    let out = urls.get(raw);
    if (out === undefined) {
      out = redactUrl(raw);
      if (urls.size < 1024) urls.set(raw, out);
    }
    return out;
  };
  const redactUrl = (raw: string): string => {
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
      if (secretQuery(k)) {
        u.searchParams.set(k, REDACTED);
        changed = true;
      }
    }
    return changed ? u.toString().replaceAll('%5BREDACTED%5D', REDACTED) : raw;
  };

  return {
    headers,
    url,
    secrets: createSecretDetector(opts),
    exchange(ex) {
      // Copy only what changes (the exchange itself only when something does): this runs for every line written,
      // and most exchanges carry no secret in their headers, query or upstream URL.
      const reqHeaders = headers(ex.request.headers);
      const reqQuery = query(ex.request.query);
      const upstream = ex.upstream === undefined ? undefined : url(ex.upstream);
      const resHeaders = ex.response === undefined ? undefined : headers(ex.response.headers);
      const requestChanged = reqHeaders !== ex.request.headers || reqQuery !== ex.request.query;
      const responseChanged = ex.response !== undefined && resHeaders !== ex.response.headers;
      if (!requestChanged && !responseChanged && upstream === ex.upstream) return ex;
      // Object.assign rather than spreads (V8's slow path for objects of many shapes): this runs for most exchanges.
      const out: Exchange = Object.assign({}, ex);
      if (requestChanged) out.request = Object.assign({}, ex.request, { headers: reqHeaders, query: reqQuery });
      if (upstream !== undefined) out.upstream = upstream;
      if (responseChanged && ex.response !== undefined && resHeaders !== undefined)
        out.response = Object.assign({}, ex.response, { headers: resHeaders });
      return out;
    },
  };
}
