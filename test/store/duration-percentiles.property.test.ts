// The trends' duration percentiles from the histogram (src/store/analytics/duration-percentiles.ts)
// against putting each period's durations in order: the same nearest-rank values for any
// durations (negative, fractions, huge, repeated, none), and a bucket never smaller for a larger
// duration.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bucketOf, HISTOGRAM_BUCKETS, keepPlanned, percentileRanks, percentilesOfPlan, planPercentiles } from '../../src/store/analytics/duration-percentiles.js';

const duration = fc.oneof(
  fc.integer({ min: 0, max: 5_000 }),
  fc.integer({ min: 0, max: 2 ** 40 }),
  fc.double({ min: -1e12, max: 1e12, noNaN: true }),
  fc.constantFrom(Number.NaN, 0, -0, 1, 2 ** 31 - 1, 2 ** 31, 2 ** 53),
);

describe('duration percentiles by histogram', () => {
  it('bucketOf is monotone and within the histogram', () => {
    fc.assert(
      fc.property(duration, duration, (a, b) => {
        fc.pre(!Number.isNaN(a) && !Number.isNaN(b));
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(bucketOf(lo)).toBeLessThanOrEqual(bucketOf(hi));
        expect(bucketOf(hi)).toBeLessThan(HISTOGRAM_BUCKETS);
        expect(bucketOf(lo)).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 2000 },
    );
  });

  it('the percentiles of each period are those of its durations in order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.array(fc.tuple(fc.nat(), duration), { maxLength: 300 }), fc.nat(40), (n, builds, chunk) => {
        // Build k has seq k + 1 and period builds[k][0] % n.
        const seqs = Uint32Array.from(builds, (_, k) => k + 1);
        const periods = Uint32Array.from(builds, ([p]) => p % n);
        const durations = Float64Array.from([Number.NaN, ...builds.map(([, d]) => d)]);
        const known = new Uint32Array(n);
        const histogram = new Uint32Array(n * HISTOGRAM_BUCKETS);
        builds.forEach(([p, d]) => {
          if (Number.isNaN(d)) return;
          known[p % n]!++;
          histogram[(p % n) * HISTOGRAM_BUCKETS + bucketOf(d)]!++;
        });
        const plan = planPercentiles(histogram, known, n);
        const kept = new Float64Array(plan.start[n * 4]!);
        const next = plan.start.slice(0, n * 4);
        // In parts, as the index keeps them between turns of the event loop.
        const step = chunk + 1;
        for (let from = 0; from < seqs.length; from += step) keepPlanned(seqs, periods, from, Math.min(from + step, seqs.length), durations, plan, kept, next);
        for (let i = 0; i < n; i++) {
          const values = builds.filter(([p, d]) => p % n === i && !Number.isNaN(d)).map(([, d]) => d);
          if (values.length === 0) continue;
          const sorted = Float64Array.from(values).sort();
          const [p25, p50, p75, p95] = percentileRanks(values.length).map((r) => sorted[r]!);
          expect(percentilesOfPlan(plan, kept, i)).toEqual({ p25, p50, p75, p95 });
        }
      }),
      { numRuns: 500 },
    );
  });
});
