// Bucketed column indexes (SQLite): the btree of an ordered field whose values do not follow the
// builds' arrival, a build's duration, is keyed by the value's bucket first, `(bucket, seq,
// value)`, instead of `(value, seq)`.
//
// Why: a new build's duration lands at a random place in `(value, seq)`, so at a million builds
// a 10,000-build ingest transaction rewrote ~3,900 of that index's ~4,300 pages (74 at 10,000
// builds). Keyed by the bucket, a new entry goes after the others of its bucket: a transaction
// rewrites at most the last page of each bucket it touches (189 buckets hold the demo data's
// durations), whatever the size of the store. docs/store.md "Durations indexed by bucket".
//
// A range or an equality on the value is compiled with the same condition on the bucket added
// (`bucket(value) >= bucket(bound)`): the index is sought by the bucket, and the value, the
// index's last column, is tested on the index entry before its row is read. The bucket is
// monotone in the value (never smaller for a larger value), so the added condition holds for
// every value the original one accepts: the answer is the same with or without it, and the index
// only changes how fast it comes. Timestamps follow arrival and keep `(value, seq)`.

import { assertNever } from '../query/assert.js';
import type { FieldDef, FieldType } from '../query/catalog.js';
import type { Dialect } from './dialect-hooks.js';
import { INDEXED_FIELDS } from './layout.js';

/** Whether an ordered field of this type is indexed by bucket: its values do not follow arrival. */
function bucketedType(type: FieldType): boolean {
  switch (type) {
    case 'duration':
    case 'number':
    case 'storageSize':
      return true;
    case 'string':
    case 'keyValue':
    case 'timestamp':
    case 'boolean':
      return false;
    default:
      return assertNever(type, 'field type');
  }
}

/**
 * Whether a field's column index is bucketed on `dialect`: a field with a column index (layout.ts
 * INDEXED_FIELDS) of a bucketed type, on a dialect with `valueBuckets`. The one decision behind
 * the index the schema reconciliation makes (store/schema/reconcile.ts) and the bounds the compiler adds
 * (sql/compile.ts); a column without an index is scanned, where the bucket would only cost its
 * expression on every row.
 */
export function bucketedField(dialect: Pick<Dialect, 'valueBuckets'>, field: FieldDef): boolean {
  return dialect.valueBuckets && bucketedType(field.type) && INDEXED_FIELDS.includes(field);
}

/**
 * The bucket of a number, as SQLite SQL over `operand` (a column reference or a literal): the
 * count of decimal digits of its whole part times 100 plus its first two digits, so a bucket
 * spans at most 10% of its values (10-11, 100-109, ...), 90 buckets a decade. Negative values
 * share the bucket of 0; NULL stays NULL. Monotone: a whole number with more digits is larger,
 * and among as many digits the first two order them; truncation and `max(x, 0)` keep order.
 * The index's expression is this text over the column, written once, here; changing it needs a
 * new index name (and a migration that makes it), or the old index would stay under the name.
 */
export function valueBucket(operand: string): string {
  const whole = `CAST(CAST(max(${operand}, 0) AS INTEGER) AS TEXT)`;
  return `(length(${whole}) * 100 + CAST(substr(${whole}, 1, 2) AS INTEGER))`;
}

/** The name of a column's bucketed index (its old `(value, seq)` index was `builds_<column>_idx`). */
function bucketIndexName(column: string): string {
  return `builds_${column}_bucket_idx`;
}

/** DDL of a column's bucketed index: `(bucket, seq, value)`. */
export function bucketIndex(column: string): string {
  const c = `"${column}"`;
  return `CREATE INDEX IF NOT EXISTS ${bucketIndexName(column)} ON builds (${valueBucket(c)}, seq, ${c})`;
}
