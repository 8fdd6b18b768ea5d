// Checkpoints of a bulk load on SQLite, spaced out. A checkpoint copies every page changed since
// the last one from the WAL into the database and syncs it. In a large store most of a bulk
// transaction's pages are index pages at random positions (build IDs, commit IDs, durations), and
// the same pages come back in the next transactions: checkpointing after every 5,000-line commit
// (SQLite's default, at 1,000 WAL pages) copies and syncs each such page once per commit, where
// one checkpoint after several commits copies it once. Measured at 1M builds stored: 23 instead of
// 31 KB written a build and 8% more builds per second (docs/store.md, "Checkpoints of a bulk
// load"). The WAL may grow to a quarter of the database, at most 400 MB: a bulk load never needs
// more free disk beside the database than that, and a small store checkpoints as before.

import type BetterSqlite3 from 'better-sqlite3';

/** At most this many WAL bytes between the checkpoints of a bulk load. */
export const BULK_WAL_BYTES = 400 * 1024 * 1024;

/** ... and at most this share of the database's size. */
export const BULK_WAL_SHARE = 0.25;

/**
 * WAL pages between the checkpoints of a bulk load into a database of `databasePages` pages, for a
 * connection whose own setting is `ownPages` (never fewer).
 */
export function bulkCheckpointPages(databasePages: number, pageSize: number, ownPages: number): number {
  const bytes = Math.min(BULK_WAL_BYTES, databasePages * pageSize * BULK_WAL_SHARE);
  return Math.max(ownPages, Math.floor(bytes / pageSize));
}

export interface SpacedCheckpoints {
  /** After a commit: the spacing follows the database's size. */
  grown(): void;
  /**
   * Puts the connection's settings back, once the last bulk load on it ended, and checkpoints what
   * the WAL holds (a passive checkpoint: it never waits for readers).
   */
  end(): void;
}

interface Running {
  count: number;
  readonly ownPages: number;
  readonly ownSizeLimit: number;
}

/** Bulk loads running per connection: the last one to end puts the settings back. */
const running = new WeakMap<BetterSqlite3.Database, Running>();

/** Spaces the connection's checkpoints out (see the top of this file) until `end`. */
export function spaceCheckpoints(db: BetterSqlite3.Database): SpacedCheckpoints {
  let mine = running.get(db);
  if (mine === undefined) {
    mine = {
      count: 0,
      ownPages: Number(db.pragma('wal_autocheckpoint', { simple: true })),
      ownSizeLimit: Number(db.pragma('journal_size_limit', { simple: true })),
    };
    running.set(db, mine);
    // The WAL restarts after each of these checkpoints: reused at its size, not cut back to the
    // connection's limit (openDatabase) and grown again.
    db.pragma('journal_size_limit = -1');
  }
  const state = mine;
  state.count++;
  const pageSize = Number(db.pragma('page_size', { simple: true }));
  const grown = (): void => {
    if (!db.open || running.get(db) !== state) return;
    const pages = bulkCheckpointPages(Number(db.pragma('page_count', { simple: true })), pageSize, state.ownPages);
    db.pragma(`wal_autocheckpoint = ${pages}`);
  };
  grown();
  let ended = false;
  return {
    grown,
    end() {
      if (ended) return;
      ended = true;
      if (--state.count > 0) return;
      running.delete(db);
      if (!db.open) return;
      db.pragma(`wal_autocheckpoint = ${state.ownPages}`);
      db.pragma(`journal_size_limit = ${state.ownSizeLimit}`);
      // A checkpoint cannot run inside a transaction of this connection; the next commit's will.
      if (!db.inTransaction) db.pragma('wal_checkpoint(PASSIVE)');
    },
  };
}
