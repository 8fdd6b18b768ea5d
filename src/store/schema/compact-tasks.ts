// Store migration 0012: the task rows in their compact layout (docs/store.md "Tables"). Every task
// path is stored once, in `task_paths`, and build_tasks keeps its id; the outcome is a small
// integer (TASK_OUTCOME_CODES); on SQLite build_tasks is a WITHOUT ROWID table keyed by
// (seq, ord), so the rowid and the separate index on seq go; PostgreSQL has the same primary key
// (a heap with that index). The path index that trends read in path order becomes
// (path_id, seq, outcome, duration_ms).
//
// An existing database is converted into a new table in batches of seqs, each batch adding the
// paths it meets to the dictionary and copying its rows in key order, with progress in the log;
// then the old table goes and the new one takes its name. `ord` is the row's position among its
// build's rows as stored (SQLite's rowid, PostgreSQL's ctid: the rows were only ever inserted, a
// build's in one statement, in the order the ingest found the tasks), which is what the ingest
// writes for new builds.

import { sql, type Kysely } from 'kysely';
import type { DatabaseHandle } from '../../db/database.js';
import { TASK_OUTCOME_CODES, TASK_OUTCOMES } from '../events/tasks.js';
import { layoutOf } from './layout.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;
type Dialect = DatabaseHandle['dialect'];

/** Seqs per batch of the conversion (about 9 task rows each on the demo data). */
export const COMPACT_TASKS_BATCH = 20_000;

/** The dictionary of task paths (frozen with migration 0012). */
async function createTaskPaths(db: Db, dialect: Dialect): Promise<void> {
  // SQLite: INTEGER PRIMARY KEY is the rowid. PostgreSQL: an identity; ON CONFLICT DO NOTHING may
  // skip numbers, which only the join ever sees.
  const id = layoutOf(dialect).numberedId;
  await sql.raw(`CREATE TABLE task_paths (${id}, path text NOT NULL UNIQUE)`).execute(db);
}

/** build_tasks of migration 0012 under the name `table` (frozen). */
async function createTasks(db: Db, dialect: Dialect, table: string): Promise<void> {
  if (dialect === 'sqlite') {
    // REAL affinity: whole milliseconds are stored as integers of 1-6 bytes (SQLite does so for
    // REAL columns), not as 8-byte floats.
    await sql
      .raw(
        `CREATE TABLE ${table} (seq INTEGER NOT NULL, ord INTEGER NOT NULL, path_id INTEGER NOT NULL, outcome INTEGER NOT NULL,
          start_ms REAL NOT NULL, duration_ms REAL NOT NULL, cacheable INTEGER, PRIMARY KEY (seq, ord)) WITHOUT ROWID`,
      )
      .execute(db);
    return;
  }
  // Widest first: no alignment padding between the columns of a heap tuple.
  await sql
    .raw(
      `CREATE TABLE ${table} (seq bigint NOT NULL, path_id bigint NOT NULL, start_ms double precision NOT NULL, duration_ms double precision NOT NULL,
        ord integer NOT NULL, outcome smallint NOT NULL, cacheable smallint, CONSTRAINT build_tasks_pk PRIMARY KEY (seq, ord))`,
    )
    .execute(db);
}

/** The outcome text of the 0005 layout as its code; anything else is executed, as taskOutcome reads it. */
function outcomeCode(column: string) {
  const cases = TASK_OUTCOMES.map((o) => `WHEN '${o}' THEN ${TASK_OUTCOME_CODES[o]}`).join(' ');
  return sql.raw(`CASE ${column} ${cases} ELSE ${TASK_OUTCOME_CODES.executed} END`);
}

/**
 * Migration 0012 on a database of any size: creates the dictionary and the compact table, converts
 * the stored rows in batches of seqs (reporting done and total task rows), and replaces the old
 * table and its indexes.
 */
export async function compactTasks(db: Db, dialect: Dialect, progress: (done: number, total: number) => void, batch = COMPACT_TASKS_BATCH): Promise<void> {
  await createTaskPaths(db, dialect);
  const next = 'build_tasks_0012';
  await createTasks(db, dialect, next);
  const range = (await sql<{ lo: number | string | null; hi: number | string | null; n: number | string }>`SELECT min(seq) AS lo, max(seq) AS hi, count(*) AS n FROM build_tasks`.execute(db)).rows[0];
  if (range !== undefined && range.lo !== null && range.hi !== null) {
    const total = Number(range.n);
    const hi = Number(range.hi);
    const position = sql.raw(layoutOf(dialect).rowPosition);
    let done = 0;
    for (let after = Number(range.lo) - 1; after < hi; after += batch) {
      const last = Math.min(after + batch, hi);
      // In path order, each path once (build_tasks_seq finds the batch's rows).
      await sql`INSERT INTO task_paths (path) SELECT DISTINCT t.path FROM build_tasks AS t WHERE t.seq > ${after} AND t.seq <= ${last} ORDER BY t.path
        ON CONFLICT (path) DO NOTHING`.execute(db);
      const copied = await sql`INSERT INTO ${sql.raw(next)} (seq, ord, path_id, outcome, start_ms, duration_ms, cacheable)
        SELECT t.seq, row_number() OVER (PARTITION BY t.seq ORDER BY ${position}) - 1, p.id, ${outcomeCode('t.outcome')}, t.start_ms, t.duration_ms, t.cacheable
        FROM build_tasks AS t JOIN task_paths AS p ON p.path = t.path
        WHERE t.seq > ${after} AND t.seq <= ${last}
        ORDER BY 1, 2`.execute(db);
      done += Number(copied.numAffectedRows ?? 0n);
      progress(done, total);
      // A turn of the event loop, so the log line is written now (SQLite's statements are synchronous).
      await new Promise((r) => setImmediate(r));
    }
  }
  // With the table go its indexes: build_tasks_seq (the key leads with seq now) and build_tasks_path.
  await sql`DROP TABLE build_tasks`.execute(db);
  await sql.raw(`ALTER TABLE ${next} RENAME TO build_tasks`).execute(db);
  // What trends read in path order (analytics.ts): grouping by path needs no sort, and the rows of
  // the matched builds are kept by seq without visiting the table.
  await sql`CREATE INDEX build_tasks_path ON build_tasks (path_id, seq, outcome, duration_ms)`.execute(db);
}
