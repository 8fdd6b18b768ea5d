// The nearest-rank percentiles of each period's build durations, for the analytics index's trends
// (analytics-index.ts periodRows), without putting every duration in order.
//
// Why: selecting four ranks among all the durations of each period of a 30-day trend of every
// build (a million at the demo's size) took about 54 ms of a 180 ms trend, after a pass that
// copied every duration out by period. Here the first pass also counts each period's durations by
// bucket (HISTOGRAM_BUCKETS, monotone in the value); each rank then falls in one bucket, and a
// second pass keeps only the durations of those buckets, a few percent of them, in which the
// ranks are found. The values are the exact ones (nothing is approximated): the rank r of a period
// is the value at rank r - (the durations of the buckets below) among its bucket's.

/** The percentiles of a trend's build durations, on every path (SQL, rollups, the analytics index). */
export const PERCENTILES = [25, 50, 75, 95] as const;

export interface Percentiles {
  readonly p25: number;
  readonly p50: number;
  readonly p75: number;
  readonly p95: number;
}

/**
 * Buckets of the histogram: below 1 (negative and fractions), then for each whole part x in
 * [1, 2^31) its power of two and the next four bits (16 buckets an octave, each at most 1/16 of
 * its values wide), then 2^31 and above.
 */
export const HISTOGRAM_BUCKETS = 1 + 31 * 16 + 1;

/** The bucket of a duration (not NaN): never smaller for a larger duration. */
export function bucketOf(d: number): number {
  if (!(d >= 1)) return 0;
  if (d >= 2 ** 31) return HISTOGRAM_BUCKETS - 1;
  const x = Math.floor(d);
  const e = 31 - Math.clz32(x);
  const m = e >= 4 ? (x >>> (e - 4)) & 15 : (x << (4 - e)) & 15;
  return 1 + e * 16 + m;
}

/** The 0-based nearest ranks of the percentiles among `known` values: ceil(p% of known) - 1, as SQL's `(p * n + 99) / 100`. */
export function percentileRanks(known: number): number[] {
  return PERCENTILES.map((pct) => Math.floor((pct * known + 99) / 100) - 1);
}

/**
 * Where each period's percentiles lie, from the periods' histograms (`histogram[i * HISTOGRAM_BUCKETS + b]`,
 * `known[i]` durations in all): for period i, the distinct buckets holding its ranks at
 * `buckets[i * 4 ..]` (-1 past them), and each percentile's slot (i * 4 + q) and rank among its
 * bucket's values. `start` gives each slot's place in one array of the kept values.
 */
export interface PercentilePlan {
  readonly buckets: Int32Array;
  readonly slotOf: Uint32Array;
  readonly rankIn: Uint32Array;
  readonly start: Uint32Array;
}

export function planPercentiles(histogram: Uint32Array, known: Uint32Array, periods: number): PercentilePlan {
  const buckets = new Int32Array(periods * 4).fill(-1);
  const slotOf = new Uint32Array(periods * 4);
  const rankIn = new Uint32Array(periods * 4);
  const sizes = new Uint32Array(periods * 4);
  for (let i = 0; i < periods; i++) {
    if (known[i] === 0) continue;
    const ranks = percentileRanks(known[i]!);
    let b = 0;
    let below = 0;
    let distinct = 0;
    for (let j = 0; j < 4; j++) {
      // Ranks ascend: each one's bucket is at or after the one before.
      while (below + histogram[i * HISTOGRAM_BUCKETS + b]! <= ranks[j]!) below += histogram[i * HISTOGRAM_BUCKETS + b++]!;
      if (distinct === 0 || buckets[i * 4 + distinct - 1] !== b) {
        buckets[i * 4 + distinct] = b;
        sizes[i * 4 + distinct] = histogram[i * HISTOGRAM_BUCKETS + b]!;
        distinct++;
      }
      slotOf[i * 4 + j] = i * 4 + distinct - 1;
      rankIn[i * 4 + j] = ranks[j]! - below;
    }
  }
  const start = new Uint32Array(periods * 4 + 1);
  for (let q = 0; q < periods * 4; q++) start[q + 1] = start[q]! + sizes[q]!;
  return { buckets, slotOf, rankIn, start };
}

/**
 * Keeps the durations of the builds seqs[from..to) (by seq in `duration`, NaN: none) that fall in
 * a bucket of their period's plan, at `next[slot]++` of `kept` (`next` starts as `plan.start`).
 */
export function keepPlanned(
  seqs: Uint32Array,
  periods: Uint32Array,
  from: number,
  to: number,
  duration: Float64Array,
  plan: PercentilePlan,
  kept: Float64Array,
  next: Uint32Array,
): void {
  const buckets = plan.buckets;
  for (let k = from; k < to; k++) {
    const d = duration[seqs[k]!]!;
    if (Number.isNaN(d)) continue;
    const b = bucketOf(d);
    const q = periods[k]! * 4;
    for (let j = q; j < q + 4 && buckets[j] !== -1; j++) {
      if (buckets[j] === b) {
        kept[next[j]!++] = d;
        break;
      }
    }
  }
}

/** Period i's percentiles from the kept values (which this puts in order, slot by slot). */
export function percentilesOfPlan(plan: PercentilePlan, kept: Float64Array, i: number): Percentiles {
  const at = (j: number): number => {
    const slot = plan.slotOf[i * 4 + j]!;
    return kept[plan.start[slot]! + plan.rankIn[i * 4 + j]!]!;
  };
  for (let q = i * 4; q < i * 4 + 4 && plan.buckets[q] !== -1; q++) kept.subarray(plan.start[q]!, plan.start[q + 1]!).sort();
  return { p25: at(0), p50: at(1), p75: at(2), p95: at(3) };
}
