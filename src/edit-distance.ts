/**
 * Edit distance between two short strings (names, flags, route prefixes), for "did you mean ..." hints: insertions,
 * deletions, substitutions and a swap of two neighbouring characters (`tpae` for `tape`, `recrod` for `record`, the
 * commonest slip at a keyboard) each count 1 (optimal string alignment).
 */
export function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] as number) + 1);
      cur[j] = d;
    }
    before = prev;
    prev = cur;
  }
  return prev[b.length] as number;
}

/** Up to `max` of `candidates` closest to `asked` (by edit distance, then name), when close enough to be a slip. */
export function closestNames(asked: string, candidates: readonly string[], max = 3): string[] {
  const a = asked.toLowerCase();
  const scored: { name: string; d: number }[] = [];
  for (const name of candidates) {
    const n = name.toLowerCase();
    // A name that contains what was asked (or the other way round) is close whatever its length.
    const d = n.includes(a) || a.includes(n) ? 0 : editDistance(a, n);
    if (d <= Math.max(2, Math.floor(Math.max(a.length, n.length) / 3))) scored.push({ name, d });
  }
  return scored
    .sort((x, y) => x.d - y.d || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))
    .slice(0, max)
    .map((s) => s.name);
}
