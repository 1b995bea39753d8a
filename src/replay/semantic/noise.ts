/**
 * Per-run noise in prose: values that differ on every run of the same agent, set aside before texts are compared.
 * Not every id-shaped token is noise. What is, is decided by *position*:
 * - anywhere: ids the provider or SDK adds (`chatcmpl-…`, `call_…`, `toolu_…`, `req_…`) and labelled nonces
 *   (`request_id: …`, `trace_id=…`, `nonce: …`, `idempotency_key …`): their label says what they are;
 * - in a system prompt only: clocks (a timestamp with a time of day, `Date.toString()`, epoch milliseconds, a bare
 *   `HH:MM:SS`), UUIDs, labelled session and run ids, and `run_…` / `trace_…` / `sess_…` / `evt_…` ids, which
 *   harnesses stamp there on every run.
 * Anywhere else (the user's own text, a tool's arguments or result, the assistant's turn) a UUID or a timestamp with a
 * time of day is what the request is about ("cancel order 7f1c…", "the meeting at 2026-03-04T10:00Z"): it is kept,
 * as one word, and marked an identifier. A tape that itself shows such a value varying between recordings that are
 * otherwise the same sets it aside there (`semantic-index.ts`). Dates alone are never noise: they mean something.
 */

/** Where a text sits in the request: only a system prompt's clocks and UUIDs are per-run noise. */
export type Position = 'system' | 'user' | 'assistant' | 'result' | 'arg';

/** What a set-aside or identifier value is. */
export type ValueKind = 'clock' | 'uuid' | 'id' | 'nonce';

export interface MarkedValue {
  kind: ValueKind;
  value: string;
}

interface NoiseRule {
  re: RegExp;
  kind: ValueKind;
  /** `always`: per-run noise wherever it is; `system`: noise in a system prompt, an identifier elsewhere. */
  where: 'always' | 'system';
  /** Only worth trying on a text with a digit. */
  digits: boolean;
  /** For a labelled nonce: the group holding the value (the label stays a word). */
  group?: number;
}

/** Tried in order; each value is replaced by a marker before the next rule runs. */
const RULES: readonly NoiseRule[] = [
  {
    re: /\b(nonce|request[-_ ]?id|trace[-_ ]?id|span[-_ ]?id|correlation[-_ ]?id|idempotency[-_ ]?key)(\s*[:=#]\s*|\s+)(["']?)([A-Za-z0-9._~+/=-]{6,})\3/gi,
    kind: 'nonce',
    where: 'always',
    digits: false,
    group: 4,
  },
  // A session or run id names what the user may be asking about ("revoke session id 9f8e..."): noise in a system
  // prompt only (or where the tape shows it varying).
  {
    re: /\b(run[-_ ]?id|session[-_ ]?id)(\s*[:=#]\s*|\s+)(["']?)([A-Za-z0-9._~+/=-]{6,})\3/gi,
    kind: 'nonce',
    where: 'system',
    digits: false,
    group: 4,
  },
  {
    re: /\b(?:chatcmpl|req|msg|call|toolu|resp|fc)[-_][A-Za-z0-9]{8,}\b/g,
    kind: 'id',
    where: 'always',
    digits: false,
  },
  { re: /\b(?:run|trace|span|sess|evt)[-_][A-Za-z0-9]{8,}\b/g, kind: 'id', where: 'system', digits: false },
  {
    re: /\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? +(?:\d{1,2} +)?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* +(?:\d{1,2} +)?\d{4} +\d{2}:\d{2}:\d{2}(?: *(?:GMT|UTC)?[+-]?\d{0,4})?(?: *\([^)]*\))?/g,
    kind: 'clock',
    where: 'system',
    digits: true,
  },
  {
    re: /\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?(?!\w|:\d)/g,
    kind: 'clock',
    where: 'system',
    digits: true,
  },
  {
    re: /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi,
    kind: 'uuid',
    where: 'system',
    digits: true,
  },
  { re: /\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b/g, kind: 'clock', where: 'system', digits: true },
  { re: /\b1[5-9]\d{11}\b/g, kind: 'clock', where: 'system', digits: true },
];

/** Markers left in the text: `\uE000` + `a` (set aside) or `k` (kept as an identifier) + index + `\uE001`. */
export const MARKER = /^\uE000([ak])(\d+)\uE001$/;
export const MARKER_ANYWHERE = /\uE000[ak]\d+\uE001/;

export interface MaskedText {
  /** The text with each noise value or identifier replaced by a marker (spaces around it, so it is a word alone). */
  text: string;
  /** Values set aside, by marker index. */
  aside: MarkedValue[];
  /** Identifiers kept as meaning, by marker index. */
  kept: MarkedValue[];
}

/** Find per-run noise and identifiers in `text` as it sits at `position`. */
export function maskNoise(text: string, position: Position): MaskedText {
  const aside: MarkedValue[] = [];
  const kept: MarkedValue[] = [];
  const digits = /\d/.test(text);
  let out = text;
  for (const rule of RULES) {
    if (rule.digits && !digits) continue;
    const noise = rule.where === 'always' || position === 'system';
    const mark = (value: string): string => {
      const list = noise ? aside : kept;
      list.push({ kind: rule.kind, value });
      return ` \uE000${noise ? 'a' : 'k'}${list.length - 1}\uE001 `;
    };
    out = out.replace(rule.re, (...m: unknown[]) => {
      if (rule.group === undefined) return mark(m[0] as string);
      const [label, sep, quote, value] = m.slice(1, 5) as [string, string, string, string];
      return `${label}${sep}${quote}${mark(value)}${quote}`;
    });
  }
  return { text: out, aside, kept };
}

/** The placeholder word a value stands as once set aside (or in a text's loose form). */
export function placeholder(kind: ValueKind): string {
  return kind === 'clock' ? '<time>' : kind === 'uuid' ? '<uuid>' : '<id>';
}
