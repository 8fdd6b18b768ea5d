// What the ingest (ingest.ts) and the dialects' write paths (ingest/sqlite.ts, ingest/postgres.ts)
// agree on: the context of an ingest and the shape of a write path. Its own module so that the
// driver and the write paths do not import each other.

import type BetterSqlite3 from 'better-sqlite3';
import type { DatabaseHandle } from '../../db/database.js';
import type { PreparedLine } from './prepare.js';
import type { PreparePool } from './prepare-pool.js';
import type { OutputBounds } from './output-bounds.js';
import type { IngestLineResult, Visibility } from '../types.js';

export interface IngestContext {
  readonly handle: DatabaseHandle;
  readonly clock: () => number;
  /** Called after a commit that made builds available, with the highest new seq. */
  readonly onAvailable: (maxSeq: number) => void;
  /**
   * SQLite: bulk upkeep of the search trigram tables per part (src/sql/indexes.ts), or undefined
   * when the search indexes are absent or keep themselves by triggers.
   */
  readonly trigram?: (sqlite: BetterSqlite3.Database) => SearchBatch | undefined;
  /** Worker thread that prepares the parts of long inputs; without it they are prepared inline. */
  readonly pool?: PreparePool;
  /**
   * SQLite: recent child rows gathered in arrival order before they are moved into their indexed
   * table (store/ingest/recent-rows.ts FOLD_ROWS); smaller in tests, to move them often.
   */
  readonly foldRows?: number;
  /** Whether new chunks are stored compressed (default true; false only to have stores of the old form). */
  readonly packEvents?: boolean;
  /** Bounds of the console log, test output and stack traces of a line (output-bounds.ts); defaults when absent. */
  readonly outputBounds?: OutputBounds;
}

/** What the ingest needs of the search indexes' bulk upkeep (src/sql/indexes.ts `trigramBatch`). */
export interface SearchBatch {
  begin(): void;
  finish(maxSeqBefore: number): void;
}

/** What a part's writing made: its lines' results and the highest seq it assigned (or 0). */
export interface PartWritten {
  readonly results: IngestLineResult[];
  readonly maxSeq: number;
}

/**
 * A dialect's write path (ingest/sqlite.ts, ingest/postgres.ts): one ingest's transactions, one
 * at a time.
 */
export interface IngestWriter {
  /**
   * Plans the lines against the stored state (including earlier parts of the open transaction)
   * and writes them, in the open transaction or a new one; with `commit`, commits it afterwards
   * (on SQLite in the same synchronous call: a one-part transaction never yields the thread).
   * `guarded`: all or nothing (a savepoint), so that when it throws, nothing of the part remains
   * and the transaction stays open. Unguarded (SQLite's bulk loads, see ingest.ts), a throw may
   * leave part of the part written: the caller must roll the transaction back.
   */
  part(lines: readonly PreparedLine[], commit: boolean, guarded: boolean): Promise<PartWritten>;
  /** Commits the open transaction, if any. */
  commit(): Promise<void>;
  /** Rolls the open transaction back, if any. */
  rollback(): Promise<void>;
}

export interface WriterOptions {
  readonly visibility: Visibility | undefined;
}

