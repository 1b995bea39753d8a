/**
 * Text comparison for semantic matching, precision first. Two analysed texts (`tokens.ts`) are aligned word by word
 * and scored by what changed. A change to a number, an identifier, code, a name, a negation, a modal, a comparison, a
 * quantity, a time, a question or logic word, or a polarity word rejects the pair outright whatever the score: those
 * are different questions, and serving one's answer to the other is the failure semantic caches are known for. So do
 * words that moved (swapped roles) and one function word replacing another of a different kind (a preposition, a
 * person, a tense). Any other word that carries meaning, added, dropped or replaced, is reported as `reworded`: the
 * built-in method refuses it too (only function words and known spelling variants may differ), embeddings may judge
 * it.
 *
 * Bounded work: the common start and end are skipped, the words that differ are counted from the two word bags
 * first (linear), a pair with more than `MAX_CHANGED` of them is rejected without aligning, and the alignment (Myers)
 * may spend only a few edits beyond the changed words. A 2,100-word prompt compares in well under a millisecond.
 */
import { diffArrays } from 'diff';
import { editDistance } from '../../edit-distance.js';
import { analyzeText, wordWeight, type TextInfo } from './tokens.js';
import { isVariant } from './variants.js';
import {
  AUXILIARIES,
  AUX_PAST,
  AUX_PRESENT,
  DETERMINERS,
  FILLER,
  FUNCTION_WORDS,
  PREPOSITIONS,
  PRONOUNS,
  REGIONS,
  criticalCategory,
  equivalentForm,
} from './words.js';

export type { TextInfo };

/**
 * `rejected`: the texts mean different things, whatever any model says. `reworded`: a word that carries meaning was
 * added, dropped or replaced (`python` / `rust`, `short poem` / `poem`); a word method cannot tell a synonym from a
 * different request, so the built-in method refuses the pair, and only embeddings (if configured) may judge it.
 */
export type TextComparison =
  | { score: number; rejected?: undefined; reworded?: string; changes?: string[] }
  | { score: 0; rejected: string; reworded?: undefined; closeness: number; changes?: undefined };

const VARIANT_COST = 0.3;
/** Words that may differ (after the common start and end) before two texts are simply different texts. */
export const MAX_CHANGED = 64;
/** Edits an alignment may spend beyond the words that differ (words that moved): past that, the order differs. */
const MOVE_SLACK = 16;
/** Words that may move without changing the request ("please list" / "list, please"). */
const MOVABLE = new Set([...FILLER, ...DETERMINERS]);

interface Hunk {
  removed: string[];
  added: string[];
}

/**
 * Compare two analysed texts (`a` recorded, `b` incoming): 1 is the same after normalisation, 0 unrelated or
 * rejected. `rejected` says why a pair that might otherwise score well means something else; `closeness` how close
 * it was anyway (it ranks the closest recordings of a miss).
 */
export function compareText(a: TextInfo, b: TextInfo): TextComparison {
  if (a.normalised === b.normalised) return { score: 1 };
  const total = Math.max(a.mass, b.mass);
  const bag = bagDifference(a, b, MAX_CHANGED);
  const changed = bag.onlyA.length + bag.onlyB.length;
  const rejected = (why: string): TextComparison => ({
    score: 0,
    rejected: why,
    closeness: Math.max(0, 1 - changed / Math.max(1, a.words.length + b.words.length)),
  });
  if (total === 0) return rejected('empty text');
  if (bag.over) {
    const why = guard(a, b, { removed: bag.onlyA, added: bag.onlyB });
    return rejected(why ?? `too different: more than ${MAX_CHANGED} words differ (${quote(bag.onlyA)} vs ${quote(bag.onlyB)})`);
  }
  const { midA, midB } = middles(a.words, b.words);
  const changes = diffArrays(midA, midB, { maxEditLength: changed + MOVE_SLACK });
  if (changes === undefined) return rejected(`word order differs (${changed} words differ and more moved)`);
  const hunks: Hunk[] = [];
  let hunk: Hunk | undefined;
  for (const c of changes) {
    if (!c.added && !c.removed) {
      hunk = undefined;
      continue;
    }
    if (hunk === undefined) hunks.push((hunk = { removed: [], added: [] }));
    (c.removed ? hunk.removed : hunk.added).push(...c.value);
  }
  const verdict = judge(a, b, hunks, total);
  return 'why' in verdict ? rejected(verdict.why) : verdict;
}

/** The words between the common start and the common end. */
function middles(a: readonly string[], b: readonly string[]): { midA: string[]; midB: string[] } {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  return { midA: a.slice(start, endA), midB: b.slice(start, endB) };
}

/** A text's words counted (each text's once: a recording's texts are analysed once per tape). */
function countsOf(info: TextInfo): Map<string, number> {
  if (info.counts === undefined) {
    const counts = new Map<string, number>();
    for (const w of info.words) counts.set(w, (counts.get(w) ?? 0) + 1);
    info.counts = counts;
  }
  return info.counts;
}

/**
 * The words of `a` not in `b` and the other way round, counted as bags (the same as between the two texts' middles:
 * the common start and end cancel out). Stops once more than `limit` differ (`over`).
 */
function bagDifference(a: TextInfo, b: TextInfo, limit: number): { onlyA: string[]; onlyB: string[]; over: boolean } {
  const ca = countsOf(a);
  const cb = countsOf(b);
  const onlyA: string[] = [];
  const onlyB: string[] = [];
  for (const [mine, theirs, only] of [
    [ca, cb, onlyA],
    [cb, ca, onlyB],
  ] as const) {
    for (const [w, n] of mine) {
      for (let d = n - (theirs.get(w) ?? 0); d > 0; d--) only.push(w);
      if (onlyA.length + onlyB.length > limit) return { onlyA, onlyB, over: true };
    }
  }
  return { onlyA, onlyB, over: false };
}

/** Score the hunks of an alignment, or say which change means something else. */
function judge(
  a: TextInfo,
  b: TextInfo,
  hunks: readonly Hunk[],
  total: number,
): { score: number; reworded?: string; changes: string[] } | { why: string } {
  const addedAll = new Set<string>();
  for (const h of hunks) for (const w of h.added) addedAll.add(w);
  let cost = 0;
  let reworded: string | undefined;
  // What differed and cost a little, for the match's reason: `"summarise" / "summarize"`, `"please" dropped`.
  const changes: string[] = [];
  for (const h of hunks) {
    const what = `${quote(h.removed)} vs ${quote(h.added)}`;
    // A known spelling variant is the same word spelled another way: paired first, it is no change of a name or code.
    const removed: string[] = [];
    const added = [...h.added];
    for (const r of h.removed) {
      const i = added.findIndex((x) => isVariant(r, x));
      if (i === -1) removed.push(r);
      else {
        changes.push(`"${r}" / "${added[i]}"`);
        added.splice(i, 1);
        cost += VARIANT_COST;
      }
    }
    const why = guard(a, b, { removed, added });
    if (why !== undefined) return { why: why.replace(/: .*$/, `: ${what}`) };
    for (const w of removed) if (addedAll.has(w) && !MOVABLE.has(w)) return { why: `word order differs ("${w}" moved)` };
    const swap = replacedFunctionWord(removed, added);
    if (swap !== undefined) return { why: `${swap} differs: ${what}` };
    if (auxiliaryComesOrGoes(removed, added)) return { why: `auxiliary differs: ${what}` };
    for (const r of removed) {
      if (added.some((x) => a.capitalised.has(r) && b.capitalised.has(x) && !FUNCTION_WORDS.has(x)) && !FUNCTION_WORDS.has(r))
        return { why: `capitalised word differs: ${what}` };
    }
    for (const w of [...removed, ...added]) {
      cost += wordWeight(w);
      if (!FUNCTION_WORDS.has(w)) reworded ??= `word differs: ${what}${lookAlike(removed, added)}`;
    }
    if (removed.length > 0) changes.push(`${quote(removed)} dropped`);
    if (added.length > 0) changes.push(`${quote(added)} added`);
  }
  const score = Math.max(0, 1 - cost / total);
  return reworded === undefined ? { score, changes } : { score, reworded, changes };
}

/**
 * What rules a hunk out whatever it costs: an identifier, code, a critical word, a name, or a pronoun replaced by
 * another. Undefined when the hunk may be scored.
 */
function guard(a: TextInfo, b: TextInfo, h: Hunk): string | undefined {
  const what = `${quote(h.removed)} vs ${quote(h.added)}`;
  for (const w of h.removed) if (a.ids.has(w)) return `identifier differs: ${what}`;
  for (const w of h.added) if (b.ids.has(w)) return `identifier differs: ${what}`;
  for (const w of h.removed) if (a.code.has(w)) return `code differs: ${what}`;
  for (const w of h.added) if (b.code.has(w)) return `code differs: ${what}`;
  for (const w of [...h.removed, ...h.added]) {
    const category = criticalCategory(w);
    if (category !== undefined) return `${category} differs: ${what}`;
  }
  for (const w of h.removed) if (a.names.has(w)) return `name differs: ${what}`;
  for (const w of h.added) if (b.names.has(w)) return `name differs: ${what}`;
  if (h.removed.some((w) => PRONOUNS.has(w)) && h.added.some((w) => PRONOUNS.has(w) && !h.removed.includes(w)))
    return `person differs: ${what}`;
  return undefined;
}

/**
 * One function word replaced by another of a different kind ("written by" / "written for", "is" / "was"): the kind
 * of change, or undefined. Articles and demonstratives stand for one another, so do "is" / "are" and "do" / "does".
 */
function replacedFunctionWord(removed: readonly string[], added: readonly string[]): string | undefined {
  const forms = (ws: readonly string[]): string[] => ws.filter((w) => FUNCTION_WORDS.has(w) && !FILLER.has(w)).map(equivalentForm);
  const r = forms(removed);
  const x = forms(added);
  for (let i = r.length - 1; i >= 0; i--) {
    const j = x.indexOf(r[i] as string);
    if (j !== -1) {
      x.splice(j, 1);
      r.splice(i, 1);
    }
  }
  if (r.length === 0 || x.length === 0) return undefined;
  const tense = (w: string): number => (AUX_PAST.has(w) ? 1 : AUX_PRESENT.has(w) ? 0 : -1);
  const tenses = (ws: string[]): Set<number> => new Set(ws.map(tense).filter((t) => t !== -1));
  const [tr, tx] = [tenses(r), tenses(x)];
  if ((tr.has(0) && tx.has(1)) || (tr.has(1) && tx.has(0))) return 'tense';
  if (r.some((w) => PREPOSITIONS.has(w)) || x.some((w) => PREPOSITIONS.has(w))) return 'preposition';
  return 'function word';
}

/** An auxiliary verb added or dropped (not one replaced by an equivalent): the voice or the mood changed. */
function auxiliaryComesOrGoes(removed: readonly string[], added: readonly string[]): boolean {
  const r = removed.filter((w) => AUXILIARIES.has(w)).map(equivalentForm);
  const x = added.filter((w) => AUXILIARIES.has(w)).map(equivalentForm);
  return r.length !== x.length || r.some((w) => !x.includes(w));
}

/** For a one-word replacement a letter or two apart: say it is not a known spelling variant. */
function lookAlike(removed: readonly string[], added: readonly string[]): string {
  if (removed.length !== 1 || added.length !== 1) return '';
  const [r, x] = [removed[0] as string, added[0] as string];
  return r.length >= 4 && editDistance(r, x) <= 2 ? ' (close in letters, not a known spelling variant)' : '';
}

function quote(ws: readonly string[]): string {
  if (ws.length === 0) return '"(nothing)"';
  const text = ws.join(' ');
  return `"${text.length > 60 ? `${text.slice(0, 57)}...` : text}"`;
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
    .map((p) => analyzeText(p, 'arg').normalised)
    .filter((p) => p !== '');
}
