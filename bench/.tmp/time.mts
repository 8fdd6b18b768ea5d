import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { rollupStatements } from '../../src/store/rollups.ts';
const raw = new BetterSqlite3(process.argv[2]!, { readonly: true });
raw.pragma('cache_size = -65536');
const db = new Kysely<any>({ dialect: new SqliteDialect({ database: raw }) });
for (const q of rollupStatements(db, 'sqlite', sql`b.seq > ${500000} AND b.seq <= ${520000}` as any, 1)) {
  const sel = q.sql.slice(q.sql.indexOf('SELECT'), q.sql.indexOf('ON CONFLICT'));
  const t = performance.now();
  const n = raw.prepare(sel).all(...q.parameters as any[]).length;
  console.log(q.sql.slice(12, 40), n, 'rows', (performance.now() - t).toFixed(0), 'ms');
}
