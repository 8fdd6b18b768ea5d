// Recent custom values (SQLite, store migration 0019). The search index of the custom values,
// build_custom_values_search_idx, was keyed by (name, value, seq): a commit ID, different in every
// build, went to a random place in it. Once the index outgrew the page cache (a few hundred
// thousand builds), that one row a build read a page back and dirtied it, and the commit and the
// checkpoint wrote the page again: 7-12% of the ingest rate at a million builds.
//
// Since 0019 the index leads with a `recent` flag, (recent, name, value, seq). The ingest writes new
// rows with recent = 1: they sit together in a small part of the index that stays in the page
// cache. Once FOLD_ROWS of them have gathered, one UPDATE inside the ingest's transaction clears the
// flag of them all, in index order, so each page of the old rows is read and written once for all
// the new rows it takes rather than once per row. A search asks for both values of the flag
// (`recent IN (0, 1)`, the dialect's `customValueRows`), two seeks of the key instead of one, and
// finds a recent row at once. The trigram table of the custom values follows name and value only
// (its update trigger names those columns since 0019), so a fold leaves it alone.
// PostgreSQL keeps its index and its rows as they are: the migration does nothing there.

import { sql, type Kysely } from 'kysely';
import type BetterSqlite3 from 'better-sqlite3';
import type { DatabaseHandle } from '../db/database.js';
import { CUSTOM_VALUES_TRIGRAM } from '../sql/layout.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/**
 * Recent rows that make a fold due: ~60,000 demo builds' worth (2.5 custom values a build), some
 * 7 MB of the index, well inside the 64 MiB page cache (db/database.ts).
 */
export const FOLD_ROWS = 150_000;

/** Store migration 0019 (SQLite): the `recent` column, the index led by it, the trigram trigger on name and value only. */
export async function migrateRecentCustomValues(db: Db, dialect: DatabaseHandle['dialect'], progress: (done: number, total: number) => void): Promise<void> {
  if (dialect !== 'sqlite') return;
  const C = CUSTOM_VALUES_TRIGRAM;
  const rows = Number((await sql<{ n: number }>`SELECT count(*) AS n FROM build_custom_values`.execute(db)).rows[0]!.n);
  if (rows > 0) progress(0, rows);
  // One transaction (kysely runs SQLite's migrations without one): an interrupted run leaves the
  // old layout whole and starts over. ADD COLUMN with a constant default rewrites no row.
  await db.transaction().execute(async (trx) => {
    const has = (await sql`SELECT 1 FROM pragma_table_info('build_custom_values') WHERE name = 'recent'`.execute(trx)).rows.length > 0;
    if (!has) await sql`ALTER TABLE build_custom_values ADD COLUMN recent INTEGER NOT NULL DEFAULT 0`.execute(trx);
    await sql`DROP INDEX IF EXISTS build_custom_values_search_idx`.execute(trx);
    await sql`CREATE INDEX build_custom_values_search_idx ON build_custom_values (recent, name, value, seq)`.execute(trx);
    await sql.raw(`DROP TRIGGER IF EXISTS ${C}_au`).execute(trx);
    await sql
      .raw(
        `CREATE TRIGGER ${C}_au AFTER UPDATE OF name, value ON build_custom_values BEGIN
        INSERT INTO ${C}(${C}, rowid, name, value) VALUES ('delete', old.rowid, old.name, old.value);
        INSERT INTO ${C}(rowid, name, value) VALUES (new.rowid, new.name, new.value);
      END`,
      )
      .execute(trx);
  });
  if (rows > 0) progress(rows, rows);
}

/** Whether the store has run migration 0019 (the ingest writes custom values in place before it: tests of older layouts). */
export function hasRecentCustomValues(db: BetterSqlite3.Database): boolean {
  return db.prepare("SELECT 1 FROM pragma_table_info('build_custom_values') WHERE name = 'recent'").get() !== undefined;
}

export interface RecentCustomValues {
  /**
   * Notes `rows` new custom values written (recent = 1) in the open transaction, and folds every
   * recent row into place once FOLD_ROWS or more have gathered. Inside the ingest's transaction.
   */
  added(rows: number): void;
}

/**
 * How many recent rows each connection believes there are: counted once per connection (a range of
 * the index), then kept up to date by its own ingests and counted again before a fold, since another
 * process may have written or folded meanwhile.
 */
const gathered = new WeakMap<BetterSqlite3.Database, { rows: number }>();

export function recentCustomValues(db: BetterSqlite3.Database, foldRows = FOLD_ROWS): RecentCustomValues {
  const count = db.prepare('SELECT count(*) FROM build_custom_values WHERE recent = 1').pluck();
  const fold = db.prepare('UPDATE build_custom_values SET recent = 0 WHERE recent = 1');
  return {
    added(rows) {
      let state = gathered.get(db);
      if (state === undefined) {
        // The count already holds the rows just written.
        state = { rows: Number(count.get()) };
        gathered.set(db, state);
      } else state.rows += rows;
      if (state.rows < foldRows) return;
      state.rows = Number(count.get());
      if (state.rows < foldRows) return;
      fold.run();
      state.rows = 0;
    },
  };
}
