// The seq bookkeeping both write paths of the ingest share.

/** The highest seq ever used, by a stored or a deleted build (deleted_builds, store migration 0007). */
export const maxSeqSql = (larger: 'max' | 'greatest'): string =>
  `SELECT ${larger}(coalesce((SELECT max(seq) FROM builds), 0), coalesce((SELECT max(seq) FROM deleted_builds), 0))`;
