// The code build_values.field and build_value_terms.field store for each multi-valued string field
// (store migration 0016): a small integer (one byte in a SQLite record, a smallint on PostgreSQL)
// instead of the field's column name, in the table, its seq index and the terms. Frozen and
// append-only: stored rows carry these numbers, so a code is never changed or reused; a new
// multi-valued field of the catalog takes the next code here. Shared by the search compiler (the
// semi-joins on build_values), the store's writers and readers, and the migration.

import { FIELDS } from '../query/catalog.js';

/** Field column -> code, in the order the codes were handed out. */
export const VALUE_FIELD_CODES: Readonly<Record<string, number>> = Object.freeze({
  requested: 1,
  tag: 2,
  native_requestedtasks: 3,
  native_environment_localipaddress: 4,
  jvmbuild_requestedgoals: 5,
  jvmbuild_environment_localipaddress: 6,
  targetbuild_requestedtargets: 7,
  scalabuild_requestedtasks: 8,
  scalabuild_environment_localipaddress: 9,
  jsbuild_requestedcommands: 10,
  pybuild_requestedcommands: 11,
  failedtest: 12,
  flakytest: 13,
});

const CODES: ReadonlyMap<string, number> = new Map(Object.entries(VALUE_FIELD_CODES));

/**
 * The fields whose values are spread over thousands of distinct values, so that a new build's
 * row lands at a random place in `(field, value, seq)`: a machine's IP addresses (12,700 distinct
 * at 1M demo builds, where tags and requested tasks have a few dozen). On SQLite their rows go to
 * layout.ts RECENT_VALUES first (store/ingest/recent-rows.ts).
 */
export const SPREAD_VALUE_FIELDS: ReadonlySet<number> = new Set([
  VALUE_FIELD_CODES['native_environment_localipaddress']!,
  VALUE_FIELD_CODES['jvmbuild_environment_localipaddress']!,
  VALUE_FIELD_CODES['scalabuild_environment_localipaddress']!,
]);

// Every field whose values live in build_values has a code: a catalog field added without one
// would fail here, when the module loads, not with wrong rows in a database.
for (const f of FIELDS) {
  if (f.multi && f.type !== 'keyValue' && !CODES.has(f.column)) {
    throw new Error(`Multi-valued field ${f.name} has no code in VALUE_FIELD_CODES (src/sql/value-fields.ts)`);
  }
}

/** The code of a multi-valued field's column in build_values. */
export function valueFieldCode(column: string): number {
  const code = CODES.get(column);
  if (code === undefined) throw new RangeError(`${JSON.stringify(column)} is not a multi-valued field column with a code`);
  return code;
}

/** An SQL `CASE` mapping a field column name in `column` to its code (NULL for a name without one). */
export function valueFieldCodeCase(column: string): string {
  return `CASE ${column} ${[...CODES].map(([name, code]) => `WHEN '${name}' THEN ${code}`).join(' ')} END`;
}
