import { createHash } from 'node:crypto';
import stringify from 'fast-json-stable-stringify';
import { bodyJson, bodyText } from '../tape/body.js';
import { STREAMED_BODY_BYTES } from '../tape/large-body.js';
import { isSecretQueryName, secretQueryMatcher } from '../tape/redaction/secret-query.js';
import type { Body } from '../tape/schema.js';
import { createSecretDetector, type SecretDetector } from '../tape/redaction/secrets.js';

/** The request fields a key is computed from (a subset of an exchange). */
export interface KeyedRequest {
  route: string;
  request: { method: string; path: string; query: [string, string][]; body: Body };
}

export interface ExactKeyOptions {
  /**
   * Body fields left out of the key because they change every run. Dotted paths from the body root; `*` matches
   * any one key. Defaults: {@link DEFAULT_IGNORED_FIELDS}.
   */
  ignoreFields?: readonly string[];
  /** Query parameters left out of the key (secrets are always left out: they are redacted on the tape). */
  ignoreQuery?: readonly string[];
  /**
   * Query parameters the tape writer redacts beyond the built-in ones (config `redact.query`): left out of the key
   * like the built-in ones, and shown redacted in miss reports.
   */
  secretQuery?: readonly string[];
  /**
   * The secret detector the tape writer used (built from config `redact`). Default: the built-in rules. Secrets and
   * redaction markers become one placeholder on both sides, so a request carrying the real secret has the key of
   * the recording that carries its marker.
   */
  secrets?: SecretDetector;
}

/** The built-in secret rules (no extra fields or rules from config). */
export const DEFAULT_SECRETS: SecretDetector = createSecretDetector();

/**
 * Per-run noise left out of the exact key by default. JSON-RPC ids and `_meta` (progress tokens, trace context)
 * differ on every run of the same agent; they are rewritten to the incoming ones when an answer is replayed.
 * `id` is only ignored in JSON-RPC messages (bodies with `"jsonrpc": "2.0"`).
 */
export const DEFAULT_IGNORED_FIELDS: readonly string[] = ['jsonrpc:id', 'params._meta', '_meta'];

/**
 * The canonical exact key: method, route, path, sorted query, and the body as stable JSON with noise removed.
 * Two requests with the same key are the same request.
 */
export function exactKey(req: KeyedRequest, opts: ExactKeyOptions = {}): string {
  const secrets = opts.secrets ?? DEFAULT_SECRETS;
  const query = queryKey(req.request.query, opts.ignoreQuery, secrets);
  const body = canonicalBody(req.request.body, opts.ignoreFields ?? DEFAULT_IGNORED_FIELDS, secrets);
  return `${req.request.method.toUpperCase()} ${req.route}${withoutSecrets(req.request.path, secrets)}?${query}\n${body}`;
}

/** A text with every secret and redaction marker replaced by `[REDACTED]` (the text itself when it holds none). */
export function withoutSecrets(text: string, secrets: SecretDetector = DEFAULT_SECRETS): string {
  return secrets.mayHold(text) || text.includes('[REDACTED') ? secrets.canonical(text) : text;
}

/** The query as a sorted, encoded string, without secrets (redacted on the tape) and the ignored parameters. */
export function queryKey(
  query: readonly (readonly [string, string])[],
  ignore: readonly string[] = [],
  secrets: SecretDetector = DEFAULT_SECRETS,
): string {
  // Names compare as the tape writer's redaction compares them (any case, `-` and `_` ignored).
  const ignored = ignore.length === 0 ? isSecretQueryName : secretQueryMatcher(ignore);
  return query
    .filter(([k]) => !ignored(k))
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(withoutSecrets(v, secrets))}`)
    .sort()
    .join('&');
}

/**
 * The body as stable JSON with the ignored fields removed, or its text for non-JSON bodies; secrets and redaction
 * markers as `[REDACTED]` (a cheap check on the text first: the walk runs only for a body that may hold one).
 */
export function canonicalBody(
  body: Body,
  ignoreFields: readonly string[] = DEFAULT_IGNORED_FIELDS,
  secrets: SecretDetector = DEFAULT_SECRETS,
): string {
  const large = streamedBodyKey(body);
  if (large !== undefined) return large;
  const json = body.kind === 'json' ? body.json : bodyJson(body);
  if (json === undefined) return body.kind === 'base64' ? `base64:${body.base64}` : withoutSecrets(bodyText(body) ?? '', secrets);
  const stripped = stripFields(json, ignoreFields);
  const text = stringify(stripped);
  if (text.length > STREAMED_BODY_BYTES) return `sha256:${sha256(JSON.stringify(json))}`;
  return secrets.mayHold(text) || text.includes('[REDACTED') ? stringify(secrets.canonical(stripped)) : text;
}

/**
 * A body too large to hold (`tape/large-body.ts`) is keyed by the sha256 of its bytes, whether it is a stored
 * reference (a request streamed to the store) or a body read back whole from a tape.
 */
function streamedBodyKey(body: Body): string | undefined {
  if (body.kind === 'file') return `sha256:${body.sha256}`;
  if (body.kind === 'text' && body.text.length * 3 > STREAMED_BODY_BYTES && Buffer.byteLength(body.text) > STREAMED_BODY_BYTES)
    return `sha256:${sha256(body.text)}`;
  if (body.kind === 'base64' && body.base64.length * 0.75 > STREAMED_BODY_BYTES) {
    const bytes = Buffer.from(body.base64, 'base64');
    if (bytes.byteLength > STREAMED_BODY_BYTES) return `sha256:${sha256(bytes)}`;
  }
  return undefined;
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A copy of `json` without the given dotted paths (`jsonrpc:` paths apply only to JSON-RPC messages). */
export function stripFields(json: unknown, paths: readonly string[]): unknown {
  if (json === null || typeof json !== 'object') return json;
  if (Array.isArray(json)) return json.map((m) => stripFields(m, paths)); // JSON-RPC batches
  const isRpc = (json as Record<string, unknown>).jsonrpc === '2.0';
  let out: unknown = json;
  for (const raw of paths) {
    const path = parsedPath(raw);
    if (path.rpcOnly && !isRpc) continue;
    out = removePath(out, path.parts);
  }
  return out;
}

/** An ignored-field path split once (keys are computed for every request; the paths are a handful). */
const PATHS = new Map<string, { rpcOnly: boolean; parts: string[] }>();
function parsedPath(raw: string): { rpcOnly: boolean; parts: string[] } {
  let path = PATHS.get(raw);
  if (path === undefined) {
    const rpcOnly = raw.startsWith('jsonrpc:');
    path = { rpcOnly, parts: (rpcOnly ? raw.slice('jsonrpc:'.length) : raw).split('.') };
    if (PATHS.size < 1024) PATHS.set(raw, path);
  }
  return path;
}

function removePath(value: unknown, parts: readonly string[], at = 0): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || at >= parts.length) return value;
  const head = parts[at] as string;
  const obj = value as Record<string, unknown>;
  // Most bodies have none of the ignored fields: nothing is copied then.
  if (head !== '*' && !Object.hasOwn(obj, head)) return value;
  const keys = head === '*' ? Object.keys(obj) : [head];
  if (keys.length === 0) return value;
  const copy: Record<string, unknown> = { ...obj };
  const last = at === parts.length - 1;
  for (const k of keys) {
    if (last) delete copy[k];
    else copy[k] = removePath(copy[k], parts, at + 1);
  }
  return copy;
}
