// The seq and events_key bookkeeping both write paths of the ingest share.

/** The highest seq ever used, by a stored or a deleted build (deleted_builds, store migration 0007). */
export const maxSeqSql = (larger: 'max' | 'greatest'): string =>
  `SELECT ${larger}(coalesce((SELECT max(seq) FROM builds), 0), coalesce((SELECT max(seq) FROM deleted_builds), 0))`;

/**
 * The last events_key handed out (store migration 0014): one row that only grows, so the key of a
 * deleted build is never given to another. Read and advanced under the ingest's write lock.
 */
export const LAST_EVENTS_KEY_SQL = 'SELECT last FROM events_key_counter';
