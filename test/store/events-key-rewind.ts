// Takes a store back to the events layout before store migration 0014, for the tests that rewind
// the migrations to an older schema: build_events keyed by (build_id, chunk) as 0001 and 0008 made
// it (with 0008's index of the rows still stored as text), no builds.events_key, no counter, and
// 0014 not recorded as run. The rows keep their text or compressed form. Migration 0015 (values
// keyed by their search key) is undone first: kysely runs migrations in order only.

import { sql, type Kysely } from 'kysely';
import { undoValuesKey } from './values-key-rewind.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function undoEventsKey(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await undoValuesKey(db, dialect);
  await sql
    .raw(
      `CREATE TABLE build_events_by_id (build_id text NOT NULL, chunk integer NOT NULL, hash text NOT NULL, event_count integer NOT NULL,
        events text NOT NULL, events_packed ${dialect === 'sqlite' ? 'blob' : 'bytea'}, CONSTRAINT build_events_pk PRIMARY KEY (build_id, chunk))`,
    )
    .execute(db);
  await sql`INSERT INTO build_events_by_id (build_id, chunk, hash, event_count, events, events_packed)
    SELECT b.id, e.chunk, e.hash, e.event_count, e.events, e.events_packed FROM build_events e JOIN builds b ON b.events_key = e.events_key`.execute(db);
  await sql`DROP TABLE build_events`.execute(db);
  await sql`ALTER TABLE build_events_by_id RENAME TO build_events`.execute(db);
  await sql`CREATE INDEX build_events_text ON build_events (build_id, chunk) WHERE events_packed IS NULL`.execute(db);
  await sql`ALTER TABLE builds DROP COLUMN events_key`.execute(db);
  await sql`DROP TABLE events_key_counter`.execute(db);
  await sql`DELETE FROM store_migration WHERE name = '0014_events_key'`.execute(db);
}
