// Store migration 0016: build_values' field, and build_value_terms' (search migration 0003), as the
// field's code (sql/value-fields.ts VALUE_FIELD_CODES) instead of its column name: one byte in a
// SQLite record instead of ~13 characters, in the table and again in its seq index.
//
// SQLite: build_values is rebuilt into a new WITHOUT ROWID table keyed by (field, value, seq),
// copied a field at a time in code order and within a field in (value, seq) order, a batch at a
// time with progress: every batch appends at the end of the new B-tree. The terms table is small
// (a row per distinct value) and is copied in one statement keeping its ids, so its trigram table
// (keyed by the id, holding only the value) stays valid as it is. The swap drops the old tables
// and renames the new ones in one transaction, recreating the (seq) index and the triggers both
// tables had (the terms' upkeep on build_values, the trigram upkeep on the terms): their SQL reads
// `new.field` and needs no change. PostgreSQL: both columns change type in place (smallint),
// which rewrites the tables and rebuilds their indexes; the migration runs in one transaction.
//
// Frozen with the migration: it does what it did when it was written.

import { sql, type Kysely } from 'kysely';
import type { DatabaseHandle } from '../../db/database.js';
import { VALUE_FIELD_CODES, valueFieldCodeCase } from '../../sql/value-fields.js';
import { VALUES_SEQ_INDEX } from '../../sql/layout.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;
type Dialect = DatabaseHandle['dialect'];


/** Rows copied per batch (SQLite), a commit each. */
export const VALUE_FIELD_CODES_BATCH = 100_000;

export type ValueFieldCodesProgress = (done: number, total: number) => void;

const num = (v: unknown): number => Number(v);

/** Name -> code, in code order. The list only grows, so it names every field a database from before 0016 holds. */
const CODES_0016: readonly (readonly [string, number])[] = Object.entries(VALUE_FIELD_CODES).sort((a, b) => a[1] - b[1]);

/**
 * The distinct field names build_values holds, one index seek each (min after the last), so that
 * a name without a code is reported before anything is changed.
 */
async function storedFieldNames(db: Db, dialect: Dialect): Promise<string[]> {
  const names: string[] = [];
  let last: string | null = null;
  // PostgreSQL's search index is text_pattern_ops: min() and `>` on the collation would not use it.
  const gt = dialect === 'sqlite' ? sql`>` : sql`~>~`;
  for (;;) {
    const row: { f: string | null } | undefined = (
      await (last === null
        ? sql<{ f: string | null }>`SELECT field AS f FROM build_values ORDER BY field ${dialect === 'sqlite' ? sql`` : sql`USING ~<~`} LIMIT 1`
        : sql<{ f: string | null }>`SELECT field AS f FROM build_values WHERE field ${gt} ${last} ORDER BY field ${dialect === 'sqlite' ? sql`` : sql`USING ~<~`} LIMIT 1`
      ).execute(db)
    ).rows[0];
    if (row === undefined || row.f === null) return names;
    names.push(row.f);
    last = row.f;
  }
}

async function checkNames(db: Db, dialect: Dialect): Promise<void> {
  const known = new Set(CODES_0016.map(([n]) => n));
  const unknown = (await storedFieldNames(db, dialect)).filter((n) => !known.has(n));
  if (unknown.length > 0) {
    throw new Error(`store migration 0016: build_values holds values of fields without a code: ${unknown.join(', ')}`);
  }
}

export async function migrateValueFieldCodes(db: Db, dialect: Dialect, progress: ValueFieldCodesProgress, batch = VALUE_FIELD_CODES_BATCH): Promise<void> {
  if (dialect === 'sqlite') await sqliteValueFieldCodes(db, progress, batch);
  else await postgresValueFieldCodes(db, progress);
}

async function sqliteValueFieldCodes(db: Db, progress: ValueFieldCodesProgress, batch: number): Promise<void> {
  // A run stopped after the swap (kysely records a migration after it returns) has nothing to do.
  const type = (await sql<{ type: string }>`SELECT type FROM pragma_table_info('build_values') WHERE name = 'field'`.execute(db)).rows[0]?.type ?? '';
  if (/^integer$/i.test(type)) return;
  await checkNames(db, 'sqlite');
  // Every batch commits by itself: a run that was interrupted left a partial copy and starts over.
  await sql`DROP TABLE IF EXISTS build_values_coded`.execute(db);
  await sql`DROP TABLE IF EXISTS build_value_terms_coded`.execute(db);
  await sql`CREATE TABLE build_values_coded (field integer NOT NULL, value text NOT NULL, seq integer NOT NULL, PRIMARY KEY (field, value, seq)) WITHOUT ROWID`.execute(db);
  const total = num((await sql<{ n: number }>`SELECT count(*) AS n FROM build_values`.execute(db)).rows[0]!.n);
  let done = 0;
  for (const [name, code] of CODES_0016) {
    let from: [string, number] | undefined;
    for (;;) {
      const after = from === undefined ? sql`` : sql`AND (value, seq) > (${from[0]}, ${from[1]})`;
      const copied = await sql`INSERT INTO build_values_coded (field, value, seq)
        SELECT ${sql.lit(code)}, value, seq FROM build_values WHERE field = ${name} ${after} ORDER BY value, seq LIMIT ${batch}`.execute(db);
      const n = num(copied.numAffectedRows ?? 0);
      done += n;
      if (n > 0 && total > 0) progress(Math.min(done, total), total);
      // A turn of the event loop, so that the log line is written now (see fillRollups).
      await new Promise((r) => setImmediate(r));
      if (n < batch) break;
      const last = (await sql<{ value: string; seq: number }>`SELECT value, seq FROM build_values_coded WHERE field = ${sql.lit(code)} ORDER BY value DESC, seq DESC LIMIT 1`.execute(db)).rows[0]!;
      from = [last.value, num(last.seq)];
    }
  }
  // The terms, ids kept (the trigram table is keyed by them). A term of a name without a code can
  // only be left from rows since deleted (terms are never removed; checkNames saw every row's
  // name): it names no build, and is deleted first (its trigger takes it out of the trigram table).
  await sql`DELETE FROM build_value_terms WHERE field NOT IN (${sql.join(CODES_0016.map(([n]) => n))})`.execute(db);
  await sql`CREATE TABLE build_value_terms_coded (id INTEGER PRIMARY KEY, field INTEGER NOT NULL, value TEXT NOT NULL, UNIQUE (field, value))`.execute(db);
  await sql`INSERT INTO build_value_terms_coded (id, field, value) SELECT id, ${sql.raw(valueFieldCodeCase('field'))}, value FROM build_value_terms ORDER BY id`.execute(db);
  const triggers = (
    await sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ('build_values', 'build_value_terms') ORDER BY name`.execute(db)
  ).rows;
  await db.transaction().execute(async (trx) => {
    await sql`DROP TABLE build_values`.execute(trx);
    await sql`DROP TABLE build_value_terms`.execute(trx);
    await sql`ALTER TABLE build_values_coded RENAME TO build_values`.execute(trx);
    await sql`ALTER TABLE build_value_terms_coded RENAME TO build_value_terms`.execute(trx);
    await sql`CREATE INDEX ${sql.raw(VALUES_SEQ_INDEX.build_values)} ON build_values (seq)`.execute(trx);
    for (const t of triggers) await sql.raw(t.sql).execute(trx);
  });
}

async function postgresValueFieldCodes(db: Db, progress: ValueFieldCodesProgress): Promise<void> {
  await checkNames(db, 'postgres');
  const total = num((await sql<{ n: number | string }>`SELECT count(*) AS n FROM build_values`.execute(db)).rows[0]!.n);
  // One statement a table: PostgreSQL rewrites the rows and rebuilds the indexes (the unique
  // search key, the seq index) itself.
  await sql`ALTER TABLE build_values ALTER COLUMN field TYPE smallint USING (${sql.raw(valueFieldCodeCase('field'))})`.execute(db);
  // Terms of a name without a code name no build (see the SQLite side).
  await sql`DELETE FROM build_value_terms WHERE field NOT IN (${sql.join(CODES_0016.map(([n]) => n))})`.execute(db);
  await sql`ALTER TABLE build_value_terms ALTER COLUMN field TYPE smallint USING (${sql.raw(valueFieldCodeCase('field'))})`.execute(db);
  if (total > 0) progress(total, total);
}
