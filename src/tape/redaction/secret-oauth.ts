/**
 * OAuth values that are secrets by their place, not by their name: an authorization code is a field called `code`
 * (a name far too common to redact everywhere), and it travels in a redirect's `Location` (and the "Redirecting to"
 * text some servers put in the body), then in the token request's form. The names that always hold a secret
 * (`access_token`, `refresh_token`, `client_secret`, `code_verifier`, `registration_access_token`, ...) are field
 * rules (`secrets.ts`); this finds the rest:
 * - `code` in a token request (a form or query with `grant_type`), and in an authorization response: a redirect whose
 *   query or fragment carries `code` with `state` or `iss` (or the request asked with `response_type`);
 * - tokens in a redirect's fragment (`#access_token=...`, the implicit flow).
 * Each value found is replaced wherever it appears in the exchange (the tape writer), or reported (`tapedeck scan`).
 */
import type { Exchange } from '../schema.js';
import { REDACTED_PLACEHOLDER } from './secrets.js';

/** One secret found by its place: the value, and where (as `tapedeck scan` names places). */
export interface PlacedSecret {
  value: string;
  path: string;
}

const REDACTED_VALUE = /^\[REDACTED(?::\d+)?\]$/;
/** Shorter values are no credentials (and replacing them everywhere would hit ordinary text). */
const MIN_LENGTH = 8;
const TOKEN_NAMES = ['access_token', 'id_token', 'refresh_token', 'code'];

type Exchangeish = Pick<Exchange, 'request' | 'response'>;

function take(out: PlacedSecret[], value: string | null | undefined, path: string): void {
  if (value === null || value === undefined || value.length < MIN_LENGTH || REDACTED_VALUE.test(value) || value === REDACTED_PLACEHOLDER)
    return;
  if (!out.some((s) => s.value === value)) out.push({ value, path });
}

/** The form body of a request, when it is one. */
function formOf(ex: Exchangeish): URLSearchParams | undefined {
  const body = ex.request.body;
  const type = ex.request.headers['content-type'] ?? '';
  if (body.kind !== 'text' || !type.startsWith('application/x-www-form-urlencoded')) return undefined;
  return new URLSearchParams(body.text);
}

/** The authorization codes and redirect tokens an exchange carries by their place. */
export function oauthSecrets(ex: Exchangeish): PlacedSecret[] {
  const out: PlacedSecret[] = [];
  const form = formOf(ex);
  if (form?.has('grant_type') === true) take(out, form.get('code'), 'request.body(code)');
  // Runs for every exchange written: a query is read only when it names a parameter of the flow.
  const names = ex.request.query.length === 0 ? undefined : new Set(ex.request.query.map(([k]) => k));
  const param = (name: string): string | undefined => ex.request.query.find(([k]) => k === name)?.[1];
  if (names !== undefined && names.has('code') && (names.has('grant_type') || names.has('state')))
    take(out, param('code'), 'request.query.code');
  const location = ex.response?.headers.location;
  if (location !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(location, 'http://location.invalid/');
    } catch {
      url = undefined;
    }
    if (url !== undefined) {
      const asked = names?.has('response_type') === true;
      for (const [part, params] of [
        ['query', url.searchParams],
        ['fragment', new URLSearchParams(url.hash.slice(1))],
      ] as const) {
        const answer = asked || params.has('state') || params.has('iss') || part === 'fragment';
        if (!answer) continue;
        for (const name of TOKEN_NAMES) take(out, params.get(name), `response.headers.location(${part} ${name})`);
      }
    }
  }
  return out;
}

/** `value` with every secret replaced wherever it appears in its strings (the same object when none does). */
export function replaceSecrets<T>(value: T, secrets: readonly PlacedSecret[], replace: (secret: PlacedSecret) => string): T {
  if (secrets.length === 0) return value;
  const forms = secrets.flatMap((s) => {
    const encoded = encodeURIComponent(s.value);
    return encoded === s.value ? [[s.value, s] as const] : [[s.value, s] as const, [encoded, s] as const];
  });
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      let out = v;
      for (const [text, s] of forms) if (out.includes(text)) out = out.split(text).join(replace(s));
      return out;
    }
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) {
      const mapped = v.map(walk);
      return mapped.some((m, i) => m !== v[i]) ? mapped : v;
    }
    const obj = v as Record<string, unknown>;
    // A body's base64 is binary: replacing text inside it would corrupt it.
    const binary = typeof obj.kind === 'string' && typeof obj.base64 === 'string';
    let copy: Record<string, unknown> | undefined;
    for (const k in obj) {
      if (binary && k === 'base64') continue;
      const nv = walk(obj[k]);
      if (nv !== obj[k]) (copy ??= { ...obj })[k] = nv;
    }
    return copy ?? obj;
  };
  return walk(value) as T;
}
