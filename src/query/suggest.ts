// "Did you mean": the closest candidate within an edit distance of a third of the typed name.

/**
 * Edit distance with adjacent transpositions (optimal string alignment), case-insensitive:
 * `tga` is one edit from `tag`, as a person counts it. With `max`, gives up as soon as the
 * distance must exceed it and returns `max + 1` (suggestions only care about close names, and
 * long unknown names would otherwise cost a full table per catalog field).
 */
export function editDistance(a: string, b: string, max = Infinity): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  if (s === t) return 0;
  if (Math.abs(s.length - t.length) > max) return max + 1;
  const n = t.length;
  let before = new Array<number>(n + 1).fill(0);
  let prev = Array.from({ length: n + 1 }, (_, i) => i);
  let cur = new Array<number>(n + 1).fill(0);
  for (let i = 1; i <= s.length; i++) {
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= n; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      cur[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return max + 1;
    [before, prev, cur] = [prev, cur, before];
  }
  return Math.min(prev[n]!, max + 1);
}

/** The closest candidate whose distance is at most a third of `typed`'s length, if any. */
export function closest(typed: string, candidates: Iterable<string>): string | undefined {
  const limit = Math.floor(typed.length / 3);
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const c of candidates) {
    const d = editDistance(typed, c, bestDistance - 1);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}
