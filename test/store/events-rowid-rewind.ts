// Takes a store back to build_events' layout before store migration 0018, for the tests that rewind
// the migrations to an older schema: SQLite a WITHOUT ROWID table keyed by (events_key, chunk), with
// 0008's partial index of the rows still held as text on that key; and 0018 not recorded as run.
// The rows stay as they are. PostgreSQL: 0018 changed nothing, only its record goes.

import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function undoEventsRowid(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const ran = (await sql`SELECT 1 FROM store_migration WHERE name = '0018_events_rowid'`.execute(db)).rows.length > 0;
  if (!ran) return;
  if (dialect === 'sqlite') {
    await sql`CREATE TABLE build_events_keyed (events_key integer NOT NULL, chunk integer NOT NULL, hash text NOT NULL, event_count integer NOT NULL,
      events text NOT NULL, events_packed blob, CONSTRAINT build_events_key_pk PRIMARY KEY (events_key, chunk)) WITHOUT ROWID`.execute(db);
    await sql`INSERT INTO build_events_keyed SELECT events_key, chunk, hash, event_count, events, events_packed FROM build_events ORDER BY id`.execute(db);
    await sql`DROP TABLE build_events`.execute(db);
    await sql`ALTER TABLE build_events_keyed RENAME TO build_events`.execute(db);
    await sql`CREATE INDEX build_events_text ON build_events (events_key, chunk) WHERE events_packed IS NULL`.execute(db);
  }
  await sql`DELETE FROM store_migration WHERE name = '0018_events_rowid'`.execute(db);
}
