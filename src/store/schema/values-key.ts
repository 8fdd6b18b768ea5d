// Store migration 0015: build_values keyed by its search key (field, value, seq).
//
// SQLite: a WITHOUT ROWID table whose primary key is (field, value, seq), so that the table and
// the search index are one B-tree, plus the (seq) index (prune, facet rollups by seq). PostgreSQL:
// the search index (field, value text_pattern_ops, seq) becomes a unique index, the key of the
// rows (a primary key cannot carry text_pattern_ops, which prefix search needs under any
// collation). Either way a (field, value, seq) row is stored once: a value a build lists twice is
// one value for search and facets (docs/store.md "Multi-valued values keyed by their search key").
//
// Rows a build listed twice were counted twice by the tag facet rollups; the builds holding such
// rows are subtracted from the facet rollups before the duplicates go and added back after, in
// the step that swaps the tables, so that the rollups count what the table holds.

import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import type { DatabaseHandle } from '../../db/database.js';
import { namedFieldFacetRollupStatements } from '../analytics/rollups.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;
type Dialect = DatabaseHandle['dialect'];

/** Rows copied per batch (SQLite): about 9 MB of keys at a time, a commit each. */
export const VALUES_KEY_BATCH = 50_000;
/** Builds per facet rollup correction statement. */
const SEQS_PER_STATEMENT = 500;

export type ValuesKeyProgress = (done: number, total: number) => void;

const num = (v: unknown): number => Number(v);

/** The seqs of the builds that hold a (field, value) row more than once, read in key order. */
async function duplicatedSeqs(db: Db): Promise<number[]> {
  const rows = (
    await sql<{ seq: number | string }>`SELECT DISTINCT seq FROM (SELECT seq FROM build_values GROUP BY field, value, seq HAVING count(*) > 1) AS d ORDER BY seq`.execute(db)
  ).rows;
  return rows.map((r) => num(r.seq));
}

/** Adds (1) or subtracts (-1) the builds `seqs` to or from the facet rollups, as build_values holds them now. */
async function shiftFacets(db: Db, dialect: Dialect, seqs: readonly number[], sign: 1 | -1): Promise<void> {
  for (let i = 0; i < seqs.length; i += SEQS_PER_STATEMENT) {
    const part = seqs.slice(i, i + SEQS_PER_STATEMENT);
    const selection: RawBuilder<SqlBool> = sql<SqlBool>`b.seq IN (${sql.join(part.map((s) => sql.lit(s)))})`;
    for (const q of namedFieldFacetRollupStatements(db, dialect, selection, sign)) await db.executeQuery(q);
  }
}

export async function migrateValuesKey(db: Db, dialect: Dialect, progress: ValuesKeyProgress, batch = VALUES_KEY_BATCH): Promise<void> {
  if (dialect === 'sqlite') await sqliteValuesKey(db, progress, batch);
  else await postgresValuesKey(db, progress);
}

async function sqliteValuesKey(db: Db, progress: ValuesKeyProgress, batch: number): Promise<void> {
  // A run stopped after the swap (kysely records a migration after it returns) has nothing to do.
  const ddl = (await sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'build_values'`.execute(db)).rows[0]?.sql ?? '';
  if (/WITHOUT ROWID/i.test(ddl)) return;
  // Every batch commits by itself: a run that was interrupted left a partial copy and starts over.
  await sql`DROP TABLE IF EXISTS build_values_keyed`.execute(db);
  await sql`CREATE TABLE build_values_keyed (field text NOT NULL, value text NOT NULL, seq integer NOT NULL, PRIMARY KEY (field, value, seq)) WITHOUT ROWID`.execute(db);
  const total = num((await sql<{ n: number }>`SELECT count(*) AS n FROM build_values`.execute(db)).rows[0]!.n);
  // Copied in key order, read from the search index (field, value, seq): every batch appends to
  // the end of the new B-tree. A batch ends at the key of its last row; keys equal to it (a
  // duplicate) fall into the same batch and are stored once (OR IGNORE).
  let done = 0;
  let from: [string, string, number] | undefined;
  for (;;) {
    const after = from === undefined ? sql`` : sql`WHERE (field, value, seq) > (${from[0]}, ${from[1]}, ${from[2]})`;
    const last = (
      await sql<{ field: string; value: string; seq: number }>`SELECT field, value, seq FROM build_values INDEXED BY build_values_search_idx ${after}
        ORDER BY field, value, seq LIMIT 1 OFFSET ${batch - 1}`.execute(db)
    ).rows[0];
    const upTo = last === undefined ? sql`` : sql`${from === undefined ? sql`WHERE` : sql`AND`} (field, value, seq) <= (${last.field}, ${last.value}, ${last.seq})`;
    await sql`INSERT OR IGNORE INTO build_values_keyed (field, value, seq)
      SELECT field, value, seq FROM build_values INDEXED BY build_values_search_idx ${after} ${upTo} ORDER BY field, value, seq`.execute(db);
    done = last === undefined ? total : done + batch;
    // A new database has no rows to report.
    if (total > 0) progress(Math.min(done, total), total);
    // A turn of the event loop, so that the log line is written now (see fillRollups).
    await new Promise((r) => setImmediate(r));
    if (last === undefined) break;
    from = [last.field, last.value, num(last.seq)];
  }
  // The swap, in one transaction: the old table's triggers (the value terms' upkeep, search
  // migration 0003) are recreated on the new one, and the facet rollups of the builds that held
  // duplicates are recounted.
  const triggers = (await sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'build_values' ORDER BY name`.execute(db)).rows;
  const duplicated = await duplicatedSeqs(db);
  await db.transaction().execute(async (trx) => {
    if (duplicated.length > 0) await shiftFacets(trx, 'sqlite', duplicated, -1);
    await sql`DROP TABLE build_values`.execute(trx);
    await sql`ALTER TABLE build_values_keyed RENAME TO build_values`.execute(trx);
    await sql`CREATE INDEX build_values_seq ON build_values (seq)`.execute(trx);
    for (const t of triggers) await sql.raw(t.sql).execute(trx);
    if (duplicated.length > 0) await shiftFacets(trx, 'sqlite', duplicated, 1);
  });
}

async function postgresValuesKey(db: Db, progress: ValuesKeyProgress): Promise<void> {
  // PostgreSQL runs the migration in one transaction. The rows stay in their heap; the duplicates
  // are deleted a batch of builds at a time, then the search index is rebuilt as the unique key.
  const duplicated = await duplicatedSeqs(db);
  const total = duplicated.length;
  if (total > 0) await shiftFacets(db, 'postgres', duplicated, -1);
  for (let i = 0; i < total; i += SEQS_PER_STATEMENT) {
    const part = duplicated.slice(i, i + SEQS_PER_STATEMENT);
    await sql`DELETE FROM build_values AS a USING build_values AS b
      WHERE a.seq IN (${sql.join(part)}) AND b.seq = a.seq AND b.field = a.field AND b.value = a.value AND b.ctid < a.ctid`.execute(db);
    progress(Math.min(i + SEQS_PER_STATEMENT, total), total);
  }
  if (total > 0) await shiftFacets(db, 'postgres', duplicated, 1);
  await sql`DROP INDEX IF EXISTS build_values_search_idx`.execute(db);
  await sql`CREATE UNIQUE INDEX build_values_search_idx ON build_values (field, value text_pattern_ops, seq)`.execute(db);
}
