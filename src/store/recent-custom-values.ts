// The custom values of the latest builds, kept apart until enough have gathered
// (docs/store.md "Custom values in arrival order").
//
// A build's commit ID is a custom value whose key lands at a random place in the search index
// `(name, value, seq)`. In a large store each such row dirties a page of its own, and every commit
// writes each dirty page: at 1M builds a 5,000-build transaction rewrote ~4,000 pages of that
// index alone, against ~150 at 10k. So on SQLite the ingest writes custom values to
// RECENT_CUSTOM_VALUES: a table in arrival order with the same `(name, value, seq)` index, which
// stays small (at most FOLD_ROWS rows, a few hundred pages for the commit IDs), so a commit writes
// a few hundred of its pages whatever the size of the store. Searches read it next to the indexed
// table (sql/compile.ts). Once it holds FOLD_ROWS rows they are moved into `build_custom_values`
// in one statement, in key order (its index's order: no sort), so each page of the large index is
// written once for all the rows it takes, and the table is emptied.
//
// The move runs inside an ingest transaction, so a build's custom values are always in exactly
// one of the two tables, and a search finds them as soon as the build is stored.

import type BetterSqlite3 from 'better-sqlite3';
import { RECENT_CUSTOM_VALUES } from '../sql/layout.js';

/**
 * Rows gathered before they are moved (~40,000 demo builds). At 1M builds a move of 100,000 rows
 * took ~270 ms; moving 200,000 at a time was no faster over 100,000 builds (docs/store.md).
 */
export const FOLD_ROWS = 100_000;

export interface RecentCustomValues {
  /** Moves the gathered rows into the indexed table when there are `foldRows` or more; returns how many it moved. */
  foldIfFull(): number;
}

export function recentCustomValues(db: BetterSqlite3.Database, foldRows = FOLD_ROWS): RecentCustomValues {
  const R = RECENT_CUSTOM_VALUES;
  // New rows get rowids above the highest (no AUTOINCREMENT), and the table is emptied by each
  // move: the highest rowid is the number of rows gathered (more, after a deletion), in one seek.
  const gathered = db.prepare(`SELECT coalesce(max(rowid), 0) FROM ${R}`).pluck();
  const move = db.prepare(`INSERT INTO build_custom_values (seq, name, value) SELECT seq, name, value FROM ${R} ORDER BY name, value, seq`);
  const clear = db.prepare(`DELETE FROM ${R}`);
  return {
    foldIfFull() {
      if (Number(gathered.get()) < foldRows) return 0;
      const moved = move.run().changes;
      clear.run();
      return moved;
    },
  };
}
