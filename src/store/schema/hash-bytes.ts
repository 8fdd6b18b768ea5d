// Store migration 0017: the SHA-256 content hashes (`builds.content_hash`, `build_events.hash`) as
// their 32 bytes instead of 43 characters of base64url text (docs/store.md "Content hashes as
// bytes"). The text form stays the form the rest of the product handles: the ingest's plan
// compares hashes as text, and only the rows hold bytes (`hashBytes` on the way in, `hashText` on
// the way out).
//
// SQLite: a column's declared type does not restrict what it holds, and a BLOB is stored as a BLOB
// in a column of TEXT affinity, so the tables keep their declared types and the rows are rewritten
// in place, in batches in the order of each table's B-tree (builds by rowid, build_events by its
// key), each batch a commit of its own; a run that was interrupted goes over the rows again and
// converts those still held as text. No table rebuild: neither column is in an index, so the
// UPDATE touches the table's own pages only, where rebuilding `builds` would copy ~150 columns and
// rebuild its 17 indexes. PostgreSQL: both columns become bytea (one ALTER each; the migration
// runs in one transaction there).

import { sql, type Kysely } from 'kysely';
import type { DatabaseHandle } from '../../db/database.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;
type Dialect = DatabaseHandle['dialect'];

/** Rows rewritten per batch (SQLite). */
export const HASH_BYTES_BATCH = 2000;

export type HashBytesProgress = (table: 'builds' | 'build_events', done: number, total: number) => void;

/** A content hash as base64url text of 32 bytes (canonical.ts `contentHash`). */
const HASH_TEXT = /^[A-Za-z0-9_-]{43}$/;

/** The bytes stored for a content hash (base64url text of SHA-256, canonical.ts). */
export function hashBytes(text: string): Buffer {
  return Buffer.from(text, 'base64url');
}

/**
 * The text form of a stored content hash: its bytes in base64url. A row still holding text (a
 * value that is not a hash's text, which the migration leaves as it is) is returned as it is.
 */
export function hashText(stored: unknown): string {
  if (typeof stored === 'string') return stored;
  if (stored instanceof Uint8Array) return Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength).toString('base64url');
  throw new Error(`A stored content hash is neither text nor bytes: ${typeof stored}`);
}

/** The bytes of `text` when it is a content hash's text, else undefined (left as text). */
function convertible(text: unknown): Buffer | undefined {
  return typeof text === 'string' && HASH_TEXT.test(text) ? hashBytes(text) : undefined;
}

export async function migrateHashBytes(db: Db, dialect: Dialect, progress: HashBytesProgress, batch = HASH_BYTES_BATCH): Promise<void> {
  if (dialect === 'sqlite') {
    await sqliteBuilds(db, progress, batch);
    await sqliteEvents(db, progress, batch);
  } else {
    await postgresHashBytes(db, progress);
  }
}

const num = (v: unknown): number => Number(v);

/** Rewrites the rows `tuples` ([key..., bytes]) with one UPDATE ... FROM (VALUES ...). */
async function rewrite(db: Db, update: (values: ReturnType<typeof sql>) => ReturnType<typeof sql>, tuples: readonly (readonly unknown[])[]): Promise<void> {
  if (tuples.length === 0) return;
  await update(sql.join(tuples.map((t) => sql`(${sql.join(t)})`))).execute(db);
}

async function sqliteBuilds(db: Db, progress: HashBytesProgress, batch: number): Promise<void> {
  const total = num((await sql<{ n: number }>`SELECT count(*) AS n FROM builds`.execute(db)).rows[0]!.n);
  let done = 0;
  let after = Number.MIN_SAFE_INTEGER;
  for (;;) {
    // In rowid order: each batch rewrites neighbouring pages of the table's B-tree.
    const rows = (
      await sql<{ r: number; h: unknown }>`SELECT rowid AS r, content_hash AS h FROM builds WHERE rowid > ${after} ORDER BY rowid LIMIT ${batch}`.execute(db)
    ).rows;
    if (rows.length === 0) break;
    const tuples = rows.flatMap((row) => {
      const bytes = convertible(row.h);
      return bytes === undefined ? [] : [[row.r, bytes]];
    });
    await rewrite(db, (values) => sql`UPDATE builds SET content_hash = v.column2 FROM (VALUES ${values}) AS v WHERE builds.rowid = v.column1`, tuples);
    done += rows.length;
    after = num(rows[rows.length - 1]!.r);
    progress('builds', Math.min(done, total), total);
    // A turn of the event loop, so that the log line is written now (see fillRollups).
    await new Promise((r) => setImmediate(r));
  }
}

async function sqliteEvents(db: Db, progress: HashBytesProgress, batch: number): Promise<void> {
  const total = num((await sql<{ n: number }>`SELECT count(*) AS n FROM build_events`.execute(db)).rows[0]!.n);
  let done = 0;
  let after: [number, number] = [Number.MIN_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
  for (;;) {
    // In key order (events_key, chunk): the table is that B-tree (WITHOUT ROWID, migration 0014).
    const rows = (
      await sql<{ k: number; c: number; h: unknown }>`SELECT events_key AS k, chunk AS c, hash AS h FROM build_events
        WHERE (events_key, chunk) > (${after[0]}, ${after[1]}) ORDER BY events_key, chunk LIMIT ${batch}`.execute(db)
    ).rows;
    if (rows.length === 0) break;
    const tuples = rows.flatMap((row) => {
      const bytes = convertible(row.h);
      return bytes === undefined ? [] : [[row.k, row.c, bytes]];
    });
    await rewrite(
      db,
      (values) => sql`UPDATE build_events SET hash = v.column3 FROM (VALUES ${values}) AS v WHERE build_events.events_key = v.column1 AND build_events.chunk = v.column2`,
      tuples,
    );
    done += rows.length;
    const last = rows[rows.length - 1]!;
    after = [num(last.k), num(last.c)];
    progress('build_events', Math.min(done, total), total);
    await new Promise((r) => setImmediate(r));
  }
}

/** base64url text of a hash to bytea: base64 with + and / and its padding, then decode(). */
const decodeSql = (column: string): ReturnType<typeof sql> =>
  sql.raw(`CASE WHEN ${column} ~ '^[A-Za-z0-9_-]{43}$' THEN decode(translate(${column}, '-_', '+/') || '=', 'base64') ELSE convert_to(${column}, 'UTF8') END`);

async function postgresHashBytes(db: Db, progress: HashBytesProgress): Promise<void> {
  // ALTER ... TYPE rewrites each table once, in one statement (no progress within it).
  for (const [table, column] of [
    ['builds', 'content_hash'],
    ['build_events', 'hash'],
  ] as const) {
    const total = num((await sql<{ n: number | string }>`SELECT count(*) AS n FROM ${sql.table(table)}`.execute(db)).rows[0]!.n);
    await sql`ALTER TABLE ${sql.table(table)} ALTER COLUMN ${sql.ref(column)} TYPE bytea USING ${decodeSql(column)}`.execute(db);
    if (total > 0) progress(table, total, total);
  }
}
