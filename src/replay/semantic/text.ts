/**
 * Text comparison for semantic matching, precision first. Two texts are normalised (case, whitespace,
 * punctuation, contractions, per-run noise such as timestamps and UUIDs), aligned word by word (Myers diff), and
 * scored by what changed. A change to a number, a name, a negation, a quantity, a time or a question word rejects
 * the pair outright whatever the score: those are different questions, and serving one's answer to the other is
 * the failure semantic caches are known for. Any other word that carries meaning, added, dropped or replaced, is
 * reported as `reworded`: the built-in method refuses it too (only function words and spelling variants may differ),
 * embeddings may judge it.
 */
import { diffArrays } from 'diff';
import { CONTRACTIONS, FUNCTION_WORDS, REGIONS, criticalCategory } from './words.js';

/** A text, analysed once per recorded exchange. */
export interface TextInfo {
  /** Lower-case words, contractions expanded, per-run noise replaced by `<time>`, `<uuid>`, `<id>`. */
  words: string[];
  /** `words` joined by single spaces: the normalised text. */
  normalised: string;
  /** Words written as names: capitalised mid-sentence, inner capitals (iPhone) or all caps (NASA). */
  names: ReadonlySet<string>;
  /** Words written capitalised anywhere, sentence starts included. */
  capitalised: ReadonlySet<string>;
}

/**
 * `rejected`: the texts mean different things, whatever any model says. `reworded`: a word that carries meaning was
 * added, dropped or replaced (`python` / `rust`, `short poem` / `poem`); a word method cannot tell a synonym from a
 * different request, so the built-in method refuses the pair, and only embeddings (if configured) may judge it.
 */
export type TextComparison =
  { score: number; rejected?: undefined; reworded?: string } | { score: 0; rejected: string; reworded?: undefined };

/** Per-run noise inside prose: replaced before words are compared. Dates alone are kept: they mean something. */
const NOISE: readonly [RegExp, string, 'digits'?][] = [
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, ' <uuid> ', 'digits'],
  [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?(?![\w:])/g, ' <time> ', 'digits'],
  [
    /\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? +(?:\d{1,2} +)?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* +(?:\d{1,2} +)?\d{4} +\d{2}:\d{2}:\d{2}(?: *(?:GMT|UTC)?[+-]?\d{0,4})?(?: *\([^)]*\))?/g,
    ' <time> ',
    'digits',
  ],
  [/\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b/g, ' <time> ', 'digits'],
  [/\b1[5-9]\d{11}\b/g, ' <time> ', 'digits'],
  [/\b(?:chatcmpl|req|msg|call|toolu|resp|run|trace|span|sess|evt|fc)[-_][A-Za-z0-9]{8,}\b/g, ' <id> '],
  [
    /\b(nonce|request[-_ ]?id|trace[-_ ]?id|span[-_ ]?id|correlation[-_ ]?id|idempotency[-_ ]?key|run[-_ ]?id|session[-_ ]?id)(\s*[:=#]\s*|\s+)["']?[A-Za-z0-9._~+/=-]{6,}["']?/gi,
    ' $1 <id> ',
  ],
];

const SENTENCE_END = /[.!?\n:;]/;
const TOKEN = /<(?:time|uuid|id)>|-?\p{N}+(?:[.,:/-]\p{N}+)*|[\p{L}\p{M}]+(?:['’][\p{L}\p{M}]+)*|[$€£¥%+=<>#@&]/gu;

/** Replace per-run noise (timestamps, UUIDs, request ids, nonces) with placeholders. */
export function maskNoise(text: string): string {
  let out = text;
  const digits = /\d/.test(text);
  for (const [re, to, needs] of NOISE) if (digits || needs === undefined) out = out.replace(re, to);
  return out;
}

export function analyzeText(text: string): TextInfo {
  const masked = maskNoise(text.normalize('NFKC'));
  const words: string[] = [];
  const names = new Set<string>();
  const capitalised = new Set<string>();
  let last = 0;
  for (const m of masked.matchAll(TOKEN)) {
    const surface = m[0];
    const start = m.index;
    const sentenceStart = last === 0 || SENTENCE_END.test(masked.slice(last, start));
    last = start + surface.length;
    const lower = surface.includes('’') ? surface.toLowerCase().replace(/’/g, "'") : surface.toLowerCase();
    const expanded = CONTRACTIONS.get(lower);
    if (expanded !== undefined) {
      words.push(...expanded);
      continue;
    }
    words.push(lower);
    if (lower === surface) continue;
    // Written with capitals: a name unless it only starts a sentence.
    if (/^\p{Lu}/u.test(surface)) capitalised.add(lower);
    const innerCaps =
      /^.\p{Ll}*\p{Lu}/u.test(surface) || (surface.length > 1 && surface === surface.toUpperCase() && /\p{L}/u.test(surface));
    if (!FUNCTION_WORDS.has(lower) && (innerCaps || (!sentenceStart && /^\p{Lu}/u.test(surface)))) names.add(lower);
  }
  return { words, normalised: words.join(' '), names, capitalised };
}

const weight = (w: string): number => (FUNCTION_WORDS.has(w) ? 0.3 : 1);
const VARIANT_COST = 0.3;

/**
 * Compare two analysed texts: 1 is the same after normalisation, 0 unrelated or rejected. `rejected` says why a
 * pair that might otherwise score well means something else.
 */
export function compareText(a: TextInfo, b: TextInfo): TextComparison {
  if (a.normalised === b.normalised) return { score: 1 };
  const total = Math.max(sumWeights(a.words), sumWeights(b.words));
  if (total === 0) return { score: 0, rejected: 'empty text' };
  const changes = diffArrays(a.words, b.words, { maxEditLength: Math.ceil((a.words.length + b.words.length) / 2) + 2 });
  if (changes === undefined) return { score: 0, rejected: 'too different' };

  const removedAll = new Set<string>();
  const addedAll = new Set<string>();
  const hunks: { removed: string[]; added: string[] }[] = [];
  let hunk: { removed: string[]; added: string[] } | undefined;
  for (const c of changes) {
    if (!c.added && !c.removed) {
      hunk = undefined;
      continue;
    }
    if (hunk === undefined) hunks.push((hunk = { removed: [], added: [] }));
    for (const w of c.value) (c.removed ? hunk.removed : hunk.added).push(w);
    for (const w of c.value) (c.removed ? removedAll : addedAll).add(w);
  }

  let cost = 0;
  let reworded: string | undefined;
  for (const h of hunks) {
    const what = `"${h.removed.join(' ') || '(nothing)'}" vs "${h.added.join(' ') || '(nothing)'}"`;
    for (const w of [...h.removed, ...h.added]) {
      const category = criticalCategory(w);
      if (category !== undefined) return { score: 0, rejected: `${category} differs: ${what}` };
    }
    for (const w of h.removed) if (a.names.has(w)) return { score: 0, rejected: `name differs: ${what}` };
    for (const w of h.added) if (b.names.has(w)) return { score: 0, rejected: `name differs: ${what}` };
    for (const w of h.removed)
      if (addedAll.has(w) && !FUNCTION_WORDS.has(w)) return { score: 0, rejected: `word order differs ("${w}" moved)` };
    const added = [...h.added];
    for (const r of h.removed) {
      const i = added.findIndex((x) => isVariant(r, x));
      if (i !== -1) {
        added.splice(i, 1);
        cost += VARIANT_COST;
        continue;
      }
      const j = added.findIndex((x) => a.capitalised.has(r) && b.capitalised.has(x) && !FUNCTION_WORDS.has(x));
      if (j !== -1 && !FUNCTION_WORDS.has(r)) return { score: 0, rejected: `capitalised word differs: ${what}` };
      cost += weight(r);
      if (!FUNCTION_WORDS.has(r)) reworded ??= `word differs: ${what}`;
    }
    for (const x of added) {
      cost += weight(x);
      if (!FUNCTION_WORDS.has(x)) reworded ??= `word differs: ${what}`;
    }
  }
  const score = Math.max(0, 1 - cost / total);
  return reworded === undefined ? { score } : { score, reworded };
}

function sumWeights(words: readonly string[]): number {
  let s = 0;
  for (const w of words) s += weight(w);
  return s;
}

/** Spelling variants ("summarise" / "summarize", "colour" / "color"); a plural is not a variant (it is a quantity). */
export function isVariant(a: string, b: string): boolean {
  if (a.length < 4 || b.length < 4 || a[0] !== b[0]) return false;
  if (a === `${b}s` || b === `${a}s` || a === `${b}es` || b === `${a}es`) return false;
  const d = levenshtein(a, b, 2);
  return d <= 2 && 1 - d / Math.max(a.length, b.length) >= 0.75;
}

/** Edit distance, giving up (returning `max + 1`) once it exceeds `max`. */
function levenshtein(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur.push(v);
      if (v < best) best = v;
    }
    if (best > max) return max + 1;
    prev = cur;
  }
  return prev[b.length] as number;
}

/**
 * A tool argument written with or without its region: "10 Downing Street, London" and "10 Downing Street, London,
 * UK" name the same place. True when one is the other plus trailing region or postal-code parts, and what they
 * share is specific (two parts, or a part with a number); "Paris" and "Paris, Texas" are not the same place.
 */
export function sameAddress(a: string, b: string): boolean {
  const pa = addressParts(a);
  const pb = addressParts(b);
  const [short, long] = pa.length <= pb.length ? [pa, pb] : [pb, pa];
  if (short.length === long.length || short.length === 0) return false;
  if (short.length < 2 && !/\p{N}/u.test(short[0] ?? '')) return false;
  for (let i = 0; i < short.length; i++) if (short[i] !== long[i]) return false;
  return long
    .slice(short.length)
    .every((part) =>
      part.split(' ').every((w) => REGIONS.has(w) || /^\d{4,6}(?:-\d{4})?$/.test(w) || /^[a-z]{1,2}\d[a-z\d]?$|^\d[a-z]{2}$/.test(w)),
    );
}

function addressParts(s: string): string[] {
  return s
    .split(',')
    .map((p) => analyzeText(p).normalised)
    .filter((p) => p !== '');
}
