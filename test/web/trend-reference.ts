// The trends of the web pages computed in TypeScript from the stored builds (the reference
// evaluator for the query, the events for the tasks, luxon for the periods): what the database's
// answers (src/store/analytics/analytics.ts, directly and from the rollups) are compared with.

import { DateTime } from 'luxon';
import { evaluate } from '../../src/query/evaluate.js';
import type { CheckedExpr } from '../../src/query/checked.js';
import type { TrendOptions, Trends } from '../../src/store/analytics/analytics.js';
import { countedOutcome, type TaskRow } from '../../src/store/events/tasks.js';
import type { BuildWithAttributes, Visibility } from '../../src/store/types.js';

export interface RefBuild {
  readonly build: BuildWithAttributes;
  readonly tasks: readonly TaskRow[];
}

export function visible(b: BuildWithAttributes, v: Visibility): boolean {
  if (b.project === null) return v.withoutProject;
  return v.projects === 'all' || v.projects.includes(b.project);
}

function nearestRank(sorted: readonly number[], p: number): number {
  return sorted[Math.ceil((p / 100) * sorted.length) - 1]!;
}

export function referenceTrends(all: readonly RefBuild[], expr: CheckedExpr, v: Visibility, o: TrendOptions): Trends {
  const periods = [];
  let at = DateTime.fromMillis(o.from, { zone: o.tz }).startOf(o.interval);
  while (at.toMillis() < o.to) {
    const next = o.interval === 'day' ? at.plus({ days: 1 }) : at.plus({ weeks: 1 });
    periods.push({ start: at.toMillis(), end: next.toMillis(), label: at.toISODate()! });
    at = next;
  }
  const matched = all.filter((r) => visible(r.build, v) && evaluate(expr, r.build) && typeof r.build.attributes['buildStartTime'] === 'number');
  const inPeriod = (r: RefBuild, p: { start: number; end: number }) => {
    const t = r.build.attributes['buildStartTime'] as number;
    return t >= p.start && t < p.end;
  };
  const buckets = periods.map((p) => {
    const bs = matched.filter((r) => inPeriod(r, p));
    const outcome = (r: RefBuild) => r.build.attributes['buildOutcome'];
    const succeeded = bs.filter((r) => outcome(r) === 'succeeded').length;
    const failed = bs.filter((r) => outcome(r) === 'failed').length;
    const ds = bs.flatMap((r) => (typeof r.build.attributes['buildDuration'] === 'number' ? [r.build.attributes['buildDuration'] as number] : [])).sort((a, b) => a - b);
    const tasks = { executed: 0, 'up-to-date': 0, 'from-cache': 0, skipped: 0, failed: 0 };
    for (const r of bs) for (const t of r.tasks) tasks[countedOutcome(t.outcome)]++;
    const total = Object.values(tasks).reduce((a, b) => a + b, 0);
    return {
      ...p,
      builds: bs.length,
      succeeded,
      failed,
      unknown: bs.length - succeeded - failed,
      failureRate: succeeded + failed === 0 ? null : failed / (succeeded + failed),
      duration: ds.length === 0 ? null : { p25: nearestRank(ds, 25), p50: nearestRank(ds, 50), p75: nearestRank(ds, 75), p95: nearestRank(ds, 95) },
      tasks,
      avoidedShare: total === 0 ? null : (tasks['up-to-date'] + tasks['from-cache']) / total,
    };
  });
  const from = periods[0]!.start;
  const to = periods.at(-1)!.end;
  const stats = new Map<string, { runs: number; failures: number; sum: number; max: number }>();
  for (const r of matched.filter((x) => inPeriod(x, { start: from, end: to }))) {
    for (const t of r.tasks) {
      const s = stats.get(t.path) ?? { runs: 0, failures: 0, sum: 0, max: 0 };
      if (t.outcome === 'executed' || t.outcome === 'failed') {
        s.runs++;
        s.sum += t.duration;
        s.max = Math.max(s.max, t.duration);
      }
      if (t.outcome === 'failed') s.failures++;
      stats.set(t.path, s);
    }
  }
  const list = [...stats].map(([path, s]) => ({ path, runs: s.runs, failures: s.failures, meanDuration: s.runs ? Math.round(s.sum / s.runs) : 0, maxDuration: s.max, mean: s.runs ? s.sum / s.runs : 0 }));
  const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  const strip = ({ mean: _m, ...rest }: (typeof list)[number]) => rest;
  const slowestTasks = list.filter((s) => s.runs > 0).sort((a, b) => b.mean - a.mean || byPath(a, b)).slice(0, 10).map(strip);
  const failingTasks = list.filter((s) => s.failures > 0).sort((a, b) => b.failures - a.failures || b.runs - a.runs || byPath(a, b)).slice(0, 10).map(strip);
  return { from, to, interval: o.interval, tz: o.tz, buckets, slowestTasks, failingTasks };
}

