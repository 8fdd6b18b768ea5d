// The SQLite dialect: FTS5 trigram tables the compiler must ask for explicitly, BINARY prefix
// ranges, worker threads for searches, and a process-wide writer that commits in seq order.

import { sql, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, type RawBuilder, type SqlBool } from 'kysely';
import { likeCondition, targetRef, type DbOrTransaction, type Dialect, type StringTarget } from './dialect-hooks.js';
import { sqliteBuildsTrigramStatements, sqliteColumnIndex } from './indexes.js';
import { BUILDS_TRIGRAM, CUSTOM_VALUES_TRIGRAM, MIN_TRIGRAM_CHARS, VALUE_TERMS, VALUE_TERMS_TRIGRAM } from './layout.js';
import { charCount, ftsPhrase, ftsTrigrams, likePattern, longestSegment, prefixUpperBound } from './pattern.js';

function prefixRange(ref: RawBuilder<unknown>, prefix: string): RawBuilder<SqlBool> {
  const upper = prefixUpperBound(prefix);
  return upper === undefined ? sql<SqlBool>`${ref} >= ${prefix}` : sql<SqlBool>`(${ref} >= ${prefix} AND ${ref} < ${upper})`;
}

/**
 * Candidate rows from an FTS5 trigram table (a superset; the LIKE next to it is exact), or
 * undefined when the literal has no trigram FTS5 can be asked for (pattern.ts `ftsTrigrams`).
 * The tables keep no positions (search migration 0005, `detail=none`): the query is every trigram
 * of the literal in any column of the row, never a phrase or a column filter.
 */
function trigramCandidates(target: StringTarget, literal: string): RawBuilder<SqlBool> | undefined {
  const match = ftsTrigrams(literal);
  if (match === undefined) return undefined;
  switch (target.kind) {
    case 'builds':
      // The builds trigram table is keyed by seq (stable, unlike an implicit rowid).
      return sql<SqlBool>`builds.seq IN (SELECT rowid FROM ${sql.table(BUILDS_TRIGRAM)} WHERE ${sql.table(BUILDS_TRIGRAM)} MATCH ${match})`;
    case 'customValues':
      return sql<SqlBool>`${sql.ref(`${target.alias}.rowid`)} IN (SELECT rowid FROM ${sql.table(CUSTOM_VALUES_TRIGRAM)} WHERE ${sql.table(CUSTOM_VALUES_TRIGRAM)} MATCH ${match})`;
    case 'values':
      // Values of multi-valued fields are matched through their terms (matchingTerms).
      throw new Error('a multi-valued field has no trigram table of its own rows');
  }
}

export const SQLITE: Dialect = {
  name: 'sqlite',

  // SQLite runs a correlated EXISTS as written: one index seek per outer row.
  probeFence: sql``,
  termListCondition: (condition) => condition,
  infix: 'candidates',

  wildcardMatch(target, segments, trigram) {
    const ref = targetRef(target);
    const first = segments[0]!;
    const parts: RawBuilder<SqlBool>[] = [];
    if (first !== '') {
      // An explicit range on the plain (BINARY) index; exact on its own for `abc*`.
      parts.push(prefixRange(ref, first));
      if (segments.length === 2 && segments[1] === '') return parts[0]!;
    } else if (trigram) {
      const candidates = trigramCandidates(target, longestSegment(segments));
      if (candidates !== undefined) parts.push(candidates);
    }
    parts.push(likeCondition(ref, segments));
    return sql<SqlBool>`(${sql.join(parts, sql` AND `)})`;
  },

  matchingTerms(field, segments) {
    const t = sql.table(VALUE_TERMS);
    const like = sql`t.value LIKE ${likePattern(segments)} ESCAPE '\\'`;
    const longest = longestSegment(segments);
    // A literal run of 3+ characters narrows the terms by their FTS5 table first.
    if (charCount(longest) >= MIN_TRIGRAM_CHARS) {
      const F = sql.table(VALUE_TERMS_TRIGRAM);
      return sql`SELECT t.value FROM ${t} AS t WHERE t.field = ${field} AND t.id IN (SELECT rowid FROM ${F} WHERE ${F} MATCH ${ftsPhrase(longest)}) AND ${like}`;
    }
    return sql`SELECT t.value FROM ${t} AS t WHERE t.field = ${field} AND ${like}`;
  },

  customValuesByName(table, from, below, where) {
    // min(name) after a bound is one seek (SQLite's min/max optimisation), however many rows a
    // name has. CROSS JOIN keeps the names as the outer loop.
    const t = sql.table(table);
    const upper = below === undefined ? sql`` : sql` AND w.name < ${below}`;
    return sql`SELECT c.seq FROM (WITH RECURSIVE names(name) AS (SELECT min(w.name) FROM ${t} AS w WHERE w.name >= ${from}${upper}
      UNION ALL SELECT (SELECT min(w.name) FROM ${t} AS w WHERE w.name > names.name${upper}) FROM names WHERE names.name IS NOT NULL)
      SELECT name FROM names WHERE name IS NOT NULL) AS n CROSS JOIN ${t} AS c WHERE ${where}`;
  },

  recentRows: true,
  valueBuckets: true,

  kyselyParts: () => ({
    adapter: () => new SqliteAdapter(),
    queryCompiler: () => new SqliteQueryCompiler(),
    introspector: (db) => new SqliteIntrospector(db),
  }),

  async explain(handle, text, parameters) {
    if (handle.sqlite === undefined) throw new Error('explainPlan: a SQLite dialect without a SQLite connection');
    const rows = handle.sqlite.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...(parameters as unknown[])) as { id: number; parent: number; detail: string }[];
    const depth = new Map<number, number>([[0, 0]]);
    return rows
      .map((r) => {
        const d = (depth.get(r.parent) ?? 0) + 1;
        depth.set(r.id, d);
        return `${'  '.repeat(d - 1)}${r.detail}`;
      })
      .join('\n');
  },

  // One writer at a time (a database lock): seqs are committed in order.
  commitsInSeqOrder: true,
  searchExecution: 'threads',
  notifiesNewBuilds: false,

  indexHint: (index) => sql`INDEXED BY ${sql.raw(index)}`,
  unitStart: (t, size) => sql<number>`(CAST(floor(${t} / ${sql.lit(size)}) AS INTEGER) * ${sql.lit(size)})`,
  utcDay: (t) => sql<number>`CAST(floor(${t} / 86400000) AS INTEGER)`,
  jsonArray: (values) => sql<string>`json_array(${sql.join(values)})`,
  // SQLite's two-argument max() is the scalar one.
  greatest: (a, b) => sql<number>`max(${a}, ${b})`,
  attributesOfRow: sql<string | Uint8Array>`coalesce((SELECT coalesce(a.attributes_packed, a.attributes) FROM build_attributes AS a WHERE a.seq = builds.seq), builds.attributes)`,
  async taskPathOrder(db: DbOrTransaction, matched: number) {
    // When the periods hold a good part of all builds, read every task in path order
    // (build_tasks_path: grouping needs no sort, measured 5.6 s -> 0.7 s for 880k task rows) and
    // keep those of matched builds; for fewer builds look their tasks up by build and sort those.
    const all = Number((await sql<{ n: number }>`SELECT coalesce(max(seq), 0) AS n FROM builds`.execute(db)).rows[0]?.n ?? 0);
    return matched * 8 > all ? sql`INDEXED BY build_tasks_path` : sql``;
  },

  async withSchemaLock(db, fn) {
    // BEGIN IMMEDIATE takes the write lock at once: a second process waits (busy_timeout) and
    // then finds the work done.
    await sql`BEGIN IMMEDIATE`.execute(db);
    try {
      const result = await fn(db);
      await sql`COMMIT`.execute(db);
      return result;
    } catch (e) {
      await sql`ROLLBACK`.execute(db);
      throw e;
    }
  },

  async columnsOf(db, table) {
    // table_info lists an FTS5 table's columns too; only the name is read.
    const rows = await sql<{ name: string }>`SELECT name FROM pragma_table_info(${table})`.execute(db);
    return rows.rows.map((r) => r.name);
  },

  columnIndex: (column) => sqliteColumnIndex(column),

  async reconcileTrigram(db, columns) {
    // An FTS5 table's columns are fixed: rebuilt (and refilled) when the catalog's list differs.
    const indexed = await SQLITE.columnsOf(db, BUILDS_TRIGRAM);
    if (indexed.join(',') === columns.join(',')) return false;
    for (const s of sqliteBuildsTrigramStatements(columns)) await sql.raw(s).execute(db);
    return true;
  },
};
