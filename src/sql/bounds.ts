// Lowers an ordered predicate (compare or range) to numeric bounds over the stored number, for
// the SQL compiler: milliseconds for durations and timestamps, bytes for storage sizes, the number
// itself otherwise. The reference evaluator (src/query/evaluate.ts) states the same edges in its
// own words, so that a mistake here shows up in the differential tests instead of on both sides.

import { ordinal } from '../query/check.js';
import type { Bounds, Predicate } from '../query/checked.js';

/**
 * Bounds of a compare or range predicate.
 * - Timestamps: `field:v` covers v's span [instant, instant + spanMs); `>`, `>=`, `<`, `<=`
 *   compare with the instant; `[a to b]` is a <= t < end of b's span.
 * - Numbers, durations, sizes: equality is exact, ranges inclusive at both ends.
 */
export function boundsOf(predicate: Extract<Predicate, { kind: 'compare' | 'range' }>): Bounds {
  if (predicate.kind === 'range') {
    const min = ordinal(predicate.from);
    const to = predicate.to;
    if (to.type === 'timestamp') return { min, minInclusive: true, max: to.instant + to.spanMs, maxInclusive: false };
    return { min, minInclusive: true, max: ordinal(to), maxInclusive: true };
  }
  const v = ordinal(predicate.value);
  switch (predicate.op) {
    case 'eq':
      if (predicate.value.type === 'timestamp') {
        return { min: v, minInclusive: true, max: v + predicate.value.spanMs, maxInclusive: false };
      }
      return { min: v, minInclusive: true, max: v, maxInclusive: true };
    case 'gt':
      return { min: v, minInclusive: false, maxInclusive: false };
    case 'ge':
      return { min: v, minInclusive: true, maxInclusive: false };
    case 'lt':
      return { max: v, maxInclusive: false, minInclusive: false };
    case 'le':
      return { max: v, maxInclusive: true, minInclusive: false };
  }
}

/** Whether `n` lies within `bounds`. */
export function withinBounds(n: number, bounds: Bounds): boolean {
  if (bounds.min !== undefined && (bounds.minInclusive ? n < bounds.min : n <= bounds.min)) return false;
  if (bounds.max !== undefined && (bounds.maxInclusive ? n > bounds.max : n >= bounds.max)) return false;
  return true;
}
