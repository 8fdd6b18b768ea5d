// "Did you mean": the closest candidate within an edit distance of a third of the typed name.

/**
 * Edit distance with adjacent transpositions (optimal string alignment), case-insensitive:
 * `tga` is one edit from `tag`, as a person counts it.
 */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  if (s === t) return 0;
  let before: number[] = [];
  let prev = Array.from({ length: t.length + 1 }, (_, i) => i);
  for (let i = 1; i <= s.length; i++) {
    const cur = [i];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      cur[j] = d;
    }
    before = prev;
    prev = cur;
  }
  return prev[t.length]!;
}

/** The closest candidate whose distance is at most a third of `typed`'s length, if any. */
export function closest(typed: string, candidates: Iterable<string>): string | undefined {
  const limit = Math.floor(typed.length / 3);
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    if (Math.abs(c.length - typed.length) > limit) continue;
    const d = editDistance(typed, c);
    if (d <= limit && d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}
