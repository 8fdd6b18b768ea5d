// Takes a store back to the build_values layout before store migration 0015, for the tests that
// rewind the migrations to an older schema: SQLite a rowid table with the search index
// (field, value, seq) and the seq index, the value terms' triggers kept; PostgreSQL the search
// index not unique; and 0015 not recorded as run. The rows stay as they are. Migrations 0017
// and 0016 (through the 0016 rewind) are undone first: kysely runs migrations in order only.

import { sql, type Kysely } from 'kysely';
import { undoValueFieldCodes } from './value-field-codes-rewind.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function undoValuesKey(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await undoValueFieldCodes(db, dialect);
  if (dialect === 'sqlite') {
    const triggers = (await sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'build_values' ORDER BY name`.execute(db)).rows;
    await sql`CREATE TABLE build_values_rowid (seq bigint NOT NULL, field text NOT NULL, value text NOT NULL)`.execute(db);
    await sql`INSERT INTO build_values_rowid (seq, field, value) SELECT seq, field, value FROM build_values ORDER BY seq`.execute(db);
    await sql`DROP TABLE build_values`.execute(db);
    await sql`ALTER TABLE build_values_rowid RENAME TO build_values`.execute(db);
    await sql`CREATE INDEX build_values_seq ON build_values (seq)`.execute(db);
    await sql`CREATE INDEX build_values_search_idx ON build_values (field, value, seq)`.execute(db);
    for (const t of triggers) await sql.raw(t.sql).execute(db);
  } else {
    await sql`DROP INDEX build_values_search_idx`.execute(db);
    await sql`CREATE INDEX build_values_search_idx ON build_values (field, value text_pattern_ops, seq)`.execute(db);
  }
  await sql`DELETE FROM store_migration WHERE name = '0015_values_key'`.execute(db);
}
