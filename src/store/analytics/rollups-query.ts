// Trends read from the rollups (rollups.ts) instead of the builds: for a query that is the empty
// query or a conjunction of exact-value terms on rollup dimensions, over periods whose bounds are
// multiples of 15 minutes. The answers are those of the direct path (analytics.ts) exactly:
// sums of the same counts, and percentiles read from the builds once the histogram has said in
// which bucket, and at which rank inside it, each one lies.

import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { CheckedExpr } from '../../query/checked.js';
import { compileQuery, dialectOf } from '../../sql/index.js';
import type { DatabaseHandle } from '../../db/database.js';
import { PERCENTILES } from './duration-percentiles.js';
import { TASK_COUNT_COLUMNS } from '../events/tasks.js';
import { ALL_TIME, BUILD_ROLLUPS, bucketBounds, DAY_MS, dayExpr, DURATION_ROLLUPS, FACET_ROLLUPS, FACET_ROLLUP_FIELDS, LEVELS, ROLLUP_FILTER_COLUMNS, ROLLUP_TASK_COLUMNS, rollupsAsBuilds, SLOT_MS, TASK_ROLLUPS } from './rollups.js';

/** What the direct path computes per period, and per task path over the whole range. */
export interface PeriodRow {
  builds: number;
  succeeded: number;
  failed: number;
  percentiles: { p25: number; p50: number; p75: number; p95: number } | null;
}
export interface PathRow {
  path: string;
  runs: number;
  failures: number;
  mean: number | null;
  mx: number | null;
}
export interface TrendRows {
  readonly periods: Map<number, PeriodRow>;
  readonly tasks: Map<number, number[]>;
  readonly paths: PathRow[];
}

interface Period {
  readonly start: number;
  readonly end: number;
}

/** Whether `expr` is the empty query or a conjunction of exact values of rollup dimensions. */
export function rollupEligible(expr: CheckedExpr | undefined): boolean {
  if (expr === undefined || expr.kind === 'all') return true;
  const terms = expr.kind === 'and' ? expr.operands : [expr];
  return terms.every(
    (t) =>
      t.kind === 'term' &&
      !t.field.multi &&
      t.field.type === 'string' &&
      ROLLUP_FILTER_COLUMNS.has(t.field.column) &&
      t.predicate.kind === 'pattern' &&
      t.predicate.pattern.segments.length === 1,
  );
}

interface Range {
  readonly lvl: number;
  readonly from: number;
  readonly to: number;
}

/**
 * The units covering [start, end), coarsest first where whole ones fit, as ranges of unit starts
 * per level; undefined when the bounds are not multiples of a slot.
 */
function cover(start: number, end: number, out: Range[], level = LEVELS.length - 1): boolean {
  if (start >= end) return true;
  const { lvl, size } = LEVELS[level]!;
  const a = Math.ceil(start / size) * size;
  const b = Math.floor(end / size) * size;
  if (level === 0) {
    if (a !== start || b !== end) return false;
    out.push({ lvl, from: a, to: b });
    return true;
  }
  if (a >= b) return cover(start, end, out, level - 1);
  out.push({ lvl, from: a, to: b });
  return cover(start, a, out, level - 1) && cover(b, end, out, level - 1);
}

/** The ranges of units covering the periods, contiguous ones of a level merged. */
export function coverPeriods(periods: readonly Period[]): Range[] | undefined {
  const all: Range[] = [];
  for (const p of periods) {
    if (p.start % SLOT_MS !== 0 || p.end % SLOT_MS !== 0) return undefined;
    if (!cover(p.start, p.end, all)) return undefined;
  }
  all.sort((x, y) => x.lvl - y.lvl || x.from - y.from);
  const merged: Range[] = [];
  for (const r of all) {
    const last = merged[merged.length - 1];
    if (last !== undefined && last.lvl === r.lvl && last.to === r.from) merged[merged.length - 1] = { ...last, to: r.to };
    else merged.push(r);
  }
  return merged;
}

const int = (n: number): RawBuilder<number> => sql.raw(String(Math.trunc(n)));

/**
 * The trend's rows from the rollups, or undefined when the scope or the periods are not ones the
 * rollups answer (the caller then takes the direct path).
 */
export async function trendRowsFromRollups(
  handle: DatabaseHandle,
  query: CheckedExpr | undefined,
  visibility: RawBuilder<SqlBool>,
  periods: readonly Period[],
  periodOf: (t: RawBuilder<unknown>) => RawBuilder<number>,
): Promise<TrendRows | undefined> {
  if (!rollupEligible(query)) return undefined;
  const ranges = coverPeriods(periods);
  if (ranges === undefined) return undefined;
  // The rollup tables are read under the name `builds`, joined with their keys' dimension values
  // (rollupsAsBuilds): the visibility and the query's terms are then the very conditions the
  // direct path uses, on columns of the same names and values.
  const filter = query === undefined || query.kind === 'all' ? sql<SqlBool>`1 = 1` : (compileQuery(query, handle.dialect) as unknown as RawBuilder<SqlBool>);
  const where = (r: Range) => sql`builds.lvl = ${int(r.lvl)} AND builds.t >= ${int(r.from)} AND builds.t < ${int(r.to)} AND ${visibility} AND ${filter as Expression<SqlBool>}`;
  const t = sql.raw('builds.t');
  const num = (v: unknown): number => Number(v ?? 0);

  const periodRows = new Map<number, PeriodRow & { known: number }>();
  const tasks = new Map<number, number[]>();
  const hist = new Map<number, Map<number, number>>();
  const paths = new Map<string, { runs: number; failures: number; sum: number; max: number | null }>();
  for (const r of ranges) {
    const rows = await sql<Record<string, unknown>>`SELECT ${periodOf(t)} AS i, sum(builds) AS builds, sum(known) AS known,
        sum(CASE WHEN buildoutcome = 'succeeded' THEN builds ELSE 0 END) AS succeeded, sum(CASE WHEN buildoutcome = 'failed' THEN builds ELSE 0 END) AS failed,
        ${sql.join(ROLLUP_TASK_COLUMNS.map((c, k) => sql`sum(${sql.ref(c)}) AS ${sql.ref(`c${k}`)}`))}
      FROM ${rollupsAsBuilds(BUILD_ROLLUPS)} WHERE ${where(r)} GROUP BY 1`.execute(handle.db);
    for (const row of rows.rows) {
      const i = num(row['i']);
      const p = periodRows.get(i) ?? { builds: 0, succeeded: 0, failed: 0, known: 0, percentiles: null };
      p.builds += num(row['builds']);
      p.succeeded += num(row['succeeded']);
      p.failed += num(row['failed']);
      p.known += num(row['known']);
      periodRows.set(i, p);
      const c = tasks.get(i) ?? TASK_COUNT_COLUMNS.map(() => 0);
      TASK_COUNT_COLUMNS.forEach((_, k) => (c[k]! += num(row[`c${k}`])));
      tasks.set(i, c);
    }
    const buckets = await sql<{ i: unknown; bucket: unknown; n: unknown }>`SELECT ${periodOf(t)} AS i, bucket, sum(n) AS n
      FROM ${rollupsAsBuilds(DURATION_ROLLUPS)} WHERE ${where(r)} GROUP BY 1, 2`.execute(handle.db);
    for (const row of buckets.rows) {
      const i = num(row.i);
      const h = hist.get(i) ?? new Map<number, number>();
      h.set(num(row.bucket), (h.get(num(row.bucket)) ?? 0) + num(row.n));
      hist.set(i, h);
    }
    // Rows name their path by its id (store migration 0025): grouped by it, with its text, which
    // the id determines (task_paths' primary key).
    const tasksByPath = await sql<{ path: string; runs: unknown; failures: unknown; total: unknown; mx: unknown }>`SELECT p.path, sum(runs) AS runs,
        sum(failures) AS failures, sum(dur_sum) AS total, max(dur_max) AS mx
      FROM ${rollupsAsBuilds(TASK_ROLLUPS)} JOIN task_paths AS p ON p.id = builds.path_id WHERE ${where(r)} GROUP BY p.id`.execute(handle.db);
    for (const row of tasksByPath.rows) {
      const s = paths.get(row.path) ?? { runs: 0, failures: 0, sum: 0, max: null };
      s.runs += num(row.runs);
      s.failures += num(row.failures);
      s.sum += num(row.total);
      if (row.mx !== null) s.max = s.max === null ? num(row.mx) : Math.max(s.max, num(row.mx));
      paths.set(row.path, s);
    }
  }

  // Percentiles: the bucket holding each rank from the histogram, then the value at that rank
  // inside the bucket from the builds of the period (index builds_duration_day: the period's
  // UTC days, durations in order).
  const indexed = dialectOf(handle.dialect).indexHint('builds_duration_day');
  const day = dayExpr(handle.dialect, 'builds');
  for (const [i, p] of periodRows) {
    const h = hist.get(i);
    if (h === undefined || p.known === 0) continue;
    const period = periods[i]!;
    const order = [...h.keys()].sort((a, b) => a - b);
    const wanted = new Map<number, { pct: (typeof PERCENTILES)[number]; offset: number }[]>();
    for (const pct of PERCENTILES) {
      const rank = Math.floor((pct * p.known + 99) / 100);
      let below = 0;
      for (const b of order) {
        const n = h.get(b)!;
        if (below + n >= rank) {
          const list = wanted.get(b) ?? [];
          list.push({ pct, offset: rank - below - 1 });
          wanted.set(b, list);
          break;
        }
        below += n;
      }
    }
    const days: number[] = [];
    for (let d = Math.floor(period.start / DAY_MS); d <= Math.floor((period.end - 1) / DAY_MS); d++) days.push(d);
    const values: Partial<Record<(typeof PERCENTILES)[number], number>> = {};
    for (const [b, list] of wanted) {
      const { lo, hi } = bucketBounds(b);
      const first = Math.min(...list.map((x) => x.offset));
      const last = Math.max(...list.map((x) => x.offset));
      const rows = await sql<{ d: unknown }>`SELECT builds.buildduration AS d FROM builds ${indexed}
        WHERE ${day} IN (${sql.join(days.map(int))})
          ${lo !== undefined ? sql`AND builds.buildduration >= ${lo}` : sql``} ${hi !== undefined ? sql`AND builds.buildduration < ${hi}` : sql`AND builds.buildduration IS NOT NULL`}
          AND builds.buildstarttime >= ${int(period.start)} AND builds.buildstarttime < ${int(period.end)} AND builds.seq IS NOT NULL
          AND ${visibility} AND ${filter as Expression<SqlBool>}
        ORDER BY builds.buildduration LIMIT ${int(last - first + 1)} OFFSET ${int(first)}`.execute(handle.db);
      for (const x of list) {
        const v = rows.rows[x.offset - first];
        // The histogram and the builds disagree only if the rollups are wrong: say so loudly.
        if (v === undefined) throw new Error(`trend rollups out of step with the builds (period ${period.start}, bucket ${b})`);
        values[x.pct] = num(v.d);
      }
    }
    p.percentiles = { p25: values[25]!, p50: values[50]!, p75: values[75]!, p95: values[95]! };
  }

  return {
    periods: periodRows,
    tasks,
    paths: [...paths].map(([path, s]) => ({ path, runs: s.runs, failures: s.failures, mean: s.runs > 0 ? s.sum / s.runs : null, mx: s.max })),
  };
}

/**
 * The exact number of available builds a query matches, from the all-time rollup rows, or
 * undefined when the query is not one the rollups answer.
 */
export async function countFromRollups(handle: DatabaseHandle, query: CheckedExpr | undefined, visibility: RawBuilder<SqlBool>): Promise<number | undefined> {
  if (!rollupEligible(query)) return undefined;
  const filter = query === undefined || query.kind === 'all' ? sql<SqlBool>`1 = 1` : (compileQuery(query, handle.dialect) as unknown as RawBuilder<SqlBool>);
  const row = await sql<{ n: unknown }>`SELECT coalesce(sum(builds), 0) AS n FROM ${rollupsAsBuilds(BUILD_ROLLUPS)}
    WHERE builds.lvl = ${int(ALL_TIME)} AND builds.t = 0 AND ${visibility} AND ${filter as Expression<SqlBool>}`.execute(handle.db);
  return Number(row.rows[0]?.n ?? 0);
}

/** One facet's values from the rollups, most frequent first, ties by value: the direct path's order. */
export interface FacetRow {
  readonly value: string;
  readonly n: unknown;
}

/**
 * The facets of the builds a query matches, from the rollups, or undefined when the query is not
 * one the rollups answer. Outcome and project from build_rollups' all-time rows (keyed by them),
 * the others from build_facet_rollups; each read under the name `builds`, so the visibility and
 * the query are the direct path's conditions. Grouped, ordered and cut in SQL, as the direct path
 * is, so ties fall in the same (collation) order on either database.
 */
export async function facetsFromRollups(
  handle: DatabaseHandle,
  query: CheckedExpr | undefined,
  visibility: RawBuilder<SqlBool>,
  limit: number,
): Promise<Record<'buildOutcome' | 'project' | (typeof FACET_ROLLUP_FIELDS)[number]['field'], FacetRow[]> | undefined> {
  if (!rollupEligible(query)) return undefined;
  const filter = query === undefined || query.kind === 'all' ? sql<SqlBool>`1 = 1` : (compileQuery(query, handle.dialect) as unknown as RawBuilder<SqlBool>);
  const top = sql`ORDER BY n DESC, value LIMIT ${int(limit)}`;
  const allTime = (column: 'buildoutcome' | 'project_name') =>
    sql<FacetRow>`SELECT builds.${sql.raw(column)} AS value, sum(builds.builds) AS n FROM ${rollupsAsBuilds(BUILD_ROLLUPS)}
      WHERE builds.lvl = ${int(ALL_TIME)} AND builds.t = 0 AND builds.${sql.raw(column)} IS NOT NULL AND ${visibility} AND ${filter as Expression<SqlBool>}
      GROUP BY builds.${sql.raw(column)} ${top}`.execute(handle.db);
  const facet = (field: string) =>
    sql<FacetRow>`SELECT builds.value AS value, sum(builds.n) AS n FROM ${rollupsAsBuilds(FACET_ROLLUPS)}
      WHERE builds.field = ${sql.lit(field)} AND ${visibility} AND ${filter as Expression<SqlBool>}
      GROUP BY builds.value ${top}`.execute(handle.db);
  const [buildOutcome, project, buildTool, user, tag] = await Promise.all([allTime('buildoutcome'), allTime('project_name'), facet('buildTool'), facet('user'), facet('tag')]);
  return { buildOutcome: buildOutcome.rows, project: project.rows, buildTool: buildTool.rows, user: user.rows, tag: tag.rows };
}
