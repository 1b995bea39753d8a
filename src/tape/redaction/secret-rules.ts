/**
 * Value rules: credentials recognisable by their shape wherever they appear in a string.
 *
 * A curated subset of gitleaks' default rule set (https://github.com/gitleaks/gitleaks, `config/gitleaks.toml`
 * as of commit 009e025ad4106ab333aa0b9dc4f2a884390d134c, v8 series; MIT License, Copyright (c) 2019 Zachary Rice).
 * Rule ids are gitleaks' ids, so a finding can be looked up there. Only rules anchored on a distinctive prefix or
 * structure are taken: the keyword-and-entropy rules (`generic-api-key` and the per-vendor `<name> ... = value`
 * rules) flag ordinary ids and hashes in API traffic, and tapedeck covers assignments by field name instead
 * (see `secrets.ts`). Changes from the originals, for JavaScript and for text that is not source code:
 * - RE2's trailing delimiter groups `(?:[\x60'"\s;]|\\[nr]|$)` became lookaheads, so only the secret is replaced;
 * - `openai-api-key` also takes the `sk-proj-`/`sk-svcacct-`/`sk-admin-` keys without the `T3BlbkFJ` marker
 *   (tapedeck's own `llm-api-key` rule, below, covers OpenAI-style and Anthropic `sk-` keys of any vintage);
 * - `private-key` replaces the whole block, `-----BEGIN` to `-----END ... KEY-----`.
 *
 * Each rule also has a `hint`: a looser pattern, tried on serialised JSON text (where a newline before a key is the
 * two characters `\n`, so `\b` cannot be relied on). A hint must match wherever its rule does.
 */
export interface SecretRule {
  id: string;
  /** Global regex; when it has a capture group 1, only that group is the secret. */
  regex: RegExp;
  /** Looser pattern (source text) for the one-pass prefilter over serialised JSON. */
  hint: string;
}

const END = `(?=[^A-Za-z0-9_-]|$)`;
/** Hints shared by several rules (the prefilter tries each distinct hint once). */
const SK_HINT = String.raw`sk-[A-Za-z0-9_-]{24}`;
const GH_HINT = 'gh[oprsu]_';

const rule = (id: string, regex: string, hint: string): SecretRule => ({ id, regex: new RegExp(regex, 'g'), hint });

export const SECRET_RULES: readonly SecretRule[] = [
  rule(
    'private-key',
    String.raw`-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`,
    String.raw`-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY`,
  ),
  rule('anthropic-api-key', String.raw`\bsk-ant-(?:api03|admin01|oat01)-[A-Za-z0-9_-]{20,}${END}`, SK_HINT),
  rule(
    'openai-api-key',
    String.raw`\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}${END}|\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}${END}`,
    String.raw`sk-(?:proj|svcacct|admin)-|T3BlbkFJ`,
  ),
  // tapedeck's own: `sk-` keys of OpenAI-compatible providers (DeepSeek, Moonshot, ...) and older OpenAI keys.
  rule(
    'llm-api-key',
    String.raw`\bsk-(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{24,}${END}`,
    String.raw`sk-[A-Za-z0-9_-]{24}`,
  ),
  rule('github-pat', String.raw`\bghp_[0-9a-zA-Z]{36}${END}`, GH_HINT),
  rule('github-oauth', String.raw`\bgho_[0-9a-zA-Z]{36}${END}`, GH_HINT),
  rule('github-app-token', String.raw`\b(?:ghu|ghs)_[0-9a-zA-Z]{36}${END}`, GH_HINT),
  rule('github-refresh-token', String.raw`\bghr_[0-9a-zA-Z]{36}${END}`, GH_HINT),
  rule('github-fine-grained-pat', String.raw`\bgithub_pat_\w{82}${END}`, 'github_pat_'),
  rule('gitlab-pat', String.raw`\bglpat-[\w-]{20,}${END}`, 'glpat-'),
  rule(
    'aws-access-token',
    String.raw`\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b`,
    String.raw`(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}`,
  ),
  rule('slack-bot-token', String.raw`\bxoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*`, 'xox[baprse]-'),
  rule('slack-user-token', String.raw`\bxox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28,34}`, 'xox[baprse]-'),
  rule('slack-legacy-token', String.raw`\bxox[aors]-[0-9a-zA-Z-]{10,}`, 'xox[baprse]-'),
  rule('slack-app-token', String.raw`\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+`, 'xapp-'),
  rule(
    'slack-webhook-url',
    String.raw`hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{43,56}`,
    String.raw`hooks\.slack\.com/`,
  ),
  rule('gcp-api-key', String.raw`\bAIza[\w-]{35}${END}`, 'AIza'),
  rule('google-oauth-token', String.raw`\bya29\.[\w-]{20,}`, String.raw`ya29\.`),
  rule('stripe-access-token', String.raw`\b(?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99}${END}`, '[sr]k_(?:test|live|prod)_'),
  rule('npm-access-token', String.raw`\bnpm_[a-zA-Z0-9]{36}${END}`, 'npm_[a-zA-Z0-9]{36}'),
  rule('huggingface-access-token', String.raw`\bhf_[a-zA-Z]{34}${END}`, 'hf_[a-zA-Z]{34}'),
  rule('sendgrid-api-token', String.raw`\bSG\.[a-zA-Z0-9=_\-.]{66}${END}`, String.raw`SG\.[a-zA-Z0-9=_\-.]{66}`),
  rule('jwt', String.raw`\bey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9/_-]{17,}\.[a-zA-Z0-9/_-]{10,}={0,2}`, String.raw`ey[a-zA-Z0-9]{17,}\.ey`),
  // Credentials after an auth scheme in free text (a curl command or an HTTP dump pasted into a prompt).
  rule('auth-header-value', String.raw`\b(?:[Bb]earer|Basic)\s+([A-Za-z0-9._~+/-]{20,}=*)`, String.raw`(?:[Bb]earer|Basic)[\s\\]`),
];
