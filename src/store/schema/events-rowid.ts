// Store migration 0018: SQLite's build_events as a rowid table (docs/store.md "Event chunks by
// rowid"). Since 0014 the table was WITHOUT ROWID on (events_key, chunk): an index B-tree, whose
// interior pages hold whole ~480-byte records (each stored once: in an interior page or a leaf),
// so a 4 KiB page had a fan-out of about 8 and the tree 6 levels at 100k builds. A rowid table's
// interior pages hold integer keys only (3 levels); the bytes are about the same, what saves them
// is the hash no longer stored (below). The key is packed into the rowid: `id = events_key * 2^20 + chunk`, so one build's chunks
// are the rowid range [events_key * 2^20, (events_key + 1) * 2^20), read in chunk order, and a new
// build's chunks are still appended at the end of the tree. `events_key` and `chunk` stay as
// VIRTUAL generated columns (computed from the rowid, not stored), so that a reader may select
// them; a condition on the build's chunks must be a range on `id` (eventsRange) to be a range scan.
//
// The chunk's content hash (`hash`, 32 bytes and its header byte a row) is not kept on SQLite: it
// is the content hash of the chunk's line, the SHA-256 of the build's header and the chunk's
// encoded events as stored (prepare.ts), so the one reader of it, the ingest's plan loading a
// stored build, computes it again from the events it reads anyway (stored-build.ts).
//
// PostgreSQL keeps its (events_key, chunk) primary key: a heap table's index holds keys only, so it
// never had the problem. The migration does nothing there.
//
// The conversion copies the rows into a new table in key order, a batch at a time, each batch a
// commit of its own (an interrupted run starts over), then swaps the tables in one transaction.

import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DatabaseHandle } from '../../db/database.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/** Bits of the rowid that hold the chunk number (SQLite, store migration 0018). */
export const CHUNK_BITS = 20;
/** 2^20: the rowid of a build's first chunk is its events_key times this. */
export const CHUNK_SPAN = 2 ** CHUNK_BITS;
/**
 * The most parts (chunks) one build may be stored in, on either database (the same answers on
 * both): chunks are numbered 0 to MAX_BUILD_PARTS - 1. A part beyond it is rejected (ingest/plan.ts).
 */
export const MAX_BUILD_PARTS = CHUNK_SPAN;
/**
 * The largest events_key whose rowids stay exact in a JavaScript number (2^53 / 2^20 = 2^33, about
 * 8.6 billion builds ever stored).
 */
export const MAX_EVENTS_KEY = Math.floor(Number.MAX_SAFE_INTEGER / CHUNK_SPAN) - 1;

/** The rowid of chunk `chunk` of the build whose events_key is `key`. */
export function eventsId(key: number, chunk: number): number {
  if (!Number.isSafeInteger(key) || key < 0 || key > MAX_EVENTS_KEY) throw new RangeError(`events_key ${key} is outside 0..${MAX_EVENTS_KEY}`);
  if (!Number.isInteger(chunk) || chunk < 0 || chunk >= CHUNK_SPAN) throw new RangeError(`chunk ${chunk} is outside 0..${CHUNK_SPAN - 1}`);
  return key * CHUNK_SPAN + chunk;
}

/**
 * SQL: the rowids of the chunks of the build(s) whose events_key is `key` (an SQL expression),
 * after chunk `after` when given: `id >= key * 2^20 + after + 1 AND id < (key + 1) * 2^20`,
 * a range on the rowid. `column` names the rowid column (qualified when joined).
 */
export function eventsRange(key: RawBuilder<unknown>, column = 'id', after?: RawBuilder<unknown>): RawBuilder<boolean> {
  const id = sql.raw(column);
  const from = after === undefined ? sql`(${key}) * ${sql.lit(CHUNK_SPAN)}` : sql`(${key}) * ${sql.lit(CHUNK_SPAN)} + (${after}) + 1`;
  return sql<boolean>`${id} >= ${from} AND ${id} < ((${key}) + 1) * ${sql.lit(CHUNK_SPAN)}`;
}

/** The table of 0018 (SQLite), under `name`. */
export function createRowidEventsSql(name: string): RawBuilder<unknown> {
  return sql`CREATE TABLE ${sql.table(name)} (
    id integer PRIMARY KEY,
    event_count integer NOT NULL,
    events text NOT NULL,
    events_packed blob,
    events_key integer GENERATED ALWAYS AS (id >> ${sql.lit(CHUNK_BITS)}) VIRTUAL,
    chunk integer GENERATED ALWAYS AS (id & ${sql.lit(CHUNK_SPAN - 1)}) VIRTUAL
  )`;
}

/** Whether build_events is the rowid table of 0018 (SQLite). */
export async function eventsByRowid(db: Db): Promise<boolean> {
  return (await sql`SELECT 1 FROM pragma_table_xinfo('build_events') WHERE name = 'id'`.execute(db)).rows.length > 0;
}

/** Rows copied per batch: about 1 MB of compressed chunks at a time, a commit each. */
export const EVENTS_ROWID_BATCH = 2000;

export type EventsRowidProgress = (done: number, total: number) => void;

export async function migrateEventsRowid(db: Db, dialect: DatabaseHandle['dialect'], progress: EventsRowidProgress, batch = EVENTS_ROWID_BATCH): Promise<void> {
  if (dialect !== 'sqlite') return;
  // A run stopped after the swap (kysely records a migration after it returns) has nothing to do.
  if (await eventsByRowid(db)) return;
  // Every batch commits by itself: a run that was interrupted left a partial copy and starts over.
  await sql`DROP TABLE IF EXISTS build_events_rowid`.execute(db);
  await createRowidEventsSql('build_events_rowid').execute(db);
  const total = Number((await sql<{ n: number }>`SELECT count(*) AS n FROM build_events`.execute(db)).rows[0]!.n);
  // The old table is a B-tree on (events_key, chunk): each batch is a range read from where the
  // last one ended, and appends at the end of the new table. Chunks beyond the bound cannot be
  // stored by any release (the parts of a build were never that many), but are checked all the same.
  let done = 0;
  let after: [number, number] = [-1, -1];
  for (;;) {
    const last = (
      await sql<{ k: number; c: number }>`SELECT events_key AS k, chunk AS c FROM build_events WHERE (events_key, chunk) > (${after[0]}, ${after[1]})
        ORDER BY events_key, chunk LIMIT 1 OFFSET ${batch - 1}`.execute(db)
    ).rows[0];
    const upTo = last === undefined ? sql`` : sql`AND (events_key, chunk) <= (${last.k}, ${last.c})`;
    const beyond = (
      await sql<{ k: number; c: number }>`SELECT events_key AS k, chunk AS c FROM build_events WHERE (events_key, chunk) > (${after[0]}, ${after[1]}) ${upTo}
        AND (chunk >= ${CHUNK_SPAN} OR events_key < 0 OR events_key > ${MAX_EVENTS_KEY}) LIMIT 1`.execute(db)
    ).rows[0];
    if (beyond !== undefined) throw new Error(`build_events holds chunk ${beyond.c} of events_key ${beyond.k}, beyond what store migration 0018 can key (chunks below ${CHUNK_SPAN}, keys up to ${MAX_EVENTS_KEY})`);
    await sql`INSERT INTO build_events_rowid (id, event_count, events, events_packed)
      SELECT events_key * ${sql.lit(CHUNK_SPAN)} + chunk, event_count, events, events_packed FROM build_events
      WHERE (events_key, chunk) > (${after[0]}, ${after[1]}) ${upTo} ORDER BY events_key, chunk`.execute(db);
    done = last === undefined ? total : done + batch;
    if (total > 0) progress(Math.min(done, total), total);
    // A turn of the event loop, so that the log line is written now (see fillRollups).
    await new Promise((r) => setImmediate(r));
    if (last === undefined) break;
    after = [Number(last.k), Number(last.c)];
  }
  // The swap, in one transaction; the rows still to compress (0008's partial index) on the rowid.
  await db.transaction().execute(async (trx) => {
    await sql`DROP TABLE build_events`.execute(trx);
    await sql`ALTER TABLE build_events_rowid RENAME TO build_events`.execute(trx);
    await sql`CREATE INDEX build_events_text ON build_events (id) WHERE events_packed IS NULL`.execute(trx);
  });
}
