/**
 * Which query parameters hold a credential. Browsers cannot set headers on a WebSocket (and some gateways take keys
 * in the URL for plain HTTP too), so keys travel in the query: Gemini's `key=`, Azure OpenAI's `api-key=` (and
 * `Authorization=Bearer ...` with a token provider), Azure API Management's `subscription-key=`, OAuth's
 * `access_token=` (Gemini Live's ephemeral tokens), signed URLs' signatures.
 *
 * A name is compared in any case with `-` and `_` ignored, so `api-key`, `api_key`, `apiKey` and `APIKEY` are one
 * name. The list is exact, not read word by word as header names are (`secret-headers.ts`), because a redacted
 * parameter also leaves the exact key (`replay/exact-key.ts`): a pagination cursor such as `pageToken` or
 * `next_token` must stay in it, or replay would answer page 2 with page 1.
 */

/** Built-in credential parameter names, each with why (see the module comment for how names compare). */
export const SECRET_QUERY: readonly string[] = [
  // API keys: Gemini and Google APIs (`key`), Azure OpenAI (`api-key`), many others (`api_key`, `apikey`: Supabase).
  'key',
  'api_key',
  'apikey',
  // Azure API Management: the query form of `Ocp-Apim-Subscription-Key` (default name), and that name itself.
  'subscription-key',
  'ocp-apim-subscription-key',
  // Bearer tokens in the URL: OAuth 2 (RFC 6750 2.3), Gemini Live ephemeral tokens, AssemblyAI/others' `token`.
  'access_token',
  'token',
  'auth_token',
  'api_token',
  'id_token',
  'refresh_token',
  // Azure OpenAI Realtime from a browser with a token provider: `?Authorization=Bearer ...`; Firebase's `auth=`.
  'authorization',
  'auth',
  'client_secret',
  'password',
  // Signed URLs: whoever holds the URL holds the access (Azure SAS `sig`, AWS SigV4, Google V4 signing).
  'sig',
  'signature',
  'x-amz-signature',
  'x-amz-security-token',
  'x-goog-signature',
];

const normalize = (name: string): string => name.toLowerCase().replace(/[-_]/g, '');

/** `(name) => whether it holds a credential`: the built-in names and `extra` (config `redact.query`). */
export function secretQueryMatcher(extra: readonly string[] = []): (name: string) => boolean {
  const names = new Set([...SECRET_QUERY, ...extra].map(normalize));
  return (name) => names.has(normalize(name));
}

/** The built-in names only. */
export const isSecretQueryName: (name: string) => boolean = secretQueryMatcher();
