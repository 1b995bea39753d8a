/**
 * Which header names hold a credential, on either side of an exchange. An exact list misses the gateways'
 * (`x-portkey-api-key`, `x-litellm-api-key`, Azure's `api-key` and `ocp-apim-subscription-key`, GitLab's
 * `private-token`, Cloudflare's `cf-access-jwt-assertion`), so a name is also read word by word (split at `-`, `_`,
 * `.`): it holds a credential when one of its words says so:
 * - `authorization`, `authentication`, `auth` and words that start with `auth` (`x-auth-token`, `helicone-auth`),
 *   never `author` or `authority`;
 * - `token` or a word ending in it (`x-csrf-token`, `accesstoken`), never `tokens` (the rate-limit counts:
 *   `x-ratelimit-remaining-tokens`, `anthropic-ratelimit-input-tokens-limit` stay readable);
 * - `secret`, `password`, `passwd`, `passphrase`, `credential(s)`, `cookie`, `jwt`, `bearer`, or a word ending in
 *   `secret` / `password`;
 * - `key` as the last word, or a last word ending in `apikey` / `accesskey` / `secretkey` / `privatekey`
 *   (`x-api-key`, `x-portkey-virtual-key`, `x-functions-key`, `apikey`), except keys that are not credentials:
 *   `idempotency-key`, `sec-websocket-key`, cache, partition, routing and sort keys.
 * Anything else stays readable (`openai-processing-ms`, `x-request-id`, `mcp-session-id`, `www-authenticate`,
 * `x-goog-api-client`). A false positive costs a readable value on the tape; a miss would put a key on it.
 */

/**
 * Header names that always carry secrets (lower case), whatever the word rules say. A provider's own credential
 * headers are not listed here: the provider registry adds them ({@link addSecretHeaders}) from its adapters.
 */
export const SECRET_HEADERS = [
  'authorization',
  'proxy-authorization',
  'proxy-authenticate',
  'x-api-key',
  'api-key',
  'cookie',
  'set-cookie',
  'x-auth-token',
  'x-amz-security-token',
];

/** Names added at run time (the providers' credential headers), with how many providers named each. */
const added = new Map<string, number>();

/**
 * Always treat these header names as secrets (a provider's credential headers: `x-goog-api-key`). Redactors and
 * scanners made afterwards see them. Returns a function that takes them back.
 */
export function addSecretHeaders(names: readonly string[]): () => void {
  const lower = names.map((n) => n.toLowerCase());
  for (const n of lower) added.set(n, (added.get(n) ?? 0) + 1);
  return () => {
    for (const n of lower) {
      const left = (added.get(n) ?? 1) - 1;
      if (left <= 0) added.delete(n);
      else added.set(n, left);
    }
  };
}

/** Names that look like credentials and are not (challenges, idempotency and cache keys, a WebSocket nonce). */
const NOT_SECRET = new Set(['www-authenticate', 'sec-websocket-key', 'sec-websocket-accept', 'idempotency-key', 'x-idempotency-key']);
const NOT_SECRET_KEY_WORDS = new Set(['idempotency', 'cache', 'partition', 'routing', 'sort', 'dedup', 'deduplication', 'websocket']);

const SECRET_WORDS = new Set([
  'secret',
  'password',
  'passwd',
  'passphrase',
  'credential',
  'credentials',
  'cookie',
  'cookie2',
  'jwt',
  'bearer',
]);

function wordSaysSecret(w: string): boolean {
  if (SECRET_WORDS.has(w)) return true;
  if (w.startsWith('auth') && w !== 'author' && w !== 'authority' && w !== 'authors') return true;
  if (w === 'token' || (w.endsWith('token') && w.length > 5)) return true;
  return w.endsWith('secret') || w.endsWith('password');
}

/** Whether a header name (any case) says its value is a credential. */
export function isSecretHeaderName(name: string): boolean {
  const n = name.toLowerCase();
  if (NOT_SECRET.has(n)) return false;
  const words = n.split(/[-_.]+/).filter((w) => w !== '');
  if (words.some(wordSaysSecret)) return true;
  const last = words.at(-1);
  if (last === undefined) return false;
  if (/(api|access|secret|private)key$/.test(last)) return true;
  return last === 'key' && !words.slice(0, -1).some((w) => NOT_SECRET_KEY_WORDS.has(w));
}

/**
 * The header check a redactor or scanner uses: the exact list, the providers' credential headers, the names the
 * config adds, and the word rules,
 * remembered per name (a tape has few distinct header names, each seen on every exchange).
 */
export function secretHeaderMatcher(extra: readonly string[] = []): (name: string) => boolean {
  const exact = new Set([...SECRET_HEADERS, ...added.keys(), ...extra.map((h) => h.toLowerCase())]);
  const seen = new Map<string, boolean>();
  return (name) => {
    let hit = seen.get(name);
    if (hit === undefined) {
      hit = exact.has(name.toLowerCase()) || isSecretHeaderName(name);
      if (seen.size < 4096) seen.set(name, hit);
    }
    return hit;
  };
}
