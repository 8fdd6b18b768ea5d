// The custom values of the latest builds, kept apart until enough have gathered
// (docs/store.md "Custom values in arrival order").
//
// A build's commit ID is a custom value whose key lands at a random place in the search index
// `(name, value, seq)`. In a large store each such row dirties a page of its own, and every commit
// writes each dirty page: at 1M builds a 5,000-build transaction rewrote ~4,000 pages of that
// index alone, against ~150 at 10k. So on SQLite the ingest appends custom values to
// RECENT_CUSTOM_VALUES, in arrival order (a few pages at its end per commit, whatever the size of
// the store), and searches scan it next to the indexed table (sql/compile.ts). Once it holds
// FOLD_ROWS rows they are moved into `build_custom_values` in one statement, in key order, so each
// page of the index is written once for all the rows it takes, then the table is emptied.
//
// The move runs inside an ingest transaction, so a build's custom values are always in exactly
// one of the two tables, and a search sees them as soon as the build is stored.

import type BetterSqlite3 from 'better-sqlite3';
import { RECENT_CUSTOM_VALUES } from '../sql/layout.js';

/**
 * Rows gathered before they are moved: the scan every custom-value search adds stays a few
 * milliseconds, and at 1M builds a move writes each page of the commit IDs' part of the index
 * about once per ~25 rows instead of once per row (measured in docs/store.md).
 */
export const FOLD_ROWS = 100_000;

export interface RecentCustomValues {
  /** Moves the gathered rows into the indexed table when there are `foldRows` or more; returns how many it moved. */
  foldIfFull(): number;
  /** Moves every gathered row now; returns how many. */
  fold(): number;
}

export function recentCustomValues(db: BetterSqlite3.Database, foldRows = FOLD_ROWS): RecentCustomValues {
  const R = RECENT_CUSTOM_VALUES;
  // New rows get rowids above the highest (no AUTOINCREMENT), and the table is emptied by each
  // move: the highest rowid is the number of rows gathered (more, after a deletion), in one seek.
  const gathered = db.prepare(`SELECT coalesce(max(rowid), 0) FROM ${R}`).pluck();
  const move = db.prepare(`INSERT INTO build_custom_values (seq, name, value) SELECT seq, name, value FROM ${R} ORDER BY name, value, seq`);
  const clear = db.prepare(`DELETE FROM ${R}`);
  const fold = (): number => {
    const moved = move.run().changes;
    clear.run();
    return moved;
  };
  return {
    foldIfFull: () => (Number(gathered.get()) >= foldRows ? fold() : 0),
    fold,
  };
}
