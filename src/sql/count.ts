// Counts that need no build rows. A query that is one exact value of a multi-valued string field
// (`tag:CI`) compiles to `builds.seq IN (SELECT seq FROM build_values WHERE field = … AND value = …)`;
// counting that probes the builds' seq index once per match (~556k probes for `tag:CI` at 1M demo
// builds, 430 ms on SQLite). The value's entries of the (field, value, seq) index are the answer
// themselves: each available build has at most one row per value (the table's key), and a build
// has value rows only while it is available (they are written with its seq and deleted with it).
// So the count is a count of one index range, with the same answer.

import { sql, type RawBuilder } from 'kysely';
import type { CheckedExpr } from '../query/checked.js';
import { termAccess } from './access.js';
import { dialectOf, type Dialect, type SqlDialect } from './dialect.js';
import { valueTables } from './layout.js';
import { valueFieldCode } from './value-fields.js';

/**
 * The value rows of `expr` when it is one exact value of a multi-valued string field of every
 * tool: one read of each table that may hold them, with the field's code and the value; otherwise
 * undefined. Only for a caller who sees every build: the value rows do not know the project.
 */
function valueRows(expr: CheckedExpr, dialect: SqlDialect | Dialect): ((select: RawBuilder<unknown>) => RawBuilder<unknown>[]) | undefined {
  if (expr.kind !== 'term') return undefined;
  const { field, predicate } = expr;
  // A tool-specific field also asks for the build's tool, which only the build row has.
  if (!field.multi || field.type === 'keyValue' || field.tool !== null) return undefined;
  const d = dialectOf(dialect);
  const access = termAccess(field, predicate, d, false);
  if (access.kind !== 'childList' || access.via !== 'index' || access.value === undefined) return undefined;
  const code = valueFieldCode(field.column);
  const value = access.value;
  // The same rows the compiled term reads (compile.ts multiTerm): a spread field's latest values
  // are in a second table, which the ingest moves rows out of and into build_values in one
  // transaction, so a build's row is in one of them.
  return (select) => valueTables(d.recentRows, code).map((table) => sql`SELECT ${select} FROM ${sql.table(table)} AS v WHERE v.field = ${sql.lit(code)} AND v.value = ${value}`);
}

/** The statement counting the builds `expr` matches from its value rows alone (one column `n`), or undefined (see valueRows). */
export function valueRowsCount(expr: CheckedExpr, dialect: SqlDialect | Dialect): RawBuilder<{ n: number | string }> | undefined {
  const reads = valueRows(expr, dialect)?.(sql`count(*)`);
  return reads === undefined ? undefined : sql<{ n: number | string }>`SELECT ${sql.join(reads.map((r) => sql`(${r})`), sql` + `)} AS n`;
}
