import { TapedeckError } from '../../errors.js';
import { SECRET_RULES, type SecretRule } from './secret-rules.js';

/**
 * Secrets inside bodies: found by the name of the field that holds them, or by the shape of the value.
 *
 * One detector serves three callers, so they can never disagree about what a secret is:
 * - the tape writer replaces each secret by a numbered marker (`[REDACTED:1]`, the same number for the same
 *   secret within a writer session);
 * - the exact key (`replay/exact-key.ts`) replaces every secret and every marker by the plain `[REDACTED]`, so a
 *   request carrying the real secret has the same key as the recording that carries its marker;
 * - `tapedeck scan` reports what is left on a tape without changing it.
 *
 * Cost: {@link SecretDetector.mayHold} is one pass of two regexes over a text (the serialised line, or one string);
 * the structural walk runs only when it says yes.
 */

/** Field names (any case; `-` and `_` ignored, so `apiKey`, `API-KEY` and `api_key` are one name) whose value is a secret. */
export const DEFAULT_SECRET_FIELDS: readonly string[] = [
  'api_key',
  'x_api_key',
  'api_token',
  'api_secret',
  'access_token',
  'refresh_token',
  'id_token',
  'auth_token',
  'bearer_token',
  'session_token',
  'security_token',
  'client_secret',
  // OAuth (RFC 7636, 7591, 7523, 8693, 8628): the PKCE verifier, a client's registration and assertion, exchanged
  // tokens, a device code. (An authorization code is a `code`: secret by its place, `secret-oauth.ts`.)
  'code_verifier',
  'registration_access_token',
  'client_assertion',
  'subject_token',
  'actor_token',
  'device_code',
  'secret',
  'secret_key',
  'secret_access_key',
  'aws_secret_access_key',
  'private_key',
  'password',
  'passwd',
  'passphrase',
  'token',
  'authorization',
  'proxy_authorization',
];

/** What a redacted value becomes in the exact key and in explanations; markers on a tape are `[REDACTED:N]`. */
export const REDACTED_PLACEHOLDER = '[REDACTED]';
const MARKER = /\[REDACTED(?::\d+)?\]/g;
const WHOLE_MARKER = /^\[REDACTED(?::\d+)?\]$/;

export interface SecretsOptions {
  /** Extra field names whose values are secrets (on top of {@link DEFAULT_SECRET_FIELDS}). */
  fields?: readonly string[] | undefined;
  /** Value rules (credential shapes) on or off. Default on. */
  values?: boolean | undefined;
  /** Extra value rules: an id and a regular expression (JavaScript syntax); a capture group 1 narrows the secret. */
  rules?: readonly { id: string; regex: string }[] | undefined;
}

/** Called for every secret found; returns what replaces it. `rule` is a value rule id, or `field` for a field-name match. */
export type SecretReplacer = (secret: string, rule: string, path: string) => string;

export interface SecretDetector {
  /** Cheap check on any text (a serialised line, one string): false means it holds nothing any rule would find. */
  mayHold(text: string): boolean;
  /** `value` with every secret replaced (same object when nothing was found; copies only what changes). */
  redact<T>(value: T, replace: SecretReplacer, path?: string): T;
  /** `value` with every secret and every marker replaced by `[REDACTED]`: the form the exact key compares. */
  canonical<T>(value: T): T;
  /** Whether a field name says its value is secret. */
  isSecretField(name: string): boolean;
}

const normalizeName = (name: string): string => name.toLowerCase().replace(/[-_]/g, '');

/** `api_key` -> `api[-_]*key` (any case via the `i` flag), so `apiKey`, `API-KEY` and `apikey` all match. */
const namePattern = (name: string): string =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .split(/[-_]+/)
    .filter((p) => p !== '')
    .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[-_]*');

export function createSecretDetector(opts: SecretsOptions = {}): SecretDetector {
  const fieldNames = [...DEFAULT_SECRET_FIELDS, ...(opts.fields ?? [])];
  const fieldSet = new Set(fieldNames.map(normalizeName));
  const rules: SecretRule[] = opts.values === false ? [] : [...SECRET_RULES];
  for (const r of opts.rules ?? []) {
    let regex: RegExp;
    try {
      regex = new RegExp(r.regex, 'g');
    } catch (err) {
      throw new TapedeckError('BAD_CONFIG', `redact.rules: rule "${r.id}" is not a valid regular expression: ${(err as Error).message}`);
    }
    rules.push({ id: r.id, regex, hint: r.regex });
  }
  const names = [...new Set(fieldNames.map(namePattern))].sort((a, b) => b.length - a.length).join('|');
  // Prefilters: a value rule's hint anywhere (each distinct hint once); a secret-named JSON key (at any escaping
  // depth) whose value is not already a marker, or a secret-named form field. Names are matched by their last word
  // (`key`, `token`, `secret`, ...) right before `":` or `=`: a superset of the full names that V8 scans about
  // three times faster; the walk then checks the whole name.
  const valueHint = rules.length === 0 ? undefined : new RegExp([...new Set(rules.map((r) => `(?:${r.hint})`))].join('|'));
  const lastWords = [...new Set(fieldNames.map((n) => namePattern(n).split('[-_]*').at(-1) ?? ''))].filter((w) => w !== '');
  const suffixes = lastWords.filter((w) => !lastWords.some((o) => o !== w && w.toLowerCase().endsWith(o.toLowerCase()))).join('|');
  const nameHint = new RegExp(String.raw`(?:${suffixes})(?:\\*"\s*:\s*(?!\\*"\[REDACTED)|=(?!\[REDACTED|&|"|$))`, 'i');
  // A secret-named key in JSON text, as plain JSON and as JSON inside a JSON string (`\"api_key\":\"...\"`).
  const jsonField = new RegExp(String.raw`"(${names})"(\s*:\s*)(?:"((?:[^"\\]|\\.)*)"|(-?\d[\d.eE+-]*))`, 'gi');
  const escapedJsonField = new RegExp(String.raw`\\"(${names})\\"(\s*:\s*)\\"((?:[^\\]|\\(?!"))*)\\"`, 'gi');
  const formShape = /^[^=&\s]+=[^&\s]*(?:&[^=&\s]+=[^&\s]*)*$/;

  const mayHold = (text: string): boolean => (valueHint !== undefined && valueHint.test(text)) || nameHint.test(text);
  const isSecretField = (name: string): boolean => fieldSet.has(normalizeName(name));

  const redactString = (s: string, path: string, replace: SecretReplacer): string => {
    if (!mayHold(s)) return s;
    let out = s;
    for (const rule of rules) {
      rule.regex.lastIndex = 0;
      if (!rule.regex.test(out)) continue;
      rule.regex.lastIndex = 0;
      out = out.replace(rule.regex, (m: string, g1: unknown) => {
        if (WHOLE_MARKER.test(m)) return m;
        if (typeof g1 === 'string' && g1 !== '') return m.replace(g1, replace(g1, rule.id, path));
        return replace(m, rule.id, path);
      });
    }
    if (!nameHint.test(out)) return out;
    out = out.replace(jsonField, (m: string, name: string, sep: string, str: string | undefined, num: string | undefined) => {
      const value = str ?? num ?? '';
      if (!isSecretField(name) || value === '' || WHOLE_MARKER.test(value)) return m;
      return `"${name}"${sep}"${replace(value, 'field', `${path}(${name})`)}"`;
    });
    out = out.replace(escapedJsonField, (m: string, name: string, sep: string, value: string) => {
      if (!isSecretField(name) || value === '' || WHOLE_MARKER.test(value)) return m;
      return `\\"${name}\\"${sep}\\"${replace(value, 'field', `${path}(${name})`)}\\"`;
    });
    if (formShape.test(out)) {
      let changed = false;
      const pairs = out.split('&').map((pair) => {
        const eq = pair.indexOf('=');
        const key = pair.slice(0, eq);
        const value = pair.slice(eq + 1);
        let name: string;
        try {
          name = decodeURIComponent(key.replace(/\+/g, ' '));
        } catch {
          name = key;
        }
        if (value === '' || !isSecretField(name) || WHOLE_MARKER.test(value)) return pair;
        changed = true;
        return `${key}=${replace(value, 'field', `${path}(${name})`)}`;
      });
      if (changed) out = pairs.join('&');
    }
    return out;
  };

  const walk = (value: unknown, path: string, replace: SecretReplacer, secretField: boolean, markers: boolean): unknown => {
    if (typeof value === 'string') {
      const s = markers && value.includes('[REDACTED') ? value.replace(MARKER, REDACTED_PLACEHOLDER) : value;
      if (secretField) return s === '' || WHOLE_MARKER.test(s) ? s : replace(s, 'field', path);
      return redactString(s, path, replace);
    }
    if (typeof value === 'number') return secretField ? replace(String(value), 'field', path) : value;
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const v: unknown = value[i];
        const nv = walk(v, `${path}[${i}]`, replace, false, markers);
        if (nv !== v) (out ??= [...value])[i] = nv;
      }
      return out ?? value;
    }
    const obj = value as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    // A tape body's base64 is binary: replacing text inside it would corrupt it.
    const binary = typeof obj.kind === 'string' && typeof obj.base64 === 'string';
    for (const k in obj) {
      const v = obj[k];
      if (binary && k === 'base64') continue;
      // `token` in logprobs ({token, logprob, bytes, top_logprobs}) is a piece of text, not a credential.
      const secret = isSecretField(k) && !(normalizeName(k) === 'token' && 'logprob' in obj);
      const nv = walk(v, path === '' ? k : `${path}.${k}`, replace, secret, markers);
      if (nv !== v) (out ??= { ...obj })[k] = nv;
    }
    return out ?? obj;
  };

  const toPlaceholder: SecretReplacer = () => REDACTED_PLACEHOLDER;

  return {
    mayHold,
    isSecretField,
    redact: <T>(value: T, replace: SecretReplacer, path = ''): T => walk(value, path, replace, false, false) as T,
    canonical: <T>(value: T): T => walk(value, '', toPlaceholder, false, true) as T,
  };
}

/** Replacer for one writer session: the same secret gets the same `[REDACTED:N]`, numbered by first appearance. */
export function createMarkerReplacer(firstNumber = 1, maxRemembered = 10_000): SecretReplacer {
  const seen = new Map<string, number>();
  let next = firstNumber;
  return (secret) => {
    let n = seen.get(secret);
    if (n === undefined) {
      n = next++;
      // Bounded: past the bound a secret seen again gets a new number (never another secret's number).
      if (seen.size >= maxRemembered) seen.clear();
      seen.set(secret, n);
    }
    return `[REDACTED:${n}]`;
  };
}

/** The highest marker number in a text (0 when none): an appending writer numbers on from there. */
export function highestMarker(text: string): number {
  let max = 0;
  for (const m of text.matchAll(/\[REDACTED:(\d+)\]/g)) max = Math.max(max, Number(m[1]));
  return max;
}

/**
 * A preview that never shows the secret: for a value rule its first characters (the rule's own prefix, `ghp_`,
 * `AKIA`), then the length; for a value found by its name or place (a field, a header, a query parameter, a
 * subprotocol entry, a URL's password: the `secret-*` rules), the length only.
 */
export function secretPreview(secret: string, rule: string): string {
  const byName = rule === 'field' || rule.startsWith('secret-');
  const shown = byName ? '' : secret.slice(0, Math.min(4, Math.floor(secret.length / 5)));
  return `${shown}…(${secret.length} chars)`;
}
