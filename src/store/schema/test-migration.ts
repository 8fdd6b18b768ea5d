// Store migration 0020: the test dimension (docs/store.md, "Tests over time").
//
// - tests: each test once, by identity (the tool and project of its builds, suite, name,
//   parameters; `test_key` their JSON, test-runs.ts testKeyOf), with an integer id that the
//   executions and the REST API name it by. Rows stay when the builds that ran a test are deleted,
//   like task paths (a test without runs is found by no query).
// - test_runs: one row per finished attempt of a test in an available build, keyed by (seq, ord)
//   like build_tasks (SQLite: WITHOUT ROWID, a build's rows and a deletion's one range of the key),
//   with the index (test_id, seq, outcome, duration_ms) that a test's history and the per-test
//   counts read without touching the table.
// - failure_groups: each failure group key once (failure-groups.ts) with the first message seen.
// - build_failures: the groups of each build's own failures, (seq, ord) like test_runs.
//
// Frozen: it creates what it created when it was released, only where it is missing (as 0019, so
// that the tests that rewind the migrations can keep the tables today's reads and prune use).
// Builds stored before it get their rows when the store opens after 0021 (test-backfill.ts).

import { sql, type Kysely } from 'kysely';
import type { DatabaseHandle } from '../../db/database.js';
import { layoutOf } from './layout.js';
import { testPackRows } from '../events/test-packs.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

export async function testDimension(db: Db, dialect: DatabaseHandle['dialect']): Promise<void> {
  const id = layoutOf(dialect).numberedId;
  await sql
    .raw(`CREATE TABLE IF NOT EXISTS tests (${id}, test_key text NOT NULL UNIQUE, tool_type text NOT NULL, project_name text, suite text NOT NULL, name text NOT NULL, parameters text NOT NULL)`)
    .execute(db);
  await sql.raw(`CREATE TABLE IF NOT EXISTS failure_groups (${id}, group_key text NOT NULL UNIQUE, sample text NOT NULL)`).execute(db);
  if (dialect === 'sqlite') {
    // REAL: whole milliseconds are stored as 1-6 byte integers, as in build_tasks.
    await sql
      .raw(
        `CREATE TABLE IF NOT EXISTS test_runs (seq INTEGER NOT NULL, ord INTEGER NOT NULL, test_id INTEGER NOT NULL, outcome INTEGER NOT NULL, attempt INTEGER NOT NULL,
          start_ms REAL NOT NULL, duration_ms REAL NOT NULL, group_id INTEGER, PRIMARY KEY (seq, ord)) WITHOUT ROWID`,
      )
      .execute(db);
    await sql.raw(`CREATE TABLE IF NOT EXISTS build_failures (seq INTEGER NOT NULL, ord INTEGER NOT NULL, group_id INTEGER NOT NULL, PRIMARY KEY (seq, ord)) WITHOUT ROWID`).execute(db);
  } else {
    // Widest first: no alignment padding in a heap tuple.
    await sql
      .raw(
        `CREATE TABLE IF NOT EXISTS test_runs (seq bigint NOT NULL, test_id bigint NOT NULL, group_id bigint, start_ms double precision NOT NULL, duration_ms double precision NOT NULL,
          ord integer NOT NULL, outcome smallint NOT NULL, attempt smallint NOT NULL, CONSTRAINT test_runs_pk PRIMARY KEY (seq, ord))`,
      )
      .execute(db);
    await sql.raw(`CREATE TABLE IF NOT EXISTS build_failures (seq bigint NOT NULL, group_id bigint NOT NULL, ord integer NOT NULL, CONSTRAINT build_failures_pk PRIMARY KEY (seq, ord))`).execute(db);
  }
  await sql.raw('CREATE INDEX IF NOT EXISTS test_runs_test ON test_runs (test_id, seq, outcome, duration_ms)').execute(db);
  await sql.raw('CREATE INDEX IF NOT EXISTS test_runs_group ON test_runs (group_id, seq) WHERE group_id IS NOT NULL').execute(db);
  await sql.raw('CREATE INDEX IF NOT EXISTS build_failures_group ON build_failures (group_id, seq)').execute(db);
}

/**
 * Store migration 0021: marks the builds stored before 0020 for the test dimension's backfill,
 * which runs when the store opens (test-backfill.ts): those below the first seq with a row of the
 * dimension (every later build went through the ingest's writer), or every build when none has one.
 * An empty store has nothing to mark.
 */
export async function markTestBackfill(db: Db): Promise<void> {
  await sql.raw('CREATE TABLE IF NOT EXISTS test_backfill (below_seq bigint NOT NULL, done_seq bigint NOT NULL)').execute(db);
  if ((await sql`SELECT 1 FROM test_backfill`.execute(db)).rows.length > 0) return;
  const first = (await sql<{ s: number | string | null }>`SELECT min(s) AS s FROM (SELECT min(seq) AS s FROM test_runs UNION ALL SELECT min(seq) AS s FROM build_failures) AS m`.execute(db)).rows[0]?.s;
  const last = (await sql<{ s: number | string | null }>`SELECT max(seq) AS s FROM builds`.execute(db)).rows[0]?.s;
  if (last == null) return;
  await sql`INSERT INTO test_backfill (below_seq, done_seq) VALUES (${first == null ? Number(last) + 1 : Number(first)}, 0)`.execute(db);
}

/** Builds per window of store migration 0024's fill. */
const PACK_FILL_WINDOW = 2000;

/**
 * Store migration 0024: test_packs, each build's executions and failures in two values
 * (events/test-packs.ts) with its start, which the Tests page's counts and failure groups read for
 * queries the rollups do not answer. Filled here from the test rows stored so far, a window of seqs
 * at a time with progress; builds the test backfill (0021) has not reached yet get theirs when it
 * writes their rows.
 */
export async function testPacks(db: Db, dialect: DatabaseHandle['dialect'], progress: (done: number, total: number) => void): Promise<void> {
  const [seq, real] = dialect === 'sqlite' ? ['seq INTEGER PRIMARY KEY', 'REAL'] : ['seq bigint PRIMARY KEY', 'double precision'];
  const bytes = layoutOf(dialect).bytes;
  await sql.raw(`CREATE TABLE IF NOT EXISTS test_packs (${seq}, start ${real}, runs ${bytes} NOT NULL, failures ${bytes})`).execute(db);
  // Empty before the fill, so that a store whose later migrations are run again is not filled twice.
  await sql`DELETE FROM test_packs`.execute(db);
  const range = (await sql<{ lo: number | string | null; hi: number | string | null }>`SELECT min(s) AS lo, max(s) AS hi FROM (SELECT min(seq) AS s FROM test_runs UNION ALL SELECT max(seq) AS s FROM test_runs
    UNION ALL SELECT min(seq) AS s FROM build_failures UNION ALL SELECT max(seq) AS s FROM build_failures) AS m`.execute(db)).rows[0];
  if (range?.lo == null || range.hi == null) return;
  const [lo, hi] = [Number(range.lo), Number(range.hi)];
  for (let after = lo - 1; after < hi; after += PACK_FILL_WINDOW) {
    const last = Math.min(after + PACK_FILL_WINDOW, hi);
    const within = sql`seq > ${after} AND seq <= ${last}`;
    const builds = (await sql<{ seq: number | string; start: number | null }>`SELECT seq, buildstarttime AS start FROM builds WHERE ${within}`.execute(db)).rows;
    const runs = (await sql<{ seq: number | string; test_id: number | string; outcome: number; duration_ms: number; group_id: number | string | null }>`SELECT seq, test_id, outcome, duration_ms, group_id
      FROM test_runs WHERE ${within}`.execute(db)).rows;
    const own = (await sql<{ seq: number | string; group_id: number | string }>`SELECT seq, group_id FROM build_failures WHERE ${within}`.execute(db)).rows;
    const rows = testPackRows(
      builds.map((b) => [Number(b.seq), b.start === null ? null : Number(b.start)] as const),
      runs.map((r) => [Number(r.seq), Number(r.test_id), Number(r.outcome), Number(r.duration_ms), r.group_id === null ? null : Number(r.group_id)] as const),
      own.map((f) => [Number(f.seq), Number(f.group_id)] as const),
    );
    if (rows.length > 0) await sql`INSERT INTO test_packs (seq, start, runs, failures) VALUES ${sql.join(rows.map((r) => sql`(${r[0]}, ${r[1]}, ${r[2]}, ${r[3]})`))}`.execute(db);
    progress(last - lo + 1, hi - lo + 1);
  }
}
