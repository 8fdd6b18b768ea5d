// The PostgreSQL dialect: a planner that serves LIKE from text_pattern_ops btrees and pg_trgm GIN
// indexes by itself but needs two fences, statement timeouts on pooled connections, concurrent
// writers (seqs may commit out of order) and LISTEN/NOTIFY between processes.

import { sql, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import { likeCondition, targetRef, type Dialect } from './dialect-hooks.js';
import { postgresColumnIndex, postgresTrigramIndex } from './indexes.js';
import { VALUE_TERMS } from './layout.js';
import { likePattern } from './pattern.js';

/** An advisory lock key for the schema reconciliation (any constant of our own). */
const RECONCILE_LOCK_KEY = 0x6273_7263; // "bsrc"

export const POSTGRES: Dialect = {
  name: 'postgres',

  // PostgreSQL would turn the correlated EXISTS into a hashed subplan (every build the term
  // names, hashed before the first row; its cost model ignores the LIMIT of a page): 220 ms for
  // `-user:ci -tag:CI` at 1M builds. OFFSET 0 keeps the subquery as it is written, one index seek
  // per build visited: 0.6 ms.
  probeFence: sql` OFFSET 0`,
  // PostgreSQL cannot estimate how many builds the matching terms name (it assumes few), so it
  // would join every one of them to `builds` and sort them for a page: 179 ms for
  // `requested:*bundle*` at 1M builds. Wrapped, the IN stays a hashed subplan tested while walking
  // `builds` in seq order, and a page stops after its last build: 10 ms.
  termListCondition: (condition) => sql`(${condition}) IS TRUE`,
  infix: 'planner',

  // One LIKE does it: the planner turns a literal prefix into a range on the text_pattern_ops
  // btree, and pg_trgm's GIN index serves infix patterns with >= 3 literal characters.
  wildcardMatch: (target, segments) => likeCondition(targetRef(target), segments),

  // The planner picks the terms' trigram GIN index for the LIKE itself.
  matchingTerms: (field, segments) =>
    sql`SELECT t.value FROM ${sql.table(VALUE_TERMS)} AS t WHERE t.field = ${field} AND t.value LIKE ${likePattern(segments)} ESCAPE '\\'`,

  customValuesByName(table, from, below, where) {
    // The index is text_pattern_ops: it serves the ~<~ family (byte order), not the collation's
    // `<` or min(), so each step is `ORDER BY … USING ~<~ LIMIT 1` after the previous name. The
    // planner guesses 100 names and on a small table would hash-join a scan of every custom value
    // instead; the LATERAL subquery (fenced by OFFSET 0) is run per name, one seek each.
    const upper = below === undefined ? sql`` : sql` AND w.name ~<~ ${below}`;
    const t = sql.table(table);
    return sql`SELECT c.seq FROM (WITH RECURSIVE names(name) AS ((SELECT w.name FROM ${t} AS w WHERE w.name ~>=~ ${from}${upper} ORDER BY w.name USING ~<~ LIMIT 1)
      UNION ALL SELECT (SELECT w.name FROM ${t} AS w WHERE w.name ~>~ names.name${upper} ORDER BY w.name USING ~<~ LIMIT 1) FROM names WHERE names.name IS NOT NULL)
      SELECT name FROM names WHERE name IS NOT NULL) AS n CROSS JOIN LATERAL (SELECT c.seq FROM ${t} AS c WHERE ${where} OFFSET 0) AS c`;
  },

  // Child rows go straight into their indexed tables (store/ingest/postgres.ts).
  recentRows: false,
  // Ordered columns keep their (value, seq) btree; the bucketed one was measured on SQLite only.
  valueBuckets: false,

  kyselyParts: () => ({
    adapter: () => new PostgresAdapter(),
    queryCompiler: () => new PostgresQueryCompiler(),
    introspector: (db) => new PostgresIntrospector(db),
  }),

  async explain(handle, text, parameters) {
    if (handle.pool === undefined) throw new Error('explainPlan: a PostgreSQL dialect without a PostgreSQL pool');
    const result = await handle.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, parameters as unknown[]);
    return result.rows.map((r) => r['QUERY PLAN']).join('\n');
  },

  // Every ingest transaction, of any server process, holds one advisory lock until it commits and
  // numbers its builds after the highest seq under it (store/ingest/postgres.ts), and PostgreSQL
  // releases a transaction's locks only once its commit is visible: seqs are committed in order.
  commitsInSeqOrder: true,
  searchExecution: 'slots',
  notifiesNewBuilds: true,

  // The planner chooses between the path index and a lookup by build itself.
  indexHint: () => sql``,
  unitStart: (t, size) => sql<number>`(floor(${t} / ${sql.lit(size)}) * ${sql.lit(size)})::bigint`,
  utcDay: (t) => sql<number>`floor(${t} / 86400000)`,
  jsonArray: (values) => sql<string>`json_build_array(${sql.join(values)})::text`,
  greatest: (a, b) => sql<number>`greatest(${a}, ${b})`,
  // One type per column: text is read as its UTF-8 bytes, like the compressed form.
  attributesOfRow: sql<Uint8Array>`coalesce((SELECT coalesce(a.attributes_packed, convert_to(a.attributes, 'UTF8')) FROM build_attributes AS a WHERE a.seq = builds.seq), convert_to(builds.attributes, 'UTF8'))`,
  taskPathOrder: async () => sql``,

  withSchemaLock: (db, fn) =>
    db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${RECONCILE_LOCK_KEY})`.execute(trx);
      return fn(trx);
    }),

  async columnsOf(db, table) {
    const rows = await sql<{ name: string }>`SELECT column_name AS name FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = ${table} ORDER BY ordinal_position`.execute(db);
    return rows.rows.map((r) => r.name);
  },

  columnIndex: postgresColumnIndex,

  async reconcileTrigram(db, columns) {
    // One GIN index per column: adding the missing ones is enough (IF NOT EXISTS).
    for (const c of columns) await sql.raw(postgresTrigramIndex(c)).execute(db);
    return false;
  },
};
