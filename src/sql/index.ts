// The query compiler's public face: checked AST -> SQL, and the SQL and plan for `explain`.

import { DummyDriver, Kysely } from 'kysely';
import type { CheckedExpr } from '../query/checked.js';
import type { DatabaseHandle } from '../db/database.js';
import type { SearchDatabase } from '../db/schema.js';
import { compileQuery } from './compile.js';
import { dialectOf, type Dialect, type SqlDialect } from './dialect.js';

export { childListSeqs, compileQuery, type SqlDialect } from './compile.js';
export { valueRowsCount } from './count.js';
export { accessPlan, termAccess, type AccessPlan, type PlannedTerm, type TermAccess, type TermAccessKind } from './access.js';
export { dialectOf, type Dialect, type SearchExecution } from './dialect.js';
export type { DbOrTransaction } from './dialect-hooks.js';
export { migrateSearchIndexes, rebuildTrigramTables } from './indexes.js';

export interface CompiledSql {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

// Kysely instances that only compile (DummyDriver never connects): explainSql needs no database.
const compilers = new Map<Dialect, Kysely<SearchDatabase>>();

function compilerFor(dialect: Dialect): Kysely<SearchDatabase> {
  let k = compilers.get(dialect);
  if (!k) {
    const parts = dialect.kyselyParts();
    k = new Kysely<SearchDatabase>({
      dialect: {
        createAdapter: parts.adapter,
        createDriver: () => new DummyDriver(),
        createIntrospector: parts.introspector,
        createQueryCompiler: parts.queryCompiler,
      },
    });
    compilers.set(dialect, k);
  }
  return k;
}

/** `select id from builds where <query>` for a dialect, with its parameters. Pure. */
export function explainSql(expr: CheckedExpr, dialect: SqlDialect | Dialect, options: { readonly walk?: boolean } = {}): CompiledSql {
  const d = dialectOf(dialect);
  const compiled = compilerFor(d).selectFrom('builds').select('builds.id').where(compileQuery(expr, d, options)).compile();
  return { sql: compiled.sql, parameters: compiled.parameters };
}

/** The database's plan for the search: SQLite EXPLAIN QUERY PLAN as a tree, PostgreSQL EXPLAIN. */
export async function explainPlan(handle: DatabaseHandle, expr: CheckedExpr): Promise<string> {
  const d = dialectOf(handle.dialect);
  const { sql: text, parameters } = explainSql(expr, d);
  return d.explain(handle, text, parameters);
}
