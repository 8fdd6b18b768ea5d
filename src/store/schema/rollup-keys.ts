// Migration 0013: the rollup tables keyed by an integer key ID. Before it every rollup row held its
// key as JSON text (`k`, ~40 bytes) and the dimension values again (`project_name`, `project`,
// `buildoutcome`): most of a task rollup row's ~120 bytes. Now the distinct keys are stored once,
// in `rollup_keys`, and every rollup row names its key by `kid`. The tables are converted in
// batches of rows (a range of the old primary key each), with progress, never read into memory.
// See docs/store.md "Rollup keys".

import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import type { DatabaseHandle } from '../../db/database.js';
import { BUILD_ROLLUPS, DURATION_ROLLUPS, FACET_ROLLUPS, ROLLUP_DIMENSIONS, ROLLUP_KEYS, ROLLUP_TASK_COLUMNS, TASK_ROLLUPS } from '../analytics/rollups.js';
import { layoutOf } from './layout.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;
type Dialect = DatabaseHandle['dialect'];

/** Rows of an old rollup table per batch of the conversion (at least; a batch ends at a whole range value). */
export const ROLLUP_KEYS_BATCH = 50_000;

interface Table {
  readonly name: string;
  /** The primary key's leading column (few values) and the next one (the range a batch covers). */
  readonly outer: 'lvl' | 'field';
  readonly inner: 't' | 'value';
  /** The columns of the key after `kid`, and the other columns, as they are. */
  readonly after: readonly string[];
  readonly rest: readonly string[];
  /** The column definitions of the 0013 table, without the key columns. */
  columns(big: string, real: string): string;
}

const TABLES: readonly Table[] = [
  {
    name: BUILD_ROLLUPS,
    outer: 'lvl',
    inner: 't',
    after: [],
    rest: ['builds', 'known', ...ROLLUP_TASK_COLUMNS],
    columns: (big) => `builds ${big} NOT NULL, known ${big} NOT NULL, ${ROLLUP_TASK_COLUMNS.map((c) => `${c} ${big} NOT NULL`).join(', ')}`,
  },
  { name: DURATION_ROLLUPS, outer: 'lvl', inner: 't', after: ['bucket'], rest: ['n'], columns: (big) => `bucket integer NOT NULL, n ${big} NOT NULL` },
  {
    name: TASK_ROLLUPS,
    outer: 'lvl',
    inner: 't',
    after: ['path'],
    rest: ['runs', 'failures', 'dur_sum', 'dur_max'],
    columns: (big, real) => `path text NOT NULL, runs ${big} NOT NULL, failures ${big} NOT NULL, dur_sum ${real} NOT NULL, dur_max ${real}`,
  },
  { name: FACET_ROLLUPS, outer: 'field', inner: 'value', after: [], rest: ['n'], columns: (big) => `n ${big} NOT NULL` },
];

const NEW = (t: Table) => `${t.name}_0013`;

/**
 * Migration 0013 (frozen): creates `rollup_keys`, converts the four rollup tables of 0009 and 0011
 * to the layout keyed by `(lvl, t, kid, ...)` / `(field, value, kid)`, in batches, reporting the
 * rows converted of each table after every batch.
 */
export async function migrateRollupKeys(
  db: Db,
  dialect: Dialect,
  progress: (table: string, done: number, total: number) => void,
  batchRows = ROLLUP_KEYS_BATCH,
): Promise<void> {
  const big = layoutOf(dialect).int64;
  const real = layoutOf(dialect).float64;
  const rowid = layoutOf(dialect).clustered;
  // SQLite: `id` is the rowid. PostgreSQL: an identity; bigint, as values skipped by conflicts
  // are never reused.
  const id = layoutOf(dialect).numberedId;
  await sql.raw(`CREATE TABLE ${ROLLUP_KEYS} (${id}, k text NOT NULL UNIQUE, ${ROLLUP_DIMENSIONS.map((c) => `${c} text`).join(', ')})`).execute(db);
  const dimNames = ROLLUP_DIMENSIONS.join(', ');
  const oDims = ROLLUP_DIMENSIONS.map((c) => `o.${c}`).join(', ');
  for (const t of TABLES) {
    const head = t.outer === 'lvl' ? `lvl integer NOT NULL, t ${big} NOT NULL` : 'field text NOT NULL, value text NOT NULL';
    const key = [t.outer, t.inner, 'kid', ...t.after].join(', ');
    await sql.raw(`CREATE TABLE ${NEW(t)} (${head}, kid ${big} NOT NULL, ${t.columns(big, real)}, PRIMARY KEY (${key}))${rowid}`).execute(db);
    const total = Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM ${sql.raw(t.name)}`.execute(db)).rows[0]!.n);
    const done = await copyInBatches(db, t.name, t.outer, t.inner, batchRows, async (batch) => {
      await sql`INSERT INTO ${sql.raw(ROLLUP_KEYS)} (k, ${sql.raw(dimNames)})
        SELECT DISTINCT o.k, ${sql.raw(oDims)} FROM ${sql.raw(t.name)} AS o
        WHERE ${batch} AND NOT EXISTS (SELECT 1 FROM ${sql.raw(ROLLUP_KEYS)} AS rk WHERE rk.k = o.k)
        ON CONFLICT (k) DO NOTHING`.execute(db);
      const r = await sql`INSERT INTO ${sql.raw(NEW(t))} (${sql.raw([t.outer, t.inner, 'kid', ...t.after, ...t.rest].join(', '))})
        SELECT ${sql.raw([`o.${t.outer}`, `o.${t.inner}`, 'rk.id', ...t.after.map((c) => `o.${c}`), ...t.rest.map((c) => `o.${c}`)].join(', '))}
        FROM ${sql.raw(t.name)} AS o JOIN ${sql.raw(ROLLUP_KEYS)} AS rk ON rk.k = o.k
        WHERE ${batch}`.execute(db);
      return Number(r.numAffectedRows ?? 0n);
    }, (done) => progress(t.name, done, total));
    if (done !== total) throw new Error(`rollup keys: ${t.name} has ${total} rows, ${done} converted`);
    await replaceTable(db, dialect, t.name, NEW(t));
  }
}

/**
 * Runs `copy` over the rows of `table` in batches: the values of its primary key's leading column
 * `outer` one after the other (a few), each one's rows in ranges of the next column `inner` of at
 * least `batchRows` rows (a batch ends at a whole `inner` value). `copy` gets the batch's
 * condition on the alias `o` and answers the rows it copied; `progress` gets the running total
 * after every batch, and a turn of the event loop follows, so that log lines are written as the
 * batches go (SQLite's statements are synchronous). Answers the rows copied.
 */
export async function copyInBatches(
  db: Db,
  table: string,
  outer: string,
  inner: string,
  batchRows: number,
  copy: (batch: RawBuilder<SqlBool>) => Promise<number>,
  progress: (done: number) => void,
): Promise<number> {
  let done = 0;
  let o: unknown = undefined;
  for (;;) {
    const next = (await sql<{ v: unknown }>`SELECT min(${sql.raw(outer)}) AS v FROM ${sql.raw(table)} ${o === undefined ? sql`` : sql`WHERE ${sql.raw(outer)} > ${o}`}`.execute(db)).rows[0]?.v;
    if (next === null || next === undefined) break;
    o = next;
    let after: unknown = undefined;
    for (;;) {
      const from = after === undefined ? sql`` : sql`AND ${sql.raw(inner)} > ${after}`;
      // The last range value of the batch: the batch takes every row up to it, inclusive.
      const upTo = (
        await sql<{ v: unknown }>`SELECT ${sql.raw(inner)} AS v FROM ${sql.raw(table)} WHERE ${sql.raw(outer)} = ${o} ${from}
          ORDER BY ${sql.raw(inner)} LIMIT 1 OFFSET ${sql.raw(String(Math.max(1, Math.trunc(batchRows)) - 1))}`.execute(db)
      ).rows[0]?.v;
      const batch = sql<SqlBool>`o.${sql.raw(outer)} = ${o} ${after === undefined ? sql`` : sql`AND o.${sql.raw(inner)} > ${after}`} ${upTo === undefined ? sql`` : sql`AND o.${sql.raw(inner)} <= ${upTo}`}`;
      done += await copy(batch);
      progress(done);
      await new Promise((res) => setImmediate(res));
      if (upTo === undefined) break;
      after = upTo;
    }
  }
  return done;
}

/** Puts the table `made` in the place of `table` (dropped), under its name, primary key index included. */
export async function replaceTable(db: Db, dialect: Dialect, table: string, made: string): Promise<void> {
  await sql.raw(`DROP TABLE ${table}`).execute(db);
  await sql.raw(`ALTER TABLE ${made} RENAME TO ${table}`).execute(db);
  // PostgreSQL names the primary key's index after the table it was made with.
  if (layoutOf(dialect).namesPrimaryKeyIndex) await sql.raw(`ALTER INDEX ${made}_pkey RENAME TO ${table}_pkey`).execute(db);
}
