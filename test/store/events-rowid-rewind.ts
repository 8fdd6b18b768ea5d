// Takes a store back to build_events' layout before store migration 0018, for the tests that rewind
// the migrations to an older schema: SQLite a WITHOUT ROWID table keyed by (events_key, chunk), with
// 0008's partial index of the rows still held as text on that key, each chunk's content hash
// stored again (computed as the ingest did: its line's header and encoded events); and 0018 not
// recorded as run. PostgreSQL: 0018 changed nothing, only its record goes. The later migrations
// are undone first.

import { sql, type Kysely } from 'kysely';
import { contentHash } from '../../src/store/events/canonical.js';
import { storedEvents } from '../../src/store/events/event-codec.js';
import { hashBytes } from '../../src/store/schema/hash-bytes.js';
import type { ToolType } from '../../src/query/catalog.js';
import { undoRecentRows } from './recent-rows-rewind.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function undoEventsRowid(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await undoRecentRows(db);
  const ran = (await sql`SELECT 1 FROM store_migration WHERE name = '0018_events_rowid'`.execute(db)).rows.length > 0;
  if (!ran) return;
  if (dialect === 'sqlite') {
    await sql`CREATE TABLE build_events_keyed (events_key integer NOT NULL, chunk integer NOT NULL, hash text NOT NULL, event_count integer NOT NULL,
      events text NOT NULL, events_packed blob, CONSTRAINT build_events_key_pk PRIMARY KEY (events_key, chunk)) WITHOUT ROWID`.execute(db);
    // Each chunk's hash again, as the ingest stored it before 0018: the content hash of its line.
    const rows = (
      await sql<{ k: number; c: number; n: number; e: string; p: Uint8Array | null; t: string; v: string; a: string }>`SELECT e.events_key AS k, e.chunk AS c,
        e.event_count AS n, e.events AS e, e.events_packed AS p, b.tool_type AS t, b.tool_version AS v, b.agent_version AS a
        FROM build_events AS e JOIN builds AS b ON b.events_key = e.events_key ORDER BY e.id`.execute(db)
    ).rows;
    for (const r of rows) {
      const hash = hashBytes(contentHash({ toolType: r.t as ToolType, toolVersion: r.v, agentVersion: r.a }, storedEvents(r.e, r.p)));
      await sql`INSERT INTO build_events_keyed VALUES (${r.k}, ${r.c}, ${hash}, ${r.n}, ${r.e}, ${r.p})`.execute(db);
    }
    await sql`DROP TABLE build_events`.execute(db);
    await sql`ALTER TABLE build_events_keyed RENAME TO build_events`.execute(db);
    await sql`CREATE INDEX build_events_text ON build_events (events_key, chunk) WHERE events_packed IS NULL`.execute(db);
  }
  await sql`DELETE FROM store_migration WHERE name = '0018_events_rowid'`.execute(db);
}
