/**
 * How alike two texts are, in [0, 1]: word-level normalised edit similarity,
 * `1 - wordEditDistance(a, b) / max(words(a), words(b))`, where words are runs of letters and digits, lowercased
 * (punctuation, spacing and case do not count). Two texts with no words are alike (1) when equal, else 0.
 * Above 4 million word pairs the cost of the edit distance is not worth it: the Dice coefficient over the two
 * word multisets is used instead.
 */
const MAX_PAIRS = 4_000_000;

export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

export function textSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  const wa = words(a);
  const wb = words(b);
  const longer = Math.max(wa.length, wb.length);
  if (longer === 0) return a.trim() === b.trim() ? 1 : 0;
  if (wa.length * wb.length > MAX_PAIRS) return round4(dice(wa, wb));
  return round4(1 - editDistance(wa, wb) / longer);
}

function editDistance(a: readonly string[], b: readonly string[]): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const sub = (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      cur.push(Math.min(sub, (prev[j] as number) + 1, (cur[j - 1] as number) + 1));
    }
    prev = cur;
  }
  return prev[b.length] as number;
}

function dice(a: readonly string[], b: readonly string[]): number {
  const counts = new Map<string, number>();
  for (const w of a) counts.set(w, (counts.get(w) ?? 0) + 1);
  let shared = 0;
  for (const w of b) {
    const c = counts.get(w) ?? 0;
    if (c > 0) {
      shared++;
      counts.set(w, c - 1);
    }
  }
  return (2 * shared) / (a.length + b.length);
}

export function round4(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

/** How output similarity was measured: the word method below, or cosine similarity of embeddings. */
export type SimilarityMethod = 'words' | 'embeddings';

/** A similarity in [0, 1] for two texts, and the method behind it. */
export interface OutputSimilarity {
  method: SimilarityMethod;
  of(a: string, b: string): number;
}

export const wordSimilarity: OutputSimilarity = { method: 'words', of: textSimilarity };
