// Takes a store back to the layout before store migration 0016, for the tests that rewind the
// migrations to an older schema: build_values' and build_value_terms' field the column name again
// (SQLite: the WITHOUT ROWID table of 0015 with a text field, the terms with their ids kept, the
// triggers of both kept; PostgreSQL: text columns), and 0016 not recorded as run. Migration 0017
// (content hashes as bytes) is undone first.

import { sql, type Kysely } from 'kysely';
import { VALUE_FIELD_CODES } from '../../src/sql/value-fields.js';
import { undoHashBytes } from './hash-bytes-rewind.js';

/** An SQL `CASE` from a code in `column` back to the field's column name. */
const nameOf = (column: string): string => `CASE ${column} ${Object.entries(VALUE_FIELD_CODES).map(([name, code]) => `WHEN ${code} THEN '${name}'`).join(' ')} END`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function undoValueFieldCodes(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  // A later migration first: kysely runs migrations in order only.
  await undoHashBytes(db, dialect);
  if (dialect === 'sqlite') {
    const type = (await sql<{ type: string }>`SELECT type FROM pragma_table_info('build_values') WHERE name = 'field'`.execute(db)).rows[0]?.type ?? '';
    if (/^integer$/i.test(type)) {
      const triggers = (
        await sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ('build_values', 'build_value_terms') ORDER BY name`.execute(db)
      ).rows;
      await sql`CREATE TABLE build_values_named (field text NOT NULL, value text NOT NULL, seq integer NOT NULL, PRIMARY KEY (field, value, seq)) WITHOUT ROWID`.execute(db);
      await sql`INSERT INTO build_values_named (field, value, seq) SELECT ${sql.raw(nameOf('field'))}, value, seq FROM build_values`.execute(db);
      await sql`CREATE TABLE build_value_terms_named (id INTEGER PRIMARY KEY, field TEXT NOT NULL, value TEXT NOT NULL, UNIQUE (field, value))`.execute(db);
      await sql`INSERT INTO build_value_terms_named (id, field, value) SELECT id, ${sql.raw(nameOf('field'))}, value FROM build_value_terms`.execute(db);
      await sql`DROP TABLE build_values`.execute(db);
      await sql`DROP TABLE build_value_terms`.execute(db);
      await sql`ALTER TABLE build_values_named RENAME TO build_values`.execute(db);
      await sql`ALTER TABLE build_value_terms_named RENAME TO build_value_terms`.execute(db);
      await sql`CREATE INDEX build_values_seq ON build_values (seq)`.execute(db);
      for (const t of triggers) await sql.raw(t.sql).execute(db);
    }
  } else {
    const type = (await sql<{ t: string }>`SELECT data_type AS t FROM information_schema.columns WHERE table_name = 'build_values' AND column_name = 'field'`.execute(db)).rows[0]?.t ?? '';
    if (type === 'smallint') {
      await sql`ALTER TABLE build_values ALTER COLUMN field TYPE text USING (${sql.raw(nameOf('field'))})`.execute(db);
      await sql`ALTER TABLE build_value_terms ALTER COLUMN field TYPE text USING (${sql.raw(nameOf('field'))})`.execute(db);
    }
  }
  await sql`DELETE FROM store_migration WHERE name = '0016_value_field_codes'`.execute(db);
}
