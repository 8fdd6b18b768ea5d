// The wording and the day strip of a failure group's page (pure, tested in Node): the pattern split
// into its text and the placeholders the grouping put for what changes from run to run, the days
// the strip draws, and the counts in words.

import { plural } from './logic.js';

export const DAY_MS = 86_400_000;

/** A piece of a group's pattern: literal text, or a placeholder such as `<n>` or `<path>`. */
export interface PatternPart {
  readonly text: string;
  readonly placeholder: boolean;
}

// The placeholders of src/store/events/failure-groups.ts.
const PLACEHOLDER = /<(?:time|uuid|addr|path|hash|n)>/g;

/** The pattern as text and placeholders, in order; joined, the parts are the pattern again. */
export function patternParts(key: string): PatternPart[] {
  const parts: PatternPart[] = [];
  let at = 0;
  for (const m of key.matchAll(PLACEHOLDER)) {
    if (m.index > at) parts.push({ text: key.slice(at, m.index), placeholder: false });
    parts.push({ text: m[0], placeholder: true });
    at = m.index + m[0].length;
  }
  if (at < key.length) parts.push({ text: key.slice(at), placeholder: false });
  return parts;
}

export interface DayCount {
  /** The UTC day's first instant, epoch ms. */
  readonly day: number;
  readonly builds: number;
}

/**
 * The consecutive UTC days the strip draws, with the builds of each (0 for a day without): from
 * the first day with builds to today, or to the last day with builds when that is more than
 * `maxDays` ago (an old failure still shows when it hit); at most `maxDays` days (the latest), at
 * least `minDays`, so that a failure of one day is a bar among days, not the whole strip.
 */
export function daySeries(days: readonly DayCount[], now: number, maxDays = 90, minDays = 14): DayCount[] {
  const sorted = [...days].sort((a, b) => a.day - b.day);
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const first = sorted[0]?.day ?? today;
  const last = sorted[sorted.length - 1]?.day ?? today;
  const end = last >= today - (maxDays - 1) * DAY_MS ? Math.max(today, last) : last;
  const start = Math.min(Math.max(first, end - (maxDays - 1) * DAY_MS), end - (Math.min(minDays, maxDays) - 1) * DAY_MS);
  const counts = new Map(sorted.map((d) => [d.day, d.builds]));
  const out: DayCount[] = [];
  for (let day = start; day <= end; day += DAY_MS) out.push({ day, builds: counts.get(day) ?? 0 });
  return out;
}

/** `2026-05-19`: a UTC day as the strip labels it. */
export function dayLabel(day: number): string {
  return new Date(day).toISOString().slice(0, 10);
}

/** `Hit 12 builds and 3 tests: 15 failures, 2 of them build failures.` */
export function hitText(builds: number, tests: number, failures: number, buildFailures: number): string {
  if (builds === 0) return 'No build of these has this failure.';
  const own = buildFailures === 0 ? 'all of them in tests' : buildFailures === failures ? 'all of them build failures' : `${buildFailures.toLocaleString('en-US')} of them build failures`;
  return `Hit ${plural(builds, 'build')} and ${plural(tests, 'test')}: ${plural(failures, 'failure')}, ${own}.`;
}
