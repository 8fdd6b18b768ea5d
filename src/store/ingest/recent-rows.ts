// The child rows of the latest builds whose keys land at random places, kept apart until enough
// have gathered (docs/store.md "Recent child rows in arrival order").
//
// A build's commit ID (a custom value) and its machine's IP addresses (values of the
// `environment.localIPAddress` fields) have keys that land at random places in their search
// indexes, `(name, value, seq)` and `(field, value, seq)`. In a large store each such row dirties
// a page of its own, and every commit writes each dirty page: at 1M builds a 5,000-build
// transaction rewrote ~4,000 pages of the custom values' index alone, against ~150 at 10k. So on
// SQLite the ingest writes these rows to a table of recent rows (RECENT_CUSTOM_VALUES,
// RECENT_VALUES), in arrival order, with the same key index, which stays small (at most FOLD_ROWS
// rows, a few hundred pages), so that a commit writes a few hundred of its pages whatever the
// size of the store. Searches read it next to the large table (sql/compile.ts). Once it holds
// FOLD_ROWS rows they are moved into the large table in one statement, in key order (the small
// index's order: no sort), so each page of the large index is written once for all the rows it
// takes, and the table is emptied.
//
// A move runs inside an ingest transaction, so a build's rows are always in exactly one of the
// two tables, and a search finds them as soon as the build is stored.

import type BetterSqlite3 from 'better-sqlite3';
import { RECENT_CUSTOM_VALUES, RECENT_VALUES } from '../../sql/layout.js';

/**
 * Rows gathered in a table before they are moved (~40,000 demo builds of custom values). At 1M
 * builds a move of 100,000 custom values took ~270 ms; moving 200,000 at a time was no faster
 * over 100,000 builds (docs/store.md).
 */
export const FOLD_ROWS = 100_000;

/**
 * The move of each table of recent rows that holds `foldRows` or more into its large table, to
 * run at the end of an ingest part, before the trigram fill (which indexes the moved custom
 * values; the moved values' terms were added when they arrived, sql/indexes.ts trigramBatch).
 */
export function recentRowsMove(db: BetterSqlite3.Database, foldRows = FOLD_ROWS): () => void {
  const moves = [
    tableMove(db, RECENT_CUSTOM_VALUES, `INSERT INTO build_custom_values (seq, name, value) SELECT seq, name, value FROM ${RECENT_CUSTOM_VALUES} ORDER BY name, value, seq`),
    tableMove(db, RECENT_VALUES, `INSERT OR IGNORE INTO build_values (field, value, seq) SELECT field, value, seq FROM ${RECENT_VALUES} ORDER BY field, value, seq`),
  ];
  return () => {
    for (const move of moves) move(foldRows);
  };
}

/** The move of one table of recent rows by `insert`, then emptied, when it holds `foldRows` or more. */
function tableMove(db: BetterSqlite3.Database, table: string, insert: string): (foldRows: number) => void {
  // New rows get rowids above the highest (no AUTOINCREMENT), and the table is emptied by each
  // move: the highest rowid is the number of rows gathered (more, after a deletion), in one seek.
  const gathered = db.prepare(`SELECT coalesce(max(rowid), 0) FROM ${table}`).pluck();
  const move = db.prepare(insert);
  const clear = db.prepare(`DELETE FROM ${table}`);
  return (foldRows) => {
    if (Number(gathered.get()) < foldRows) return;
    move.run();
    clear.run();
  };
}
