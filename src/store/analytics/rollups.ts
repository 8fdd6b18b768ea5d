// Rollups: per-time-unit sums over the available builds, maintained in the same transaction as
// the rows they summarise (ingest adds a batch's new builds, prune subtracts the builds it
// deletes, migration 0008 fills them for builds stored before), so that a trend over a million
// builds reads thousands of rows instead of a million. They are exact: counts and sums, never
// estimates; durations are kept as a histogram whose buckets only say where to look, and the
// exact percentile is then read from the builds themselves (rollups-query.ts). See docs/web.md.
//
// A unit is a 15-minute slot, an hour or a UTC day (`lvl` 0, 1, 2; `t` its first instant);
// build_rollups also has all-time rows (`lvl` 3) for exact counts. Every
// time zone's days and weeks (offsets are multiples of 15 minutes) are unions of slots, and most
// of a period is whole hours or whole UTC days, so a period is read at the coarsest level that
// fits it. Each row is also keyed by the build's dimension values: since migration 0013 by `kid`,
// the integer ID of the values in the dictionary `rollup_keys` (whose `k` is one text of all of
// them, because NULL is a value here and a unique key cannot hold NULLs on both databases). Before
// 0013 every row held that text and the values themselves (the frozen layout of 0009 and 0011).

import { sql, type CompiledQuery, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import type { DatabaseHandle } from '../../db/database.js';
import { dialectOf } from '../../sql/index.js';
import { valueFieldCode } from '../../sql/value-fields.js';
import { VALUES_SEQ_INDEX } from '../../sql/layout.js';
import { RAN_OUTCOME_CODES, TASK_COUNT_COLUMNS, TASK_OUTCOME_CODES } from '../events/tasks.js';
import { TEST_OUTCOME_CODES } from '../events/test-runs.js';
import { layoutOf } from '../schema/layout.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;
type Dialect = DatabaseHandle['dialect'];

export const SLOT_MS = 15 * 60_000;
const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** The units, finest first. */
export const LEVELS = [
  { lvl: 0, size: SLOT_MS },
  { lvl: 1, size: HOUR_MS },
  { lvl: 2, size: DAY_MS },
] as const;

/**
 * Columns of `builds` each rollup row is keyed by. `project_name` is there for visibility (which
 * projects a caller may see); `project` and `buildoutcome` are the columns of the catalog fields
 * whose equality terms a rollup answers. Frozen with migration 0008: another dimension needs a
 * migration (and multiplies the rows: every dimension's values multiply the keys per unit).
 * These columns, the start time and the duration are fields of 0001, so the catalog's
 * reconciliation (reconcile.ts, which fills only fields new to the database) never rewrites them
 * under the rollups.
 */
export const ROLLUP_DIMENSIONS = ['project_name', 'project', 'buildoutcome'] as const;

/** Columns of the catalog fields whose exact-value terms the rollups answer (rollups-query.ts). */
export const ROLLUP_FILTER_COLUMNS: ReadonlySet<string> = new Set(['project', 'buildoutcome']);

export const BUILD_ROLLUPS = 'build_rollups';
export const DURATION_ROLLUPS = 'build_duration_rollups';
export const TASK_ROLLUPS = 'build_task_rollups';

/** Columns of build_rollups holding the task counts, one per TASK_COUNT_COLUMNS entry. */
export const ROLLUP_TASK_COLUMNS: readonly string[] = TASK_COUNT_COLUMNS.map((c) => `tasks_${c}`);

/**
 * Upper bounds of the duration histogram's buckets (ms): 1, 2, ... then about 9% apart
 * (2^(1/8)), up past a century. Bucket 0 holds durations below 1 ms, bucket i (1..n-1) those in
 * [BOUNDS[i-1], BOUNDS[i]), bucket n those from BOUNDS[n-1] on. Frozen with migration 0008.
 */
export const DURATION_BOUNDS: readonly number[] = (() => {
  const out = [1];
  while (out[out.length - 1]! < 2 ** 42) {
    const last = out[out.length - 1]!;
    out.push(Math.max(last + 1, Math.round(last * 2 ** (1 / 8))));
  }
  return out;
})();

/** The bucket's [lo, hi) bounds; undefined for an open end. */
export function bucketBounds(bucket: number): { lo?: number; hi?: number } {
  return {
    ...(bucket > 0 ? { lo: DURATION_BOUNDS[bucket - 1]! } : {}),
    ...(bucket < DURATION_BOUNDS.length ? { hi: DURATION_BOUNDS[bucket]! } : {}),
  };
}

const lit = (n: number): RawBuilder<number> => sql.raw(String(n));

/** The bucket of duration `d` among buckets [lo, hi]: a balanced CASE (about 9 comparisons). */
function bucketCase(d: RawBuilder<unknown>, lo: number, hi: number): RawBuilder<number> {
  if (lo === hi) return lit(lo);
  const mid = (lo + hi + 1) >> 1;
  return sql<number>`CASE WHEN ${d} < ${lit(DURATION_BOUNDS[mid - 1]!)} THEN ${bucketCase(d, lo, mid - 1)} ELSE ${bucketCase(d, mid, hi)} END`;
}

/** The first instant of the unit (of `size` ms) holding instant `t`. */
export function unitExpr(dialect: Dialect, t: RawBuilder<unknown>, size: number): RawBuilder<number> {
  return dialectOf(dialect).unitStart(t, size);
}

/**
 * The UTC day number of a build's start: the first column of the index the exact percentiles are
 * read through (builds_duration_day). Must be written exactly so for the index to be used.
 */
export function dayExpr(dialect: Dialect, table?: string): RawBuilder<number> {
  const t = sql.raw(table === undefined ? 'buildstarttime' : `${table}.buildstarttime`);
  return dialectOf(dialect).utcDay(t);
}

function keyExpr(dialect: Dialect, b: string): RawBuilder<string> {
  return dialectOf(dialect).jsonArray(ROLLUP_DIMENSIONS.map((c) => sql.raw(`${b}.${c}`)));
}

const dims = (b: string) => sql.join(ROLLUP_DIMENSIONS.map((c) => sql.raw(`${b}.${c}`)));
const dimNames = sql.raw(ROLLUP_DIMENSIONS.join(', '));

/**
 * How the task rollup statements read build_tasks: as migration 0005 wrote it (`text`: path and
 * outcome as text; migration 0009 fills the rollups of an existing database from that layout) or
 * as migration 0012 keeps it (`coded`: the path by its task_paths id, the outcome by its
 * TASK_OUTCOME_CODES code).
 */
export type TaskLayout = 'text' | 'coded';

/**
 * How a task rollup row names its path: by its text (`text`, the frozen layout of 0009, which
 * only its fill writes) or by its task_paths id (`id`, migration 0025 on: task-rollup-paths.ts),
 * the task row's own `path_id`, so only the `coded` task layout has it.
 */
type RollupPaths = 'text' | 'id';

/** The path side of the task rollup statements; `t` is build_tasks' alias, `tasks` its reads. */
function rollupPaths(paths: RollupPaths, tasks: ReturnType<typeof taskReads>, layout: TaskLayout) {
  if (paths === 'text') {
    return {
      column: sql.raw('path'),
      join: tasks.join,
      value: tasks.path,
      /** Task `t` is of the path of the task rollup row. */
      ofRow: (t: string) => tasks.pathIs(t, `${TASK_ROLLUPS}.path`),
    };
  }
  if (layout !== 'coded') throw new Error('task rollups by path id read the coded task layout');
  return {
    column: sql.raw('path_id'),
    join: (t: string) => sql.raw(`JOIN build_tasks AS ${t} ON ${t}.seq = b.seq`),
    value: (t: string) => sql.raw(`${t}.path_id`),
    ofRow: (t: string) => sql.raw(`${t}.path_id = ${TASK_ROLLUPS}.path_id`),
  };
}

/** The task side of the statements for a layout; `t` is build_tasks' alias. */
function taskReads(layout: TaskLayout) {
  if (layout === 'text') {
    return {
      /** Joins the tasks of builds `b` (and whatever gives their path text). */
      join: (t: string) => sql.raw(`JOIN build_tasks AS ${t} ON ${t}.seq = b.seq`),
      path: (t: string) => sql.raw(`${t}.path`),
      ran: (t: string) => sql.raw(`${t}.outcome IN ('executed', 'failed')`),
      failed: (t: string) => sql.raw(`${t}.outcome = 'failed'`),
      /** The task's path is the text `path`. */
      pathIs: (t: string, path: string) => sql.raw(`${t}.path = ${path}`),
    };
  }
  const { failed } = TASK_OUTCOME_CODES;
  return {
    join: (t: string) => sql.raw(`JOIN build_tasks AS ${t} ON ${t}.seq = b.seq JOIN task_paths AS ${t}p ON ${t}p.id = ${t}.path_id`),
    path: (t: string) => sql.raw(`${t}p.path`),
    ran: (t: string) => sql.raw(`${t}.outcome IN ${RAN_OUTCOME_CODES}`),
    failed: (t: string) => sql.raw(`${t}.outcome = ${failed}`),
    pathIs: (t: string, path: string) => sql.raw(`${t}.path_id = (SELECT p.id FROM task_paths AS p WHERE p.path = ${path})`),
  };
}

/** The dictionary of rollup keys (migration 0013): one row per distinct dimension values. */
export const ROLLUP_KEYS = 'rollup_keys';

/**
 * How a rollup row names its dimension values, for the statements that write rollups:
 * `dictionary` (migration 0013 on) one integer `kid` of rollup_keys; `text` (the frozen layout
 * of 0009 and 0011, which only their fills write) the key text `k` and the values themselves.
 */
interface KeySide {
  /** The key's columns of a rollup table. */
  readonly columns: RawBuilder<unknown>;
  /** Their values for the builds of a group (grouped by the key text and the dimension values). */
  values(key: RawBuilder<string>, b: string): RawBuilder<unknown>;
  /** The key column(s) of the primary key after (lvl, t) or (field, value). */
  readonly conflict: string;
  /** A condition: `table`'s row is of the builds whose key text is `key`. */
  is(table: string, key: RawBuilder<string>): RawBuilder<SqlBool>;
}

const TEXT_KEYS: KeySide = {
  columns: sql`k, ${dimNames}`,
  values: (key, b) => sql`${key}, ${dims(b)}`,
  conflict: 'k',
  is: (table, key) => sql<SqlBool>`${key} = ${sql.raw(table)}.k`,
};

// One look-up of the unique key text per group (not per build): the batch's new keys are in the
// dictionary already (keyAdditions runs first).
const lookUp = (key: RawBuilder<string>) => sql`(SELECT rk.id FROM ${sql.raw(ROLLUP_KEYS)} AS rk WHERE rk.k = ${key})`;

const DICTIONARY_KEYS: KeySide = {
  columns: sql`kid`,
  values: (key) => lookUp(key),
  conflict: 'kid',
  is: (table, key) => sql<SqlBool>`${sql.raw(table)}.kid = ${lookUp(key)}`,
};

/**
 * The statement that adds the keys of the builds `selection` names that the dictionary lacks, in
 * bulk, before the rollup statements look them up. Only keys not there yet are proposed: on
 * PostgreSQL every proposed row takes an identity value even when it conflicts. ON CONFLICT all
 * the same, for a key another transaction adds meanwhile (the PostgreSQL ingest is serialised by
 * its advisory lock, but these statements do not rely on it). Subtracting needs none: the
 * builds' keys are there since they were added, and dictionary rows are never deleted.
 */
function keyAdditions(db: Db, dialect: Dialect, selection: RawBuilder<SqlBool>, sign: 1 | -1): CompiledQuery[] {
  if (sign === -1) return [];
  const key = keyExpr(dialect, 'b');
  return [
    sql`INSERT INTO ${sql.raw(ROLLUP_KEYS)} (k, ${dimNames})
      SELECT DISTINCT ${key}, ${dims('b')} FROM builds AS b
      WHERE ${selection} AND NOT EXISTS (SELECT 1 FROM ${sql.raw(ROLLUP_KEYS)} AS rk WHERE rk.k = ${key})
      ON CONFLICT (k) DO NOTHING`.compile(db),
  ];
}

/** The tables and the index of migration 0008 (frozen). */
export async function createRollupTables(db: Db, dialect: Dialect): Promise<void> {
  const big = layoutOf(dialect).int64;
  const real = layoutOf(dialect).float64;
  const rowid = layoutOf(dialect).clustered;
  const keyCols = `lvl integer NOT NULL, t ${big} NOT NULL, k text NOT NULL, ${ROLLUP_DIMENSIONS.map((c) => `${c} text`).join(', ')}`;
  await sql
    .raw(
      `CREATE TABLE ${BUILD_ROLLUPS} (${keyCols}, builds ${big} NOT NULL, known ${big} NOT NULL, ${ROLLUP_TASK_COLUMNS.map((c) => `${c} ${big} NOT NULL`).join(', ')}, PRIMARY KEY (lvl, t, k))${rowid}`,
    )
    .execute(db);
  await sql.raw(`CREATE TABLE ${DURATION_ROLLUPS} (${keyCols}, bucket integer NOT NULL, n ${big} NOT NULL, PRIMARY KEY (lvl, t, k, bucket))${rowid}`).execute(db);
  await sql
    .raw(
      `CREATE TABLE ${TASK_ROLLUPS} (${keyCols}, path text NOT NULL, runs ${big} NOT NULL, failures ${big} NOT NULL, dur_sum ${real} NOT NULL, dur_max ${real}, PRIMARY KEY (lvl, t, k, path))${rowid}`,
    )
    .execute(db);
  // The exact percentiles: the durations of one UTC day in order, with what a query on the
  // rollup dimensions and the visibility check, so a bucket's values are read from the index.
  await sql`CREATE INDEX builds_duration_day ON builds (${dayExpr(dialect)}, buildduration, buildstarttime, ${dimNames}, seq)`.execute(db);
}

/**
 * A rollup table joined with its keys' dimension values (and key text), as the FROM item named
 * `builds`: readers (rollups-query.ts) apply the visibility and the query's terms to it, the very
 * SQL of the direct path on columns of the same names and values. CROSS JOIN fixes SQLite's
 * order: the rollup rows by their primary key range, then each one's key by its rowid (the
 * dictionary holds a few hundred keys); PostgreSQL plans it as an inner join.
 */
export function rollupsAsBuilds(table: string): RawBuilder<unknown> {
  return sql`(SELECT r.*, rk.k, ${dims('rk')} FROM ${sql.raw(table)} AS r CROSS JOIN ${sql.raw(ROLLUP_KEYS)} AS rk WHERE rk.id = r.kid) AS builds`;
}

/**
 * Statements that add (sign 1) or subtract (sign -1) the builds `selection` names (a condition on
 * `b`, an alias of builds) to or from every trend rollup, the new keys to the dictionary first.
 * Subtracting runs before the builds are deleted; it also recomputes the longest task duration
 * of the rows where a subtracted task may have been the longest, and drops rows that become empty.
 */
export function rollupStatements(db: Db, dialect: Dialect, selection: RawBuilder<SqlBool>, sign: 1 | -1): CompiledQuery[] {
  return [...keyAdditions(db, dialect, selection, sign), ...trendStatements(db, dialect, selection, sign, DICTIONARY_KEYS, 'coded', 'id')];
}

/**
 * The trend rollup statements of the frozen layout of migration 0009 (key text and dimension
 * columns), reading build_tasks in `layout`: 0009's fill reads them as 0005 wrote them (`text`;
 * 0012 and 0013 convert later); tests rebuild that layout over today's task rows (`coded`).
 */
export function textKeyedRollupStatements(db: Db, dialect: Dialect, selection: RawBuilder<SqlBool>, sign: 1 | -1, layout: TaskLayout): CompiledQuery[] {
  return trendStatements(db, dialect, selection, sign, TEXT_KEYS, layout, 'text');
}

function trendStatements(db: Db, dialect: Dialect, selection: RawBuilder<SqlBool>, sign: 1 | -1, keys: KeySide, layout: TaskLayout, pathsAs: RollupPaths): CompiledQuery[] {
  const out: CompiledQuery[] = [];
  const tasks = taskReads(layout);
  const paths = rollupPaths(pathsAs, tasks, layout);
  const s = lit(sign);
  const start = sql.raw('b.buildstarttime');
  const key = keyExpr(dialect, 'b');
  for (const { lvl, size } of LEVELS) {
    const unit = unitExpr(dialect, start, size);
    const L = lit(lvl);
    out.push(buildRollupUpsert(db, keys, L, unit, key, selection, sql`AND b.buildstarttime IS NOT NULL`, s));
    const bucket = bucketCase(sql.raw('b.buildduration'), 0, DURATION_BOUNDS.length);
    out.push(
      sql`INSERT INTO ${sql.raw(DURATION_ROLLUPS)} (lvl, t, ${keys.columns}, bucket, n)
        SELECT ${L}, ${unit}, ${keys.values(key, 'b')}, ${bucket}, ${s} * count(*)
        FROM builds AS b
        WHERE ${selection} AND b.buildstarttime IS NOT NULL AND b.buildduration IS NOT NULL
        GROUP BY ${unit}, ${key}, ${dims('b')}, ${bucket}
        ON CONFLICT (lvl, t, ${sql.raw(keys.conflict)}, bucket) DO UPDATE SET n = ${sql.raw(DURATION_ROLLUPS)}.n + excluded.n`.compile(db),
    );
    const maxSet = sign === 1 ? sql`, dur_max = ${dialectOf(dialect).greatest(sql.raw(`${TASK_ROLLUPS}.dur_max`), sql.raw('excluded.dur_max'))}` : sql.raw('');
    out.push(
      sql`INSERT INTO ${sql.raw(TASK_ROLLUPS)} (lvl, t, ${keys.columns}, ${paths.column}, runs, failures, dur_sum, dur_max)
        SELECT ${L}, ${unit}, ${keys.values(key, 'b')}, ${paths.value('tk')}, ${s} * count(*), ${s} * sum(CASE WHEN ${tasks.failed('tk')} THEN 1 ELSE 0 END),
          ${s} * sum(tk.duration_ms), max(tk.duration_ms)
        FROM builds AS b ${paths.join('tk')}
        WHERE ${selection} AND b.buildstarttime IS NOT NULL AND ${tasks.ran('tk')}
        GROUP BY ${unit}, ${key}, ${dims('b')}, ${paths.value('tk')}
        ON CONFLICT (lvl, t, ${sql.raw(keys.conflict)}, ${paths.column}) DO UPDATE SET runs = ${sql.raw(TASK_ROLLUPS)}.runs + excluded.runs,
          failures = ${sql.raw(TASK_ROLLUPS)}.failures + excluded.failures, dur_sum = ${sql.raw(TASK_ROLLUPS)}.dur_sum + excluded.dur_sum${maxSet}`.compile(db),
    );
    if (sign === -1) {
      const units = sql`SELECT ${unit} FROM builds AS b WHERE ${selection} AND b.buildstarttime IS NOT NULL`;
      out.push(sql`DELETE FROM ${sql.raw(BUILD_ROLLUPS)} WHERE lvl = ${L} AND t IN (${units}) AND builds = 0`.compile(db));
      out.push(sql`DELETE FROM ${sql.raw(DURATION_ROLLUPS)} WHERE lvl = ${L} AND t IN (${units}) AND n = 0`.compile(db));
      out.push(sql`DELETE FROM ${sql.raw(TASK_ROLLUPS)} WHERE lvl = ${L} AND t IN (${units}) AND runs = 0`.compile(db));
      // After the subtraction, with the builds still there: rows that keep runs but whose
      // longest run was one of the builds leaving get the longest run of the builds that stay.
      // CROSS JOIN: SQLite reads the unit's builds by start time first (builds_trend), then
      // their tasks, instead of every task of the path; PostgreSQL plans it as an inner join.
      out.push(
        sql`UPDATE ${sql.raw(TASK_ROLLUPS)} SET dur_max = (
            SELECT max(x.duration_ms) FROM builds AS o CROSS JOIN build_tasks AS x
            WHERE x.seq = o.seq AND o.buildstarttime >= ${sql.raw(TASK_ROLLUPS)}.t AND o.buildstarttime < ${sql.raw(TASK_ROLLUPS)}.t + ${lit(size)} AND o.seq IS NOT NULL
              AND ${keys.is(TASK_ROLLUPS, keyExpr(dialect, 'o'))} AND ${paths.ofRow('x')} AND ${tasks.ran('x')}
              AND o.seq NOT IN (SELECT b.seq FROM builds AS b WHERE ${selection}))
          WHERE lvl = ${L} AND t IN (SELECT ${unit} FROM builds AS b WHERE ${selection} AND b.buildstarttime IS NOT NULL)
            AND EXISTS (SELECT 1 FROM builds AS b JOIN build_tasks AS tk ON tk.seq = b.seq
              WHERE ${selection} AND b.buildstarttime IS NOT NULL AND ${unit} = ${sql.raw(TASK_ROLLUPS)}.t AND ${keys.is(TASK_ROLLUPS, key)}
                AND ${paths.ofRow('tk')} AND ${tasks.ran('tk')} AND tk.duration_ms >= ${sql.raw(TASK_ROLLUPS)}.dur_max)`.compile(db),
      );
    }
  }
  // All time (ALL_TIME, t 0): every available build, with a start time or not, for the exact
  // count of a query the rollups answer (a few rows whatever the number of builds).
  out.push(buildRollupUpsert(db, keys, lit(ALL_TIME), lit(0), key, selection, undefined, s));
  if (sign === -1) out.push(sql`DELETE FROM ${sql.raw(BUILD_ROLLUPS)} WHERE lvl = ${lit(ALL_TIME)} AND t = 0 AND builds = 0`.compile(db));
  return out;
}

/** The `lvl` of build_rollups' all-time rows. */
export const ALL_TIME = 3;

/** The build_rollups statement; `started` undefined for the all-time rows (every build, one unit). */
function buildRollupUpsert(
  db: Db,
  keys: KeySide,
  L: RawBuilder<number>,
  unit: RawBuilder<number>,
  key: RawBuilder<string>,
  selection: RawBuilder<SqlBool>,
  started: RawBuilder<unknown> | undefined,
  s: RawBuilder<number>,
): CompiledQuery {
  const taskSums = sql.join(TASK_COUNT_COLUMNS.map((c) => sql`${s} * coalesce(sum(c.${sql.raw(c)}), 0)`));
  return sql`INSERT INTO ${sql.raw(BUILD_ROLLUPS)} (lvl, t, ${keys.columns}, builds, known, ${sql.raw(ROLLUP_TASK_COLUMNS.join(', '))})
    SELECT ${L}, ${unit}, ${keys.values(key, 'b')}, ${s} * count(*), ${s} * count(b.buildduration), ${taskSums}
    FROM builds AS b LEFT JOIN build_task_counts AS c ON c.seq = b.seq
    WHERE ${selection} ${started ?? sql``}
    GROUP BY ${started === undefined ? sql`` : sql`${unit}, `}${key}, ${dims('b')}
    ON CONFLICT (lvl, t, ${sql.raw(keys.conflict)}) DO UPDATE SET builds = ${sql.raw(BUILD_ROLLUPS)}.builds + excluded.builds, known = ${sql.raw(BUILD_ROLLUPS)}.known + excluded.known,
      ${sql.join(ROLLUP_TASK_COLUMNS.map((c) => sql.raw(`${c} = ${BUILD_ROLLUPS}.${c} + excluded.${c}`)))}`.compile(db);
}

/**
 * The facet rollups (migration 0011): per rollup key, the available builds by value of the facets
 * that are not rollup dimensions: the build tool, the user and the tags (multi-valued, from
 * build_values: a build with two tags counts once under each). Outcome and project facets are
 * read from build_rollups' all-time rows, which are keyed by them already. All time only: the
 * list page's facets have no time range. See docs/web.md "Facet rollups".
 */
export const FACET_ROLLUPS = 'build_facet_rollups';

/** The facets build_facet_rollups holds (the `field` column), and where each one's values are. Frozen with migration 0011. */
export const FACET_ROLLUP_FIELDS = [
  { field: 'buildTool', column: 'tool_type' },
  { field: 'user', column: 'user' },
  { field: 'tag', values: 'tag' },
] as const;

/** The table of migration 0011 (frozen). */
export async function createFacetRollupTable(db: Db, dialect: Dialect): Promise<void> {
  const big = layoutOf(dialect).int64;
  const rowid = layoutOf(dialect).clustered;
  // (field, value, k): a facet's rows are one range, already in value order for the grouping.
  await sql
    .raw(
      `CREATE TABLE ${FACET_ROLLUPS} (field text NOT NULL, value text NOT NULL, k text NOT NULL, ${ROLLUP_DIMENSIONS.map((c) => `${c} text`).join(', ')}, n ${big} NOT NULL, PRIMARY KEY (field, value, k))${rowid}`,
    )
    .execute(db);
}

/**
 * Statements that add (sign 1) or subtract (sign -1) the builds `selection` names (a condition on
 * `b`) to or from build_facet_rollups; subtracting runs before the builds are deleted and drops
 * the rows that become empty. Exactly the rows the direct path counts (analytics.ts
 * buildFacets): non-null values of the builds' columns, and every build_values row of a tag.
 */
export function facetRollupStatements(db: Db, dialect: Dialect, selection: RawBuilder<SqlBool>, sign: 1 | -1): CompiledQuery[] {
  return [...keyAdditions(db, dialect, selection, sign), ...facetStatements(db, dialect, selection, sign, DICTIONARY_KEYS, 'coded')];
}

/**
 * facetRollupStatements over build_values as it was before store migration 0016, its field the
 * column name: for migration 0015, which recounts facet rollups before 0016 has run.
 */
export function namedFieldFacetRollupStatements(db: Db, dialect: Dialect, selection: RawBuilder<SqlBool>, sign: 1 | -1): CompiledQuery[] {
  return [...keyAdditions(db, dialect, selection, sign), ...facetStatements(db, dialect, selection, sign, DICTIONARY_KEYS, 'named')];
}

/**
 * The facet rollup statements of the frozen layout of migration 0011, for its fill: over
 * build_values as it was then (`named`) unless told otherwise.
 */
export function textKeyedFacetRollupStatements(db: Db, dialect: Dialect, selection: RawBuilder<SqlBool>, sign: 1 | -1, fields: ValueFieldLayout = 'named'): CompiledQuery[] {
  return facetStatements(db, dialect, selection, sign, TEXT_KEYS, fields);
}

/** How build_values names a row's field: by column name (before store migration 0016) or by its code. */
export type ValueFieldLayout = 'named' | 'coded';

function facetStatements(db: Db, dialect: Dialect, selection: RawBuilder<SqlBool>, sign: 1 | -1, keys: KeySide, fields: ValueFieldLayout): CompiledQuery[] {
  const s = lit(sign);
  const key = keyExpr(dialect, 'b');
  const upsert = sql.raw(`ON CONFLICT (field, value, ${keys.conflict}) DO UPDATE SET n = ${FACET_ROLLUPS}.n + excluded.n`);
  const out = FACET_ROLLUP_FIELDS.map((f) => {
    const name = sql.lit(f.field);
    if ('column' in f) {
      // Quoted: `user` is a reserved word on PostgreSQL.
      const v = sql.raw(`b."${f.column}"`);
      return sql`INSERT INTO ${sql.raw(FACET_ROLLUPS)} (field, value, ${keys.columns}, n)
        SELECT ${name}, ${v}, ${keys.values(key, 'b')}, ${s} * count(*)
        FROM builds AS b WHERE ${selection} AND ${v} IS NOT NULL
        GROUP BY ${v}, ${key}, ${dims('b')} ${upsert}`.compile(db);
    }
    // SQLite must read the selected builds by seq first (CROSS JOIN fixes the order), then their
    // values by seq (build_values_seq, of migration 0007; the hint): left to itself it read every
    // tag row of the database through the search index (field, value, seq), 500 ms for a batch
    // of 5,000 builds at 1M, and minutes a batch once the order alone was fixed. PostgreSQL
    // plans it as an inner join and needs no hint.
    return sql`INSERT INTO ${sql.raw(FACET_ROLLUPS)} (field, value, ${keys.columns}, n)
      SELECT ${name}, v.value, ${keys.values(key, 'b')}, ${s} * count(*)
      FROM builds AS b CROSS JOIN build_values AS v ${dialectOf(dialect).indexHint(VALUES_SEQ_INDEX.build_values)}
      WHERE v.seq = b.seq AND v.field = ${sql.lit(fields === 'coded' ? valueFieldCode(f.values) : f.values)} AND ${selection}
      GROUP BY v.value, ${key}, ${dims('b')} ${upsert}`.compile(db);
  });
  if (sign === -1) out.push(sql`DELETE FROM ${sql.raw(FACET_ROLLUPS)} WHERE n = 0`.compile(db));
  return out;
}

/**
 * The per-test rollups (migration 0022): for each test and rollup key (the builds' project and
 * outcome, as build_rollups), all time, the attempts that ran (passed or failed), failed and were
 * skipped, the builds that ran it, all attempts and the sum of their durations. The Tests page's
 * counts for a query the rollups answer (the empty query, exact projects and outcomes) read these
 * rows, a few per test, instead of every execution (test-analytics.ts). All time only: the Tests
 * page has no time range but its query's. Exact: sums of counts, written in the transaction that
 * writes or deletes the test rows they sum (ingest, prune, the test backfill).
 */
export const TEST_ROLLUPS = 'test_rollups';

/** Columns of test_rollups after (test_id, kid), each a sum over the builds' test rows. */
export const TEST_ROLLUP_SUMS = ['runs', 'failures', 'skipped', 'builds', 'attempts', 'duration_sum'] as const;

export async function createTestRollupTable(db: Db, dialect: Dialect): Promise<void> {
  const [int, real, tail] = dialect === 'sqlite' ? ['INTEGER', 'REAL', ' WITHOUT ROWID'] : ['bigint', 'double precision', ''];
  await sql
    .raw(
      `CREATE TABLE IF NOT EXISTS ${TEST_ROLLUPS} (test_id ${int} NOT NULL, kid ${int} NOT NULL, runs ${int} NOT NULL, failures ${int} NOT NULL, skipped ${int} NOT NULL,
        builds ${int} NOT NULL, attempts ${int} NOT NULL, duration_sum ${real} NOT NULL, PRIMARY KEY (test_id, kid))${tail}`,
    )
    .execute(db);
}

/**
 * The builds `selection` names, each with its key's dictionary ID (`k.seq`, `k.kid`), as a WITH
 * clause for statements that group many child rows per build by key. The key is looked up once a
 * build: grouped by the key's text instead, every one of 200 test rows a build would be joined to
 * its wide builds row and its text built and sorted (at 1,000 builds of 200 tests, 0.92 s against
 * 0.32 s). MATERIALIZED, or SQLite would flatten the set into the join and look the key up once a
 * row again. The keys are in the dictionary already (keyAdditions runs first).
 */
function keyedBuilds(dialect: Dialect, selection: RawBuilder<SqlBool>): RawBuilder<unknown> {
  return sql`WITH k AS MATERIALIZED (SELECT b.seq AS seq, ${lookUp(keyExpr(dialect, 'b'))} AS kid FROM builds AS b WHERE ${selection})`;
}

/** The statements that add (sign 1) or subtract (-1) the test rows of the builds `selection` names to or from test_rollups. */
function testRollupStatements(db: Db, dialect: Dialect, selection: RawBuilder<SqlBool>, sign: 1 | -1): CompiledQuery[] {
  const s = lit(sign);
  const S = lit(TEST_OUTCOME_CODES.skipped);
  const F = lit(TEST_OUTCOME_CODES.failed);
  // WHERE true: SQLite's parser needs a WHERE before an upsert's ON CONFLICT.
  const out = [
    sql`${keyedBuilds(dialect, selection)}
      INSERT INTO ${sql.raw(TEST_ROLLUPS)} (test_id, kid, ${sql.raw(TEST_ROLLUP_SUMS.join(', '))})
      SELECT r.test_id, k.kid, ${s} * sum(CASE WHEN r.outcome <> ${S} THEN 1 ELSE 0 END), ${s} * sum(CASE WHEN r.outcome = ${F} THEN 1 ELSE 0 END),
        ${s} * sum(CASE WHEN r.outcome = ${S} THEN 1 ELSE 0 END), ${s} * count(DISTINCT r.seq), ${s} * count(*), ${s} * sum(r.duration_ms)
      FROM k JOIN test_runs AS r ON r.seq = k.seq
      WHERE true
      GROUP BY r.test_id, k.kid
      ON CONFLICT (test_id, kid) DO UPDATE SET ${sql.join(TEST_ROLLUP_SUMS.map((c) => sql.raw(`${c} = ${TEST_ROLLUPS}.${c} + excluded.${c}`)))}`.compile(db),
  ];
  if (sign === -1) out.push(sql`DELETE FROM ${sql.raw(TEST_ROLLUPS)} WHERE attempts = 0`.compile(db));
  return out;
}

/**
 * The failure groups' rollups (store migration 0023), per group and rollup key (the builds'
 * project and outcome), all time, so that the Tests page's groups for a query the rollups answer
 * read a few rows per group instead of every failure:
 *
 * - FAILURE_GROUP_ROLLUPS: the builds with a failure of the group (each build has one key, so the
 *   builds of a group sum over keys), its failures (failed test attempts and the builds' own
 *   failures) and the builds' own failures alone, and the first and last start of those builds;
 * - FAILURE_GROUP_TEST_ROLLUPS: per group, key and test, the test's failed attempts of the group,
 *   so that the tests a group hit are counted as distinct tests over the keys a query selects.
 *
 * Exact, written in the transactions that write or delete the rows they sum, like the per-test
 * rollups. The first and last start are the least and greatest of the builds' starts: a build
 * leaving that held one has it recomputed from the builds that stay (as the longest task duration
 * of the trend rollups is).
 */
export const FAILURE_GROUP_ROLLUPS = 'failure_group_rollups';
export const FAILURE_GROUP_TEST_ROLLUPS = 'failure_group_test_rollups';

export async function createFailureGroupRollupTables(db: Db, dialect: Dialect): Promise<void> {
  const [int, tail] = dialect === 'sqlite' ? ['INTEGER', ' WITHOUT ROWID'] : ['bigint', ''];
  await sql
    .raw(
      `CREATE TABLE IF NOT EXISTS ${FAILURE_GROUP_ROLLUPS} (group_id ${int} NOT NULL, kid ${int} NOT NULL, builds ${int} NOT NULL, failures ${int} NOT NULL,
        own_failures ${int} NOT NULL, first_seen ${int}, last_seen ${int}, PRIMARY KEY (group_id, kid))${tail}`,
    )
    .execute(db);
  await sql
    .raw(`CREATE TABLE IF NOT EXISTS ${FAILURE_GROUP_TEST_ROLLUPS} (group_id ${int} NOT NULL, kid ${int} NOT NULL, test_id ${int} NOT NULL, failures ${int} NOT NULL, PRIMARY KEY (group_id, kid, test_id))${tail}`)
    .execute(db);
}

/** The lesser (`<`) or greater (`>`) of two nullable values, NULL only when both are (SQL's min/max of two would be NULL if one is). */
function nullSafe(op: '<' | '>', a: RawBuilder<unknown>, b: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`CASE WHEN ${a} IS NULL THEN ${b} WHEN ${b} IS NULL OR ${a} ${sql.raw(op)} ${b} THEN ${a} ELSE ${b} END`;
}

/** The statements that add (sign 1) or subtract (-1) the failures of the builds `selection` names to or from the failure groups' rollups. */
function failureGroupRollupStatements(db: Db, dialect: Dialect, selection: RawBuilder<SqlBool>, sign: 1 | -1): CompiledQuery[] {
  const key = keyExpr(dialect, 'b');
  const s = lit(sign);
  const G = sql.raw(FAILURE_GROUP_ROLLUPS);
  const T = sql.raw(FAILURE_GROUP_TEST_ROLLUPS);
  // The failures of the selection's builds: failed test attempts with a group, and the builds' own
  // failures (own = 1), each branch from the builds of the selection (a union of the two tables
  // joined to them would not be flattened: SQLite would read every failure stored).
  const rowsOf = (where: RawBuilder<SqlBool>) =>
    sql`SELECT b.seq AS seq, r.group_id AS group_id, 0 AS own, b.buildstarttime AS start, ${key} AS k
        FROM builds AS b JOIN test_runs AS r ON r.seq = b.seq WHERE ${where} AND r.group_id IS NOT NULL
      UNION ALL SELECT b.seq, x.group_id, 1, b.buildstarttime, ${key}
        FROM builds AS b JOIN build_failures AS x ON x.seq = b.seq WHERE ${where}`;
  const merge =
    sign === 1
      ? sql`, first_seen = ${nullSafe('<', sql`${G}.first_seen`, sql`excluded.first_seen`)}, last_seen = ${nullSafe('>', sql`${G}.last_seen`, sql`excluded.last_seen`)}`
      : sql``;
  const out = [
    sql`INSERT INTO ${G} (group_id, kid, builds, failures, own_failures, first_seen, last_seen)
      SELECT f.group_id, ${DICTIONARY_KEYS.values(sql.raw('f.k'), 'f')}, ${s} * count(DISTINCT f.seq), ${s} * count(*), ${s} * sum(f.own), min(f.start), max(f.start)
      FROM (${rowsOf(selection)}) AS f
      GROUP BY f.group_id, f.k
      ON CONFLICT (group_id, kid) DO UPDATE SET builds = ${G}.builds + excluded.builds, failures = ${G}.failures + excluded.failures,
        own_failures = ${G}.own_failures + excluded.own_failures${merge}`.compile(db),
    sql`${keyedBuilds(dialect, selection)}
      INSERT INTO ${T} (group_id, kid, test_id, failures)
      SELECT r.group_id, k.kid, r.test_id, ${s} * count(*)
      FROM k JOIN test_runs AS r ON r.seq = k.seq
      WHERE r.group_id IS NOT NULL
      GROUP BY r.group_id, k.kid, r.test_id
      ON CONFLICT (group_id, kid, test_id) DO UPDATE SET failures = ${T}.failures + excluded.failures`.compile(db),
  ];
  if (sign === -1) {
    out.push(sql`DELETE FROM ${G} WHERE builds = 0`.compile(db));
    out.push(sql`DELETE FROM ${T} WHERE failures = 0`.compile(db));
    // With the builds still there: a row whose first or last start was a leaving build's gets
    // those of the group's builds of its key that stay.
    const staying = (fn: 'min' | 'max') =>
      sql`(SELECT ${sql.raw(fn)}(o.buildstarttime) FROM (SELECT t.seq AS seq FROM test_runs AS t WHERE t.group_id = ${G}.group_id
            UNION ALL SELECT x.seq FROM build_failures AS x WHERE x.group_id = ${G}.group_id) AS m
          JOIN builds AS o ON o.seq = m.seq
          WHERE ${DICTIONARY_KEYS.is(FAILURE_GROUP_ROLLUPS, keyExpr(dialect, 'o'))} AND o.seq NOT IN (SELECT b.seq FROM builds AS b WHERE ${selection}))`;
    out.push(
      sql`UPDATE ${G} SET first_seen = ${staying('min')}, last_seen = ${staying('max')}
        WHERE EXISTS (SELECT 1 FROM (${rowsOf(selection)}) AS f
          WHERE f.group_id = ${G}.group_id AND ${DICTIONARY_KEYS.is(FAILURE_GROUP_ROLLUPS, sql.raw('f.k'))} AND (f.start = ${G}.first_seen OR f.start = ${G}.last_seen))`.compile(db),
    );
  }
  return out;
}

/** The statements that add the builds `selection` names to test_rollups, their keys first: migration 0022's fill. */
export function testRollupAdditions(db: Db, dialect: Dialect, selection: RawBuilder<SqlBool>): CompiledQuery[] {
  return [...keyAdditions(db, dialect, selection, 1), ...testRollupStatements(db, dialect, selection, 1)];
}

/** The same for the failure groups' rollups: migration 0023's fill. */
export function failureGroupRollupAdditions(db: Db, dialect: Dialect, selection: RawBuilder<SqlBool>): CompiledQuery[] {
  return [...keyAdditions(db, dialect, selection, 1), ...failureGroupRollupStatements(db, dialect, selection, 1)];
}

/** Both, for the builds whose test rows the test backfill writes (test-backfill.ts). */
export function testDimensionRollupAdditions(db: Db, dialect: Dialect, selection: RawBuilder<SqlBool>): CompiledQuery[] {
  return [...keyAdditions(db, dialect, selection, 1), ...testRollupStatements(db, dialect, selection, 1), ...failureGroupRollupStatements(db, dialect, selection, 1)];
}

/**
 * Every rollup statement the ingest and prune run: the trend rollups', the facet rollups' and the
 * test rollups'. `tests: false` leaves out the per-test rollups' statement, whose sums the SQLite
 * ingest adds from the part's rows in memory (test-rollup-sums.ts).
 */
function allRollupStatements(db: Db, dialect: Dialect, selection: RawBuilder<SqlBool>, sign: 1 | -1, tests = true): CompiledQuery[] {
  return [
    ...keyAdditions(db, dialect, selection, sign),
    ...trendStatements(db, dialect, selection, sign, DICTIONARY_KEYS, 'coded', 'id'),
    ...facetStatements(db, dialect, selection, sign, DICTIONARY_KEYS, 'coded'),
    ...(tests ? testRollupStatements(db, dialect, selection, sign) : []),
    ...failureGroupRollupStatements(db, dialect, selection, sign),
  ];
}

/**
 * SQLite: the rollup key id of each build with a seq in (after, last], as [seq, kid] rows (the
 * keys are added first: addIngestedToRollups). What keyedBuilds selects, for the ingest's sums.
 */
export function rollupKeyIds(handle: DatabaseHandle, after: number, last: number): (readonly [seq: number, kid: number])[] {
  const sqlite = handle.sqlite!;
  // Prepared once per connection, like the ingest's rollup statements (an ingest writer is made per call).
  let st = keyIdStatements.get(sqlite);
  if (st === undefined) {
    const q = sql`SELECT b.seq, ${lookUp(keyExpr(handle.dialect, 'b'))} FROM builds AS b WHERE b.seq > ${-1} AND b.seq <= ${-2}`.compile(handle.db);
    if (q.parameters.length !== 2) throw new Error(`rollup key statement with parameters ${JSON.stringify(q.parameters)}`);
    st = sqlite.prepare(q.sql).raw();
    keyIdStatements.set(sqlite, st);
  }
  return st.all(after, last) as [number, number][];
}

const keyIdStatements = new WeakMap<object, { all(...params: unknown[]): unknown[] }>();

/** Builds with a seq in (after, last]: the builds an ingest batch made available. */
export const seqRange = (after: number, last: number): RawBuilder<SqlBool> => sql<SqlBool>`b.seq > ${after} AND b.seq <= ${last}`;

/** Statements that subtract the builds with these seqs (prune.ts, before it deletes them). */
export function rollupRemovals(db: Db, dialect: Dialect, seqs: readonly number[]): CompiledQuery[] {
  if (seqs.length === 0) return [];
  return allRollupStatements(db, dialect, sql<SqlBool>`b.seq IN (${sql.join(seqs)})`, -1);
}

const sqliteStatements = new WeakMap<object, RangedStatement[]>();

/** A prepared statement of a range of seqs (prepareRanged). */
export interface RangedStatement {
  readonly sql: string;
  run(after: number, last: number): void;
}

/**
 * The ingest's one call (SQLite, inside its synchronous transaction, after the batch's rows are
 * written): adds the builds that became available in the batch, seqs (after, last], to every
 * rollup but the per-test ones, which the ingest adds from its rows (test-rollup-sums.ts).
 */
export function addIngestedToRollups(handle: DatabaseHandle, after: number, last: number): void {
  if (last <= after) return;
  const sqlite = handle.sqlite!;
  let prepared = sqliteStatements.get(sqlite);
  if (prepared === undefined) {
    prepared = prepareRanged(sqlite, (selection) => allRollupStatements(handle.db, handle.dialect, selection, 1, false));
    sqliteStatements.set(sqlite, prepared);
  }
  for (const st of prepared) st.run(after, last);
}

/**
 * SQLite statements of a range of seqs (after, last], prepared once: `statements` of `seqRange`,
 * whose only parameters are the range's bounds, once or more in each statement.
 */
export function prepareRanged(sqlite: NonNullable<DatabaseHandle['sqlite']>, statements: (selection: RawBuilder<SqlBool>) => CompiledQuery[]): RangedStatement[] {
  // Bounds no range has, to tell the parameters that are the range's from any other.
  const [A, L] = [-1, -2];
  return statements(seqRange(A, L)).map((q) => {
    const n = q.parameters.length;
    if (n === 0 || n % 2 !== 0 || q.parameters.some((p, i) => p !== (i % 2 === 0 ? A : L))) throw new Error(`rollup statement with parameters ${JSON.stringify(q.parameters)}`);
    const st = sqlite.prepare(q.sql);
    return { sql: q.sql, run: (a: number, l: number) => void st.run(...Array.from({ length: n }, (_, i) => (i % 2 === 0 ? a : l))) };
  });
}

/** The same on PostgreSQL, inside the ingest's transaction. */
export async function addIngestedToRollupsAsync(trx: Db, dialect: Dialect, after: number, last: number): Promise<void> {
  if (last <= after) return;
  for (const q of allRollupStatements(trx, dialect, seqRange(after, last), 1)) await trx.executeQuery(q);
}

/** Builds per batch when migration 0008 fills the rollups of an existing database. */
export const BACKFILL_BATCH = 20_000;

/**
 * Fills rollups from every available build, in batches of seqs, reporting progress: the trend
 * rollups (migration 0009) or, given facetRollupStatements, the facet rollups (0011).
 */
export async function backfillRollups(
  db: Db,
  dialect: Dialect,
  progress: (done: number, total: number) => void,
  statements: typeof rollupStatements,
): Promise<void> {
  const row = (await sql<{ lo: number | string | null; hi: number | string | null; n: number | string }>`SELECT min(seq) AS lo, max(seq) AS hi, count(seq) AS n FROM builds`.execute(db)).rows[0];
  if (row === undefined || row.lo === null || row.hi === null) return;
  const total = Number(row.n);
  const hi = Number(row.hi);
  let done = 0;
  for (let after = Number(row.lo) - 1; after < hi; after += BACKFILL_BATCH) {
    const last = Math.min(after + BACKFILL_BATCH, hi);
    for (const q of statements(db, dialect, seqRange(after, last), 1)) await db.executeQuery(q);
    done += Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM builds WHERE seq > ${after} AND seq <= ${last}`.execute(db)).rows[0]!.n);
    progress(done, total);
    // A turn of the event loop: SQLite's statements are synchronous, and the log is written
    // asynchronously; without it every progress line would appear at the end.
    await new Promise((r) => setImmediate(r));
  }
}
