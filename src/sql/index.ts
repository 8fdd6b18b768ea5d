// The query compiler's public face: checked AST -> SQL, and the SQL and plan for `explain`.

import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type Dialect,
} from 'kysely';
import type { CheckedExpr } from '../query/checked.js';
import type { DatabaseHandle } from '../db/database.js';
import { compileQuery, type SqlDialect } from './compile.js';

export { compileQuery, isExactChildTerm, type SqlDialect } from './compile.js';
export { migrateSearchIndexes, rebuildTrigramTables } from './indexes.js';

export interface CompiledSql {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

// Kysely instances that only compile (DummyDriver never connects): explainSql needs no database.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const compilers = new Map<SqlDialect, Kysely<any>>();

function compilerFor(dialect: SqlDialect): Kysely<any> {
  let k = compilers.get(dialect);
  if (!k) {
    const d: Dialect =
      dialect === 'sqlite'
        ? {
            createAdapter: () => new SqliteAdapter(),
            createDriver: () => new DummyDriver(),
            createIntrospector: (db) => new SqliteIntrospector(db),
            createQueryCompiler: () => new SqliteQueryCompiler(),
          }
        : {
            createAdapter: () => new PostgresAdapter(),
            createDriver: () => new DummyDriver(),
            createIntrospector: (db) => new PostgresIntrospector(db),
            createQueryCompiler: () => new PostgresQueryCompiler(),
          };
    k = new Kysely({ dialect: d });
    compilers.set(dialect, k);
  }
  return k;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function searchQuery(db: Kysely<any>, expr: CheckedExpr, dialect: SqlDialect) {
  return db.selectFrom('builds').select('builds.id').where(compileQuery(expr, dialect));
}

/** `select id from builds where <query>` for a dialect, with its parameters. Pure. */
export function explainSql(expr: CheckedExpr, dialect: SqlDialect): CompiledSql {
  const compiled = searchQuery(compilerFor(dialect), expr, dialect).compile();
  return { sql: compiled.sql, parameters: compiled.parameters };
}

/** The database's plan for the search: SQLite EXPLAIN QUERY PLAN as a tree, PostgreSQL EXPLAIN. */
export async function explainPlan(handle: DatabaseHandle, expr: CheckedExpr): Promise<string> {
  const { sql: text, parameters } = explainSql(expr, handle.dialect);
  if (handle.sqlite) {
    const rows = handle.sqlite.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...(parameters as unknown[])) as {
      id: number;
      parent: number;
      detail: string;
    }[];
    const depth = new Map<number, number>([[0, 0]]);
    return rows
      .map((r) => {
        const d = (depth.get(r.parent) ?? 0) + 1;
        depth.set(r.id, d);
        return `${'  '.repeat(d - 1)}${r.detail}`;
      })
      .join('\n');
  }
  if (!handle.pool) throw new Error('explainPlan: the database handle has neither a SQLite connection nor a PostgreSQL pool');
  const result = await handle.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, parameters as unknown[]);
  return result.rows.map((r) => r['QUERY PLAN']).join('\n');
}
