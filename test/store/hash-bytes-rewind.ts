// Takes a store back to the content hashes' layout before store migration 0017, for the tests that
// rewind the migrations to an older schema: `builds.content_hash` and `build_events.hash` hold the
// hashes' base64url text again (PostgreSQL: text columns), and 0017 is not recorded as run.
// Migration 0018 is undone first: kysely runs migrations in order only.

import { sql, type Kysely } from 'kysely';
import { undoEventsRowid } from './events-rowid-rewind.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function undoHashBytes(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await undoEventsRowid(db, dialect);
  const ran = (await sql`SELECT 1 FROM store_migration WHERE name = '0017_hash_bytes'`.execute(db)).rows.length > 0;
  if (!ran) return;
  if (dialect === 'sqlite') {
    const text = (b: Uint8Array): string => Buffer.from(b).toString('base64url');
    const builds = (await sql<{ r: number; h: Uint8Array }>`SELECT rowid AS r, content_hash AS h FROM builds WHERE typeof(content_hash) = 'blob'`.execute(db)).rows;
    for (const b of builds) await sql`UPDATE builds SET content_hash = ${text(b.h)} WHERE rowid = ${b.r}`.execute(db);
    const chunks = (await sql<{ k: number; c: number; h: Uint8Array }>`SELECT events_key AS k, chunk AS c, hash AS h FROM build_events WHERE typeof(hash) = 'blob'`.execute(db)).rows;
    for (const c of chunks) await sql`UPDATE build_events SET hash = ${text(c.h)} WHERE events_key = ${c.k} AND chunk = ${c.c}`.execute(db);
  } else {
    for (const [table, column] of [
      ['builds', 'content_hash'],
      ['build_events', 'hash'],
    ]) {
      await sql
        .raw(`ALTER TABLE ${table} ALTER COLUMN ${column} TYPE text USING translate(rtrim(encode(${column}, 'base64'), '='), '+/', '-_')`)
        .execute(db);
    }
  }
  await sql`DELETE FROM store_migration WHERE name = '0017_hash_bytes'`.execute(db);
}
