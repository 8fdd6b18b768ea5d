// Checkpoints of a bulk load on SQLite, spaced out. A checkpoint copies every page changed since
// the last one from the WAL into the database and syncs it. In a large store most of a bulk
// transaction's pages are index pages at random positions (build IDs, commit IDs, durations), and
// the same pages come back in the next transactions: checkpointing after every 5,000-line commit
// (SQLite's default, at 1,000 WAL pages) copies and syncs each such page once per commit, where
// one checkpoint after several commits copies it once. Measured at 1M builds stored: 23 instead
// of 31 KB written a build and 8% more builds per second (docs/store.md, "Checkpoints of a bulk
// load"); at 10k builds, where the WAL never reaches the spacing, nothing changes.

import type BetterSqlite3 from 'better-sqlite3';

/** WAL bytes between the checkpoints of a bulk load: the disk a bulk load may borrow for its WAL. */
export const BULK_WAL_BYTES = 400 * 1024 * 1024;

/** Bulk loads running per connection: the last one to finish puts the settings back. */
const running = new WeakMap<BetterSqlite3.Database, { count: number; checkpointPages: number; sizeLimit: number }>();

/**
 * Spaces the connection's checkpoints out to BULK_WAL_BYTES of WAL until the returned function is
 * called, which puts the connection's settings back and checkpoints what the WAL holds (a passive
 * checkpoint: it never waits for readers).
 */
export function spaceCheckpoints(db: BetterSqlite3.Database): () => void {
  const mine = running.get(db) ?? {
    count: 0,
    checkpointPages: Number(db.pragma('wal_autocheckpoint', { simple: true })),
    sizeLimit: Number(db.pragma('journal_size_limit', { simple: true })),
  };
  if (mine.count++ === 0) {
    running.set(db, mine);
    const pageSize = Number(db.pragma('page_size', { simple: true }));
    db.pragma(`wal_autocheckpoint = ${Math.max(mine.checkpointPages, Math.floor(BULK_WAL_BYTES / pageSize))}`);
    // The WAL restarts after each of these checkpoints: reused at its size, not cut back to the
    // connection's limit (openDatabase) and grown again.
    db.pragma('journal_size_limit = -1');
  }
  let done = false;
  return () => {
    if (done) return;
    done = true;
    if (--mine.count > 0) return;
    running.delete(db);
    if (!db.open) return;
    db.pragma(`wal_autocheckpoint = ${mine.checkpointPages}`);
    db.pragma(`journal_size_limit = ${mine.sizeLimit}`);
    db.pragma('wal_checkpoint(PASSIVE)');
  };
}
