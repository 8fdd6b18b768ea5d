// Counting matches per UTC day by outcome, for the chart. Pure (no DOM) so it is tested in Node.

export type Outcome = 'succeeded' | 'failed' | 'unknown';

export interface DayCount {
  /** UTC day, `YYYY-MM-DD`. */
  readonly day: string;
  readonly succeeded: number;
  readonly failed: number;
  readonly unknown: number;
}

export interface ChartInput {
  /** Epoch ms of the build's start (falls back to when it became available). */
  readonly time: number;
  readonly outcome: Outcome;
}

const DAY_MS = 86_400_000;

export function outcomeOf(value: unknown): Outcome {
  return value === 'succeeded' || value === 'failed' ? value : 'unknown';
}

export function dayOf(time: number): string {
  return new Date(Math.floor(time / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
}

/**
 * One entry per UTC day from the first to the last match, empty days included (a gap in the
 * builds should show as a gap in the chart). At most `maxDays` days, the most recent ones.
 */
export function countPerDay(items: readonly ChartInput[], maxDays = 62): DayCount[] {
  const valid = items.filter((i) => Number.isFinite(i.time));
  if (valid.length === 0) return [];
  let first = Infinity;
  let last = -Infinity;
  for (const i of valid) {
    const d = Math.floor(i.time / DAY_MS);
    if (d < first) first = d;
    if (d > last) last = d;
  }
  first = Math.max(first, last - maxDays + 1);
  const counts = new Map<number, { succeeded: number; failed: number; unknown: number }>();
  for (let d = first; d <= last; d++) counts.set(d, { succeeded: 0, failed: 0, unknown: 0 });
  for (const i of valid) {
    const c = counts.get(Math.floor(i.time / DAY_MS));
    if (c) c[i.outcome]++;
  }
  return [...counts].map(([d, c]) => ({ day: dayOf(d * DAY_MS), ...c }));
}

/** A period of `GET /api/trends` (the fields the chart reads). */
export interface TrendDay {
  readonly label: string;
  readonly succeeded: number;
  readonly failed: number;
  readonly unknown: number;
}

/**
 * The chart's days from the server's per-day counts of every match (not only the listed page):
 * from the first to the last day with a match, empty days between them kept as gaps.
 */
export function daysFromTrends(periods: readonly TrendDay[]): DayCount[] {
  const busy = (p: TrendDay) => p.succeeded + p.failed + p.unknown > 0;
  const first = periods.findIndex(busy);
  if (first < 0) return [];
  let last = periods.length - 1;
  while (!busy(periods[last]!)) last--;
  return periods.slice(first, last + 1).map((p) => ({ day: p.label, succeeded: p.succeeded, failed: p.failed, unknown: p.unknown }));
}
