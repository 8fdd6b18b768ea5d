// Aggregates over the builds a query matches, computed in the database with the same compiled
// query and visibility as the listing: the exact count, facets (the most frequent values of a
// few fields) and trends per day or week. Nothing here reads builds into memory: every answer
// is a handful of grouped rows. See docs/web.md for the definitions.

import { DomainError } from '../../errors/domain.js';
import { sql, type CompiledQuery, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { DateTime, IANAZone } from 'luxon';
import { compileQuery, dialectOf } from '../../sql/index.js';
import { valueFieldCode } from '../../sql/value-fields.js';
import type { DatabaseHandle } from '../../db/database.js';
import { PERCENTILES } from './duration-percentiles.js';
import type { Database } from '../../db/schema.js';
import { AVOIDED_OUTCOMES, COUNTED_TASK_OUTCOMES, RAN_OUTCOME_CODES, TASK_COUNT_COLUMNS, TASK_OUTCOME_CODES, type CountedTaskOutcome } from '../events/tasks.js';
import type { AggregateScope, FacetValue, Facets, TaskStat, TrendBucket, TrendOptions, Trends } from '../types.js';
import { facetsFromRollups, trendRowsFromRollups, type PathRow, type PeriodRow, type TrendRows } from './rollups-query.js';
import { unguarded, type GuardedSearch, type ReadRows } from '../search/search-guard.js';
import type { AnalyticsIndex } from './analytics-index.js';
import { visibilityCondition } from '../search/visibility.js';

// The aggregates' types are part of the store's API (types.ts); named here too for the pages.
export { FACET_FIELDS } from '../types.js';
export type { AggregateScope as Scope, DurationPercentiles, FacetField, FacetValue, Facets, TaskCounts, TaskStat, TrendBucket, TrendInterval, TrendOptions, Trends } from '../types.js';
type Scope = AggregateScope;

/** Periods a trend may have: two years of days, or ten years of weeks. */
export const MAX_BUCKETS = 750;

/** A trend range or time zone that cannot be used (400). */
export class TrendRangeError extends DomainError {
  readonly kind = 'bad-request';
}

/** The available builds of a scope: a query over `builds` without a select list yet. */
type Query = SelectQueryBuilder<Database, 'builds', object>;

export { visibilityCondition } from '../search/visibility.js';

/**
 * The available builds of a scope, as a query over `builds` without a select list; `scoped`
 * makes one such query after another for the statements of one aggregate. The query is compiled
 * once: a search of 100 terms costs the server's thread milliseconds per compile, and a trend
 * is three statements. The guard's deadline check goes before the query's terms, as in a
 * listing, so that a search thread checks it for every row visited.
 */
function scopedBy(handle: DatabaseHandle, scope: Scope, check: RawBuilder<SqlBool> | undefined): (bounds?: { startFrom?: number; startTo?: number }) => Query {
  const filter = scope.query !== undefined && scope.query.kind !== 'all' ? compileQuery(scope.query, dialectOf(handle.dialect)) : undefined;
  const visible = visibilityCondition(scope.visibility);
  return (bounds = {}) => {
    let q: Query = handle.db.selectFrom('builds').where('builds.seq', 'is not', null).where(visible);
    if (check !== undefined) q = q.where(check);
    if (filter !== undefined) q = q.where(filter);
    const startFrom = bounds.startFrom ?? scope.startFrom;
    const startTo = bounds.startTo ?? scope.startTo;
    if (startFrom !== undefined) q = q.where('builds.buildstarttime', '>=', startFrom);
    if (startTo !== undefined) q = q.where('builds.buildstarttime', '<', startTo);
    return q;
  };
}

/**
 * Which way an aggregate is computed: `rollups: false` forces the direct path (tests and
 * benchmarks compare both). `guard` runs the direct path's statements: the store passes its
 * search guard (search-guard.ts: the time limit, the search threads or slots), so facets and
 * trends are searches like a listing; without one they run straight on the database, unlimited.
 * What the rollups answer is a few rows of small tables, read on the calling thread like the
 * count's (rollups-query.ts), so the first screen does not wait behind slow searches.
 */
export interface AggregateHow {
  readonly rollups?: boolean;
  readonly guard?: GuardedSearch;
  /** The analytics index (analytics-index.ts), tried after the rollups and before the direct path. */
  readonly index?: AnalyticsIndex;
}

const facetValues = (rows: readonly unknown[]): FacetValue[] => (rows as { value: string; n: number | string }[]).map((r) => ({ value: r.value, count: Number(r.n) }));

/**
 * The `limit` most frequent values of each facet field among the scope's builds, most frequent
 * first, ties by value. Answered from the rollups (rollups-query.ts) when the query is one they
 * answer and the scope has no time range; otherwise from the builds directly. Both give the same
 * answer.
 */
export async function buildFacets(handle: DatabaseHandle, scope: Scope, limit = 8, how: AggregateHow = {}): Promise<Facets> {
  if (how.rollups !== false && scope.startFrom === undefined && scope.startTo === undefined) {
    const rows = await facetsFromRollups(handle, scope.query, visibilityCondition(scope.visibility), limit);
    if (rows !== undefined) {
      return { buildOutcome: facetValues(rows.buildOutcome), buildTool: facetValues(rows.buildTool), project: facetValues(rows.project), user: facetValues(rows.user), tag: facetValues(rows.tag) };
    }
  }
  const indexed = await how.index?.facets(scope, limit);
  if (indexed !== undefined) return indexed;
  const guard = how.guard ?? unguarded(handle);
  const scoped = scopedBy(handle, scope, guard.deadlineCheck);
  const rows = await guard.search((read) => read(facetStatement(handle, scoped(), limit)));
  const of = (f: number) => facetValues(rows.filter((r) => Number(r.f) === f));
  return { buildOutcome: of(0), buildTool: of(1), project: of(2), user: of(3), tag: of(4) };
}

/**
 * The facets of the builds `matched` selects, in one statement: the matching builds are found once
 * (a CTE materialized once, with the four facet columns of each), and each field's most frequent
 * values are counted from that. Five statements that each ran the query read every matching
 * build five times: at 1M builds ~556k wide rows by seq per statement for `tag:CI`. The tags are
 * the values of the matched builds (`build_values` by seq). Rows: `f` the field (0 buildOutcome,
 * 1 buildTool, 2 project, 3 user, 4 tag), each field's rows most frequent first, ties by value.
 */
function facetStatement(handle: DatabaseHandle, matched: Query, limit: number): CompiledQuery<{ f: number | string; value: string; n: number | string }> {
  // project_name keeps the project's own case; the `project` column is the lower-cased search key.
  const m = matched.select([
    sql<number>`${sql.ref('builds.seq')}`.as('seq'),
    sql<string>`${sql.ref('builds.buildoutcome')}`.as('c0'),
    sql<string>`${sql.ref('builds.tool_type')}`.as('c1'),
    sql<string>`${sql.ref('builds.project_name')}`.as('c2'),
    sql<string>`${sql.ref('builds.user')}`.as('c3'),
  ]);
  const top = (f: number, grouped: RawBuilder<unknown>) =>
    sql`SELECT ${sql.lit(f)} AS f, value, n FROM (${grouped} GROUP BY value ORDER BY n DESC, value LIMIT ${limit}) AS ${sql.raw(`a${f}`)}`;
  // The four columns are counted together first (g: one row per distinct combination, a few
  // thousand at most, one grouping of the matches instead of four); each field sums them.
  const column = (f: number) => top(f, sql`SELECT ${sql.ref(`c${f}`)} AS value, sum(n) AS n FROM g WHERE ${sql.ref(`c${f}`)} IS NOT NULL`);
  // The matched builds' tags by seq (SQLite: CROSS JOIN keeps m the outer loop, one seek of the
  // covering seq index per build; left to itself it read every tag row of the store through the
  // key and checked each against m, the same work for `buildTool:native` as for every build).
  const tags = top(4, sql`SELECT v.value AS value, count(*) AS n FROM m CROSS JOIN build_values AS v WHERE v.seq = m.seq AND v.field = ${sql.lit(valueFieldCode('tag'))}`);
  // (kysely puts a select builder in parentheses of its own.) The outer ORDER BY keeps each
  // field's rows in order whatever way the database appends the arms.
  return sql<{ f: number | string; value: string; n: number | string }>`WITH m AS MATERIALIZED ${m},
    g AS MATERIALIZED (SELECT c0, c1, c2, c3, count(*) AS n FROM m GROUP BY c0, c1, c2, c3)
    SELECT f, value, n FROM (${sql.join([column(0), column(1), column(2), column(3), tags], sql` UNION ALL `)}) AS facets
    ORDER BY f, n DESC, value`.compile(handle.db);
}

/** The periods of a trend: their start instants and the end of the last, in the time zone. */
export function trendPeriods(options: TrendOptions): { start: number; end: number; label: string }[] {
  if (!IANAZone.isValidZone(options.tz)) throw new TrendRangeError(`Unknown time zone '${options.tz}' (use an IANA name such as UTC or Europe/Berlin)`);
  if (!Number.isSafeInteger(options.from) || !Number.isSafeInteger(options.to)) throw new TrendRangeError('from and to must be instants');
  if (options.to <= options.from) throw new TrendRangeError('to must be after from');
  const unit = options.interval === 'week' ? 'week' : 'day';
  let at = DateTime.fromMillis(options.from, { zone: options.tz }).startOf(unit);
  const out: { start: number; end: number; label: string }[] = [];
  while (at.toMillis() < options.to) {
    const next = at.plus(unit === 'week' ? { weeks: 1 } : { days: 1 }).startOf(unit);
    out.push({ start: at.toMillis(), end: next.toMillis(), label: at.toISODate()! });
    if (out.length > MAX_BUCKETS) {
      throw new TrendRangeError(`The range holds more than ${MAX_BUCKETS} ${unit}s; choose a shorter range or weeks`);
    }
    at = next;
  }
  return out;
}

const int = (n: number): RawBuilder<number> => sql.raw(String(Math.trunc(n)));

/**
 * The index of the period holding `t` among periods [lo, hi) whose starts are `starts` (t is
 * known to be in one of them): nested CASE expressions that halve the range each time.
 */
function periodCase(t: RawBuilder<unknown>, starts: readonly number[], lo: number, hi: number): RawBuilder<number> {
  if (hi - lo === 1) return int(lo);
  const mid = (lo + hi) >> 1;
  return sql<number>`CASE WHEN ${t} < ${int(starts[mid]!)} THEN ${periodCase(t, starts, lo, mid)} ELSE ${periodCase(t, starts, mid, hi)} END`;
}

/** Which way a trend is computed (the same choice as the facets'). */
export type TrendHow = AggregateHow;

/**
 * Trends of the scope's builds per period. A build belongs to the period in which it started;
 * builds without a known start time are in no period. Percentiles are nearest-rank: the smallest
 * duration d such that at least p% of the period's known durations are <= d.
 *
 * Answered from the rollups (rollups-query.ts) when the query is empty or a conjunction of exact
 * values of rollup dimensions and the periods are unions of 15-minute slots; otherwise from the
 * analytics index when it has read the builds (analytics-index.ts); otherwise from the builds
 * directly. All give the same answer.
 */
export async function buildTrends(handle: DatabaseHandle, scope: Scope, options: TrendOptions, how: TrendHow = {}): Promise<Trends> {
  const periods = trendPeriods(options);
  const from = periods[0]!.start;
  const to = periods[periods.length - 1]!.end;
  const starts = periods.map((p) => p.start);
  const periodOf = (t: RawBuilder<unknown>) => periodCase(t, starts, 0, starts.length);
  const guard = how.guard ?? unguarded(handle);
  const rows =
    (how.rollups === false ? undefined : await trendRowsFromRollups(handle, scope.query, visibilityCondition(scope.visibility), periods, periodOf)) ??
    (await how.index?.trendRows(scope, periods)) ??
    (await guard.search((read) => directTrendRows(handle, scope, from, to, periodOf, read, guard.deadlineCheck)));

  const paths = rows.paths;
  const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  const slow = paths.filter((p) => p.runs > 0).sort((a, b) => b.mean! - a.mean! || byPath(a, b)).slice(0, 10);
  const failing = paths.filter((p) => p.failures > 0).sort((a, b) => b.failures - a.failures || b.runs - a.runs || byPath(a, b)).slice(0, 10);

  const buckets = periods.map((p, i): TrendBucket => {
    const r = rows.periods.get(i);
    const builds = r?.builds ?? 0;
    const succeeded = r?.succeeded ?? 0;
    const failed = r?.failed ?? 0;
    const counts = rows.tasks.get(i);
    const tasks = Object.fromEntries(COUNTED_TASK_OUTCOMES.map((o, k) => [o, counts?.[k] ?? 0])) as Record<CountedTaskOutcome, number>;
    const totalTasks = COUNTED_TASK_OUTCOMES.reduce((s, o) => s + tasks[o], 0);
    const avoided = AVOIDED_OUTCOMES.reduce((s, o) => s + tasks[o], 0);
    return {
      start: p.start,
      end: p.end,
      label: p.label,
      builds,
      succeeded,
      failed,
      unknown: builds - succeeded - failed,
      failureRate: succeeded + failed === 0 ? null : failed / (succeeded + failed),
      duration: r?.percentiles ?? null,
      tasks,
      avoidedShare: totalTasks === 0 ? null : avoided / totalTasks,
    };
  });
  const stat = (r: PathRow): TaskStat => ({
    path: r.path,
    runs: Number(r.runs),
    failures: Number(r.failures),
    meanDuration: r.mean === null ? 0 : Math.round(Number(r.mean)),
    maxDuration: r.mx === null ? 0 : Math.round(Number(r.mx)),
  });
  return {
    from,
    to,
    interval: options.interval,
    tz: options.tz,
    buckets,
    slowestTasks: slow.map(stat),
    failingTasks: failing.map(stat),
  };
}

/**
 * The trend's rows computed from the builds themselves: three statements of one search, read
 * through `read`; `check` (the guard's deadline check) goes first where builds and tasks are
 * scanned.
 */
async function directTrendRows(
  handle: DatabaseHandle,
  scope: Scope,
  from: number,
  to: number,
  periodOf: (t: RawBuilder<unknown>) => RawBuilder<number>,
  read: ReadRows,
  check: RawBuilder<SqlBool> | undefined,
): Promise<TrendRows> {
  const matched = scopedBy(handle, scope, check)({ startFrom: from, startTo: to }).select([
    'builds.seq as seq',
    'builds.buildstarttime as t',
    'builds.buildoutcome as o',
    'builds.buildduration as d',
  ]);
  // Each build's period by a balanced CASE over the period boundaries (about log2(periods)
  // comparisons a row, no join): the planners then read builds by start time and tasks by build
  // in one pass each.
  const withPeriods = sql`WITH m AS (SELECT ${periodOf(sql`x.t`)} AS i, x.seq AS seq, x.o AS o, x.d AS d FROM (${matched}) AS x)`;
  const rank = (pct: number) => sql`(${int(pct)} * c.known + 99) / 100`;
  // One sort for the percentiles: the rank of each duration in its period, against the period's
  // number of known durations from the grouped counts.
  const buildRows = await read(sql<Record<string, number | string | null>>`${withPeriods},
    c AS (SELECT i, count(*) AS builds, count(d) AS known,
      sum(CASE WHEN o = 'succeeded' THEN 1 ELSE 0 END) AS succeeded,
      sum(CASE WHEN o = 'failed' THEN 1 ELSE 0 END) AS failed FROM m GROUP BY i),
    r AS (SELECT i, d, row_number() OVER (PARTITION BY i ORDER BY d) AS rn FROM m WHERE d IS NOT NULL),
    q AS (SELECT r.i AS i, ${sql.join(PERCENTILES.map((pct) => sql`max(CASE WHEN r.rn = ${rank(pct)} THEN r.d END) AS ${sql.ref(`p${pct}`)}`))}
      FROM r JOIN c ON c.i = r.i GROUP BY r.i)
    SELECT c.i AS i, c.builds AS builds, c.succeeded AS succeeded, c.failed AS failed, q.p25 AS p25, q.p50 AS p50, q.p75 AS p75, q.p95 AS p95
    FROM c LEFT JOIN q ON q.i = c.i ORDER BY c.i`.compile(handle.db));
  const taskRows = await read(sql<Record<string, number | string | null>>`${withPeriods}
    SELECT m.i AS i, ${sql.join(TASK_COUNT_COLUMNS.map((c) => sql`sum(k.${sql.ref(c)}) AS ${sql.ref(c)}`))}
    FROM m JOIN build_task_counts AS k ON k.seq = m.seq GROUP BY m.i`.compile(handle.db));
  // Every task path's runs, failures, mean and longest duration; the two top-ten lists are cut
  // from it (a grouped result: as many rows as distinct task paths). Whether the tasks are read
  // in path order or looked up by build is the dialect's hint (taskPathOrder).
  const matchedBuilds = buildRows.reduce((n, r) => n + Number(r['builds']), 0);
  const pathOrder = await dialectOf(handle.dialect).taskPathOrder(handle.db, matchedBuilds);
  // Grouped by the path's id (the order of build_tasks_path), the text joined to each group
  // afterwards; outcomes by their codes (store migration 0012).
  const ran = sql.raw(`t.outcome IN ${RAN_OUTCOME_CODES}`);
  // In path order every task row of the store may be read: the deadline check goes first here too.
  const inMatched = check === undefined ? sql`t.seq IN (SELECT seq FROM m)` : sql`${check} AND t.seq IN (SELECT seq FROM m)`;
  const pathRows = await read(sql<{ path: string; runs: number | string; failures: number | string; mean: number | string | null; mx: number | string | null }>`${withPeriods}
    SELECT p.path AS path, g.runs AS runs, g.failures AS failures, g.mean AS mean, g.mx AS mx
    FROM (SELECT t.path_id AS path_id,
        sum(CASE WHEN ${ran} THEN 1 ELSE 0 END) AS runs,
        sum(CASE WHEN t.outcome = ${sql.lit(TASK_OUTCOME_CODES.failed)} THEN 1 ELSE 0 END) AS failures,
        avg(CASE WHEN ${ran} THEN t.duration_ms END) AS mean,
        max(CASE WHEN ${ran} THEN t.duration_ms END) AS mx
      FROM build_tasks AS t ${pathOrder}
      WHERE ${inMatched}
      GROUP BY t.path_id) AS g
    JOIN task_paths AS p ON p.id = g.path_id`.compile(handle.db));
  const periods = new Map<number, PeriodRow>();
  for (const r of buildRows) {
    periods.set(Number(r['i']), {
      builds: Number(r['builds']),
      succeeded: Number(r['succeeded']),
      failed: Number(r['failed']),
      percentiles: r['p50'] !== null && r['p50'] !== undefined ? { p25: Number(r['p25']), p50: Number(r['p50']), p75: Number(r['p75']), p95: Number(r['p95']) } : null,
    });
  }
  const tasks = new Map<number, number[]>();
  for (const r of taskRows) tasks.set(Number(r['i']), TASK_COUNT_COLUMNS.map((c) => Number(r[c] ?? 0)));
  return {
    periods,
    tasks,
    paths: pathRows.map((r) => ({ path: r.path, runs: Number(r.runs), failures: Number(r.failures), mean: r.mean === null ? null : Number(r.mean), mx: r.mx === null ? null : Number(r.mx) })),
  };
}
