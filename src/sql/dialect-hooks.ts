// What a database dialect supplies to the compiler and the store: small hooks, one object per
// dialect (sqlite.ts, postgres.ts), picked once by `dialectOf` (dialect.ts). The compiler and the
// store call these hooks and never ask which database they talk to, the way kysely splits a
// Dialect into an adapter, a driver and a query compiler. Everything not listed here is shared.

import { sql, type DatabaseIntrospector, type DialectAdapter, type Kysely, type QueryCompiler, type RawBuilder, type SqlBool, type Transaction } from 'kysely';
import type { DatabaseHandle, DialectName } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { likePattern } from './pattern.js';

/** Where a searched string lives: a `builds` column or a column of a child row. */
export type StringTarget =
  | { readonly kind: 'builds'; readonly column: string }
  | { readonly kind: 'values'; readonly alias: string; readonly field: string }
  | { readonly kind: 'customValues'; readonly alias: string; readonly column: 'name' | 'value' };

export function targetRef(t: StringTarget): RawBuilder<unknown> {
  switch (t.kind) {
    case 'builds':
      return sql.ref(`builds.${t.column}`);
    case 'values':
      return sql.ref(`${t.alias}.value`);
    case 'customValues':
      return sql.ref(`${t.alias}.${t.column}`);
  }
}

/** `ref LIKE pattern ESCAPE '\'`: the exact wildcard match both dialects share. */
export const likeCondition = (ref: RawBuilder<unknown>, segments: readonly string[]): RawBuilder<SqlBool> =>
  sql<SqlBool>`${ref} LIKE ${likePattern(segments)} ESCAPE '\\'`;

/**
 * How a wildcard pattern without a literal prefix finds its candidates (the infix search strategy).
 * `candidates`: the compiler adds an explicit subquery over a trigram table in front of the LIKE
 * (SQLite FTS5: its planner cannot use a trigram index for a LIKE). `planner`: the LIKE alone,
 * which the database's planner serves from a trigram index by itself (PostgreSQL pg_trgm GIN).
 */
export type InfixStrategy = 'candidates' | 'planner';

/**
 * How a search statement is kept within its time limit and off the server's thread (the
 * pool/worker strategy). `threads`: read-only connections in worker threads (read-pool.ts), the
 * deadline checked per row. `slots`: a bounded number of pooled connections, each search in a
 * transaction with `SET LOCAL statement_timeout`.
 */
export type SearchExecution = 'threads' | 'slots';

/** A kysely handle or an open transaction on it. */
export type DbOrTransaction = Kysely<Database> | Transaction<Database>;

export interface Dialect {
  readonly name: DialectName;

  // ---- compiled search SQL ----

  /**
   * Appended to a correlated EXISTS probe so that the database runs it as written, one index seek
   * per build visited (an optimisation fence); empty where the planner does that by itself.
   */
  readonly probeFence: RawBuilder<unknown>;
  /**
   * A list-form semi-join (`builds.seq IN (SELECT …)`) whose candidates come from the value terms
   * (a wildcard without prefix on a multi-valued field), as handed to the planner.
   */
  termListCondition(condition: RawBuilder<SqlBool>): RawBuilder<SqlBool>;
  readonly infix: InfixStrategy;
  /**
   * A wildcard match of `segments` (lower-cased, at least two, not all empty) on `target`: exact.
   * The dialect adds its index-friendly parts in front of the LIKE: a prefix range, and the
   * candidates from the trigram table of the longest literal when the compiler chose them
   * (`trigram`, see access.ts; only with infix `candidates`).
   */
  wildcardMatch(target: StringTarget, segments: readonly string[], trigram: boolean): RawBuilder<SqlBool>;
  /**
   * The values of a multi-valued field's distinct terms (layout.ts VALUE_TERMS) that match the
   * pattern as a whole; `field` is the field's code (value-fields.ts). Case-insensitive because
   * values are stored lower-cased and patterns are lower-cased too, so a plain LIKE does; narrowed
   * by the terms' trigram index where the dialect has to ask for it itself.
   */
  matchingTerms(field: number, segments: readonly string[]): RawBuilder<unknown>;
  /**
   * A SELECT of the `seq` of the custom values `c` of `table` (build_custom_values, or the recent
   * ones, layout.ts RECENT_CUSTOM_VALUES) that meet `where` (over `n.name`, `c.name`,
   * `c.value`, with `c.name = n.name` in it), `n` being the distinct names from `from` (inclusive)
   * to `below` (exclusive; none: to the end). The names are walked on the table's `(name, value, seq)`
   * index one seek each (a recursive skip scan: SQLite skips through an index's leading column
   * only with ANALYZE statistics, PostgreSQL 15 not at all), and each name is the outer loop of a
   * seek into the same index.
   */
  customValuesByName(table: string, from: string, below: string | undefined, where: RawBuilder<SqlBool>): RawBuilder<unknown>;
  /**
   * Whether this dialect's ingest writes custom values and the values of spread fields to the
   * recent rows of layout.ts (RECENT_CUSTOM_VALUES, RECENT_VALUES) before they reach
   * `build_custom_values` and `build_values` (store/ingest/recent-rows.ts), so that readers read both.
   */
  readonly recentRows: boolean;
  /**
   * Whether the btree of an indexed duration, number or size column is keyed by the value's
   * bucket (value-buckets.ts `bucketedField`, `bucketIndex`) instead of `columnIndex`, so that a
   * range or equality on it also names the bucket.
   */
  readonly valueBuckets: boolean;

  // ---- kysely ----

  /** kysely's adapter, introspector and query compiler for this dialect (explainSql needs no connection). */
  kyselyParts(): {
    adapter(): DialectAdapter;
    queryCompiler(): QueryCompiler;
    // kysely's own Dialect.createIntrospector takes Kysely<any>.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    introspector(db: Kysely<any>): DatabaseIntrospector;
  };
  /** The database's own plan of a compiled statement, as text. */
  explain(handle: DatabaseHandle, text: string, parameters: readonly unknown[]): Promise<string>;

  // ---- the store ----

  /**
   * Whether writers commit in seq order, so that "every build with seq > n" read once stays
   * complete: what the analytics index (store/analytics/analytics-index.ts) and the in-memory
   * posting bitmaps (store/search/postings.ts, SQLite only) rely on.
   */
  readonly commitsInSeqOrder: boolean;
  readonly searchExecution: SearchExecution;
  /** Whether new builds are announced between processes by LISTEN/NOTIFY (store/notify.ts). */
  readonly notifiesNewBuilds: boolean;
  /**
   * A hint for the task-path aggregate of trends when `matched` builds are in the periods: a table
   * hint, or empty (a dialect that compares with the number of all builds reads it itself).
   */
  taskPathOrder(db: DbOrTransaction, matched: number): Promise<RawBuilder<unknown>>;
  /**
   * Tells the planner to read `table` through `index` (SQLite's `INDEXED BY`, which its planner
   * needs for the exact percentiles of trend rollups); empty where the planner finds it itself.
   */
  indexHint(index: string): RawBuilder<unknown>;
  /** The first instant of the unit of `size` ms that holds instant `t`, as a 64-bit integer. */
  unitStart(t: RawBuilder<unknown>, size: number): RawBuilder<number>;
  /**
   * The UTC day number of instant `t`. Written exactly as in the index `builds_duration_day` (store
   * migration 0009), or the index is not used.
   */
  utcDay(t: RawBuilder<unknown>): RawBuilder<number>;
  /** A JSON array of `values` as text: a key made of several columns. */
  jsonArray(values: readonly RawBuilder<unknown>[]): RawBuilder<string>;
  /** The larger of two numbers (a scalar function, not the aggregate). */
  greatest(a: RawBuilder<unknown>, b: RawBuilder<unknown>): RawBuilder<number>;
  /**
   * The derived attributes of the builds of a listing, compressed (store migration 0008) or text,
   * as one value per row: a `string | Uint8Array` where the dialect can mix types, else bytes.
   */
  readonly attributesOfRow: RawBuilder<string | Uint8Array>;

  // ---- the schema reconciliation ----

  /** Runs `fn` holding the schema lock, in one transaction, so that concurrent openers reconcile once. */
  withSchemaLock<T>(db: Kysely<Database>, fn: (db: DbOrTransaction) => Promise<T>): Promise<T>;
  /** The column names of a table, in order. */
  columnsOf(db: DbOrTransaction, table: string): Promise<string[]>;
  /** DDL of the btree index of a `builds` column. */
  columnIndex(column: string, isString: boolean): string;
  /** Brings the trigram index of `builds` to `columns`; whether a table was rebuilt for it. */
  reconcileTrigram(db: DbOrTransaction, columns: readonly string[]): Promise<boolean>;
}
