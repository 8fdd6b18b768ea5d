import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { rollupStatements } from '../../src/store/rollups.ts';
const raw = new BetterSqlite3(process.argv[2]!, { readonly: true });
const db = new Kysely<any>({ dialect: new SqliteDialect({ database: raw }) });
for (const q of rollupStatements(db, 'sqlite', sql`b.seq > ${1} AND b.seq <= ${2}` as any, Number(process.argv[3] ?? 1) as 1)) {
  console.log(q.sql.slice(0, 120).replace(/\s+/g, ' '));
  try { for (const r of raw.prepare('EXPLAIN QUERY PLAN ' + q.sql).all(...q.parameters as any[])) console.log('   ', (r as any).detail); } catch (e) { console.log('   ERR', String(e).slice(0, 200)); }
}
