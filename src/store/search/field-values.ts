// The values seen in the data for a String field, most frequent first, for completion: the
// distinct values that start with a prefix, with how many builds have each.
//
// Bounded: it reads at most SCAN_ROWS matching entries through an existing index (`builds
// (column, seq)` for single-valued fields, `build_values (field, value, seq)` for multi-valued
// ones, and for the spread ones that of their recent rows too, or the project index for a caller
// restricted to some projects), and counts those. So the
// cost does not grow with the store; counts are exact when the prefix's entries fit (a typed
// prefix narrows them fast), and with a short prefix on a large store they are the counts among
// the first entries the index scan meets. Visibility is applied to the entries read, so a caller never sees a value only builds
// of other projects have.

import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import type { FieldDef } from '../../query/catalog.js';
import type { Database } from '../../db/schema.js';
import { dialectOf, type Dialect, type SqlDialect, type StringTarget } from '../../sql/dialect.js';
import { valueFieldCode } from '../../sql/value-fields.js';
import { valueTables } from '../../sql/layout.js';

/** Index entries read at most per call. */
export const SCAN_ROWS = 20_000;
/** Values returned at most per call. */
export const MAX_VALUES = 100;

export { offersDataValues } from '../../query/catalog.js';

/**
 * The query for the most frequent values of `field` starting with `prefix` (lower-cased, as the
 * store keeps them), among the caller's builds (`visible`).
 */
export function fieldValuesQuery(
  db: Kysely<Database>,
  dialect: SqlDialect | Dialect,
  field: FieldDef,
  prefix: string,
  limit: number,
  /** The caller's builds, as a condition on `builds`. */
  visible: Expression<SqlBool>,
) {
  const p = prefix.toLowerCase();
  const target: StringTarget = field.multi ? { kind: 'values', alias: 'v', field: field.column } : { kind: 'builds', column: field.column };
  const column = field.multi ? sql.ref<string>('v.value') : sql.ref<string>(`builds.${field.column}`);
  // A prefix is a range on the index (SQLite) or a LIKE that PostgreSQL turns into one.
  const starts = p === '' ? sql<SqlBool>`${column} IS NOT NULL` : dialectOf(dialect).wildcardMatch(target, [p, ''], false);
  // The field's tool, the prefix and the caller's visibility, as one condition on both shapes.
  const conditions = [...(field.tool === null ? [] : [sql<SqlBool>`builds.buildtool = ${field.tool}`]), starts, visible];
  const where = sql<SqlBool>`(${sql.join(conditions, sql` AND `)})`;
  // No ORDER BY: it would make the database sort every match first (PostgreSQL's btree is in
  // text_pattern_ops order, and a caller restricted to some projects is read through the project
  // index). Without one, the LIMIT bounds the rows read whatever plan is chosen; the entries
  // counted are the first the index scan meets (for an unrestricted caller on SQLite: value order).
  // A spread field's latest values are in a second table (recent-rows.ts): read after the others.
  const valuesIn = (table: 'build_values' | 'build_values_recent', code: number) =>
    db.selectFrom(`${table} as v`).innerJoin('builds', 'builds.seq', 'v.seq').where('v.field', '=', code).where(where).select(column.as('value'));
  const values = (code: number) => {
    const [first, ...rest] = valueTables(dialectOf(dialect).recentRows, code).map((t) => valuesIn(t, code));
    return rest.reduce((all, q) => all.unionAll(q), first!);
  };
  const seen = field.multi
    ? values(valueFieldCode(field.column)).limit(SCAN_ROWS).as('seen')
    : db.selectFrom('builds').where('builds.seq', 'is not', null).where(where).select(column.as('value')).limit(SCAN_ROWS).as('seen');
  return db
    .selectFrom(seen)
    .select(['seen.value', sql<number>`count(*)`.as('count')])
    .groupBy('seen.value')
    .orderBy('count', 'desc')
    .orderBy('seen.value')
    .limit(Math.max(1, Math.min(MAX_VALUES, Math.floor(limit))));
}
