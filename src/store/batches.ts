// How many ingest lines go into one transaction (a module of its own: the command line reads it
// without loading the store).

/**
 * Lines per transaction unless the caller says otherwise. SQLite writes a batch in one
 * synchronous transaction, which holds the event loop for its duration (~0.1 s for 500 builds),
 * so a server that ingests while it answers requests keeps batches small.
 */
export const DEFAULT_BATCH_SIZE = 500;

/**
 * Lines per transaction for bulk loads where nothing else waits on this thread (the `ingest` and
 * `demo-data` commands, demo builds before the server listens). Each commit rewrites every index
 * page the batch touched, and in a large store most inserts land on a different page (random
 * build IDs, commit IDs, start times): at 300k builds, 500-line batches made 2,988 builds/s,
 * 2,000 made 4,367/s, 5,000 made 4,943/s and 10,000 made 4,984/s.
 */
export const BULK_BATCH_SIZE = 5000;
