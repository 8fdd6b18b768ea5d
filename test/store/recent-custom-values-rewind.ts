// Takes a store back to the custom values' layout before store migration 0019, for the tests that
// rewind the migrations to an older schema: SQLite's build_custom_values without its `recent`
// column (every recent row folded first), the search index on (name, value, seq) again, the
// trigram table's update trigger on every column; and 0019 not recorded as run. PostgreSQL: 0019
// changed nothing, only its record goes.

import { sql, type Kysely } from 'kysely';
import { CUSTOM_VALUES_TRIGRAM as C } from '../../src/sql/layout.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function undoRecentCustomValues(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const ran = (await sql`SELECT 1 FROM store_migration WHERE name = '0019_recent_custom_values'`.execute(db)).rows.length > 0;
  if (!ran) return;
  if (dialect === 'sqlite') {
    await sql`DROP INDEX build_custom_values_search_idx`.execute(db);
    await sql`ALTER TABLE build_custom_values DROP COLUMN recent`.execute(db);
    await sql`CREATE INDEX build_custom_values_search_idx ON build_custom_values (name, value, seq)`.execute(db);
    await sql.raw(`DROP TRIGGER ${C}_au`).execute(db);
    await sql
      .raw(
        `CREATE TRIGGER ${C}_au AFTER UPDATE ON build_custom_values BEGIN
        INSERT INTO ${C}(${C}, rowid, name, value) VALUES ('delete', old.rowid, old.name, old.value);
        INSERT INTO ${C}(rowid, name, value) VALUES (new.rowid, new.name, new.value);
      END`,
      )
      .execute(db);
  }
  await sql`DELETE FROM store_migration WHERE name = '0019_recent_custom_values'`.execute(db);
}
