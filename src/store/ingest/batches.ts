// How many ingest lines go into one transaction (a module of its own: the command line reads it
// without loading the store).

import type { DialectName } from '../../db/database.js';

/**
 * Lines per transaction unless the caller says otherwise. SQLite writes a batch in one
 * synchronous transaction, which holds the event loop for its duration (~0.1 s for 500 builds),
 * so a server that ingests while it answers requests keeps batches small.
 */
export const DEFAULT_BATCH_SIZE = 500;

/**
 * Lines per transaction on SQLite for bulk loads, where nothing else waits on this thread (the
 * `ingest` and `demo-data` commands, demo builds before the server listens). Each commit rewrites
 * every index page the batch touched, and in a large store most inserts land on a different page
 * (random build IDs, commit IDs, start times): at 300k builds, 500-line batches made 2,988
 * builds/s, 2,000 made 4,367/s, 5,000 made 4,943/s and 10,000 made 4,984/s. At 1M builds,
 * with the random keys of the child rows gathered apart (recent-rows.ts), 10,000 lines loaded
 * 100,000 builds 1-8% faster than 5,000 (median +5%, three pairs) and 10,000 builds into a 10k
 * store at the same rate, with the same peak memory (docs/store.md "Recent child rows in arrival
 * order"). PostgreSQL logs row changes, not pages, and was slower with them (100k builds:
 * 2,590-2,863/s at 500 lines, 2,353/s at 5,000), so it keeps the default.
 */
export const SQLITE_BULK_BATCH_SIZE = 10_000;

/** Lines per transaction of a bulk load, per database (every database named, checked by the type). */
const BULK_BATCH_SIZE: Readonly<Record<DialectName, number>> = { sqlite: SQLITE_BULK_BATCH_SIZE, postgres: DEFAULT_BATCH_SIZE };

export function batchSizeFor(dialect: DialectName, bulk: boolean): number {
  return bulk ? BULK_BATCH_SIZE[dialect] : DEFAULT_BATCH_SIZE;
}
