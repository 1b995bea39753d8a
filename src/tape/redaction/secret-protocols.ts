/**
 * Credentials inside `Sec-WebSocket-Protocol`. A browser cannot set headers on a WebSocket, so APIs take the key as
 * a subprotocol entry, found by its place in the list, never by its shape (OpenAI's ephemeral `ek_` keys look like
 * nothing a value rule knows):
 * - an entry starting `openai-insecure-api-key.`: OpenAI Realtime from a browser
 *   (`realtime, openai-insecure-api-key.<key>`), whatever follows the prefix;
 * - an entry starting `base64url.bearer.authorization.k8s.io.`: the Kubernetes API's bearer token;
 * - the entry after `token` or `bearer`: Deepgram (`token, <key>` / `bearer, <jwt>`).
 * Only the credential part is replaced (`openai-insecure-api-key.[REDACTED]`): the rest of the list, and entries such
 * as `openai-organization.<org>` and `openai-project.<project>` (ids that say which account, not keys that grant
 * access), stay readable.
 */

export const PROTOCOL_HEADER = 'sec-websocket-protocol';

const PREFIXES = ['openai-insecure-api-key.', 'base64url.bearer.authorization.k8s.io.'];
const BEFORE = new Set(['token', 'bearer']);
const REDACTED_VALUE = /^\[REDACTED(?::\d+)?\]$/;

/** One credential in a subprotocol list: where it starts and ends in the header value. */
interface Found {
  start: number;
  end: number;
}

function find(value: string): Found[] {
  const found: Found[] = [];
  let previous = '';
  // Entries are separated by commas (several headers are joined by `, ` or by a newline).
  for (const m of value.matchAll(/[^,\n]+/g)) {
    const raw = m[0];
    const entry = raw.trim();
    if (entry === '') continue;
    const start = m.index + (raw.length - raw.trimStart().length);
    const prefix = PREFIXES.find((p) => entry.toLowerCase().startsWith(p));
    const secretFrom = prefix !== undefined ? prefix.length : BEFORE.has(previous.toLowerCase()) ? 0 : undefined;
    previous = entry;
    if (secretFrom === undefined) continue;
    const secret = entry.slice(secretFrom);
    if (secret === '' || REDACTED_VALUE.test(secret)) continue;
    found.push({ start: start + secretFrom, end: start + entry.length });
  }
  return found;
}

/** The credentials a `Sec-WebSocket-Protocol` value carries (empty when none, or when they are already redacted). */
export function protocolSecrets(value: string): string[] {
  return find(value).map((f) => value.slice(f.start, f.end));
}

/** The value with each credential replaced by `replace(credential)` (the same string when there is none). */
export function redactProtocols(value: string, replace: (secret: string) => string): string {
  const found = find(value);
  if (found.length === 0) return value;
  let out = '';
  let from = 0;
  for (const f of found) {
    out += value.slice(from, f.start) + replace(value.slice(f.start, f.end));
    from = f.end;
  }
  return out + value.slice(from);
}
