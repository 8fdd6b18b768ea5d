// The test dimension (store migration 0020) for the builds stored before it. 0020 created the
// tables empty and the ingest fills them from then on, so a store upgraded across 0020 had no test
// history before the upgrade. Migration 0021 (test-migration.ts) marks the seqs to fill; this runs
// when the store opens, after the migrations, and fills them with today's ingest code: each
// build's events decoded again (events are the source of truth), its rows made by addTestWrites
// (ingest/plan.ts) and written by the ingest's writer (test-rows-sqlite.ts, test-rows-postgres.ts)
// with their per-test rollups (rollups.ts),
// 500 builds a transaction, with progress in the log. Its own code rather than the migration's, so
// that a later change of the writers and of the schema cannot meet a migration frozen before it.
//
// The mark, `test_backfill (below_seq, done_seq)`: the builds with done_seq < seq < below_seq are
// to fill. Each
// batch moves `done_seq` in its own transaction, having checked that no other process moved it
// meanwhile (SQLite: the writer lock; PostgreSQL: FOR UPDATE), so a stopped run goes on where it
// stopped and two processes opening one database fill each build once. Done, the mark is deleted:
// a store with nothing to fill costs one look-up at open.

import type { Logger } from 'pino';
import { sql, type Kysely } from 'kysely';
import type { DatabaseHandle } from '../../db/database.js';
import { eventsByKey } from '../events/events-read.js';
import { layoutOf } from '../schema/layout.js';
import { addTestWrites, type TestWrites } from './plan.js';
import { rowInserter } from './sqlite.js';
import { buildFailuresOf, testRunsOf } from '../events/test-runs.js';
import { sqliteTestRows } from './test-rows-sqlite.js';
import { writeTestRowsPostgres } from './test-rows-postgres.js';
import { prepareRanged, seqRange, testDimensionRollupAdditions } from '../analytics/rollups.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/** The mark another process deleted, having filled every build: nothing is left. */
const FINISHED = Number.MAX_SAFE_INTEGER;

/** Builds per transaction. */
const BATCH = 500;
/** Progress is logged at most this often (ms), besides the first and the last line. */
const LOG_EVERY_MS = 5000;

/** Fills the marked builds' test rows; returns how many builds were read. */
export async function fillTestDimension(handle: DatabaseHandle, logger?: Logger): Promise<number> {
  const db = handle.db as Db;
  const mark = (await sql<{ below: number | string; after: number | string }>`SELECT below_seq AS below, done_seq AS after FROM test_backfill`.execute(db)).rows[0];
  if (mark === undefined) return 0;
  const below = Number(mark.below);
  const pending = (from: number) => sql`seq IS NOT NULL AND seq > ${from} AND seq < ${below}`;
  const total = Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM builds WHERE ${pending(Number(mark.after))}`.execute(db)).rows[0]!.n);
  if (total > 0) logger?.info({ builds: total }, `filling the test history of ${total} builds stored before it was kept`);
  const commit = committer(handle);
  let after = Number(mark.after);
  let done = 0;
  let lastLog = performance.now();
  for (;;) {
    const builds = (
      await sql<{ seq: number | string; buildstarttime: number | string | null; tool_type: string; project_name: string | null; events_key: number | string | null }>`SELECT seq, buildstarttime, tool_type, project_name, events_key
        FROM builds WHERE ${pending(after)} ORDER BY seq LIMIT ${BATCH}`.execute(db)
    ).rows;
    if (builds.length === 0) break;
    const events = await eventsByKey(db, layoutOf(handle.dialect), builds.flatMap((b) => (b.events_key === null ? [] : [Number(b.events_key)])));
    const writes: TestWrites = { testRuns: [], buildFailures: [], testBuilds: [] };
    for (const b of builds) {
      const own = b.events_key === null ? [] : (events.get(Number(b.events_key)) ?? []);
      addTestWrites(writes, Number(b.seq), b.buildstarttime === null ? null : Number(b.buildstarttime), b.tool_type, b.project_name, testRunsOf(own), buildFailuresOf(own));
    }
    const next = Number(builds.at(-1)!.seq);
    // Another process moved the mark first: go on from where it is.
    const moved = await commit(after, next, writes);
    if (moved === undefined) {
      after = next;
      done += builds.length;
    } else {
      after = moved;
    }
    if (performance.now() - lastLog >= LOG_EVERY_MS) {
      lastLog = performance.now();
      logger?.info({ done, total }, `test history: ${done} of ${total} builds`);
    }
  }
  await sql`DELETE FROM test_backfill`.execute(db);
  if (total > 0) logger?.info({ done, total }, `test history: ${done} of ${total} builds`);
  return done;
}

/**
 * Writes a batch and moves the mark from `from` to `to` in one transaction; answers the mark where
 * another process had moved it instead (nothing written), or undefined when written.
 */
function committer(handle: DatabaseHandle): (from: number, to: number, writes: TestWrites) => Promise<number | undefined> {
  // SQLite's synchronous handle: the batch and its mark in one better-sqlite3 transaction.
  const raw = handle.sqlite;
  if (raw !== undefined) {
    const writeRows = sqliteTestRows(raw, rowInserter);
    const current = raw.prepare('SELECT done_seq FROM test_backfill').pluck();
    const move = raw.prepare('UPDATE test_backfill SET done_seq = ?');
    // The per-test and failure group rollups of the batch's builds, in the same transaction as
    // their rows; prepared once.
    const rollupStatements = prepareRanged(raw, (selection) => testDimensionRollupAdditions(handle.db as Db, handle.dialect, selection));
    const rollups = (from: number, to: number) => {
      for (const st of rollupStatements) st.run(from, to);
    };
    const batch = raw.transaction((from: number, to: number, writes: TestWrites): number | undefined => {
      const now = current.get() as number | undefined;
      if (now === undefined) return FINISHED;
      if (now !== from) return now;
      writeRows.write(writes);
      rollups(from, to);
      move.run(to);
      return undefined;
    });
    return async (from, to, writes) => {
      try {
        return batch.immediate(from, to, writes);
      } catch (e) {
        // Rolled back: the dictionary ids it found may be of rows it added.
        writeRows.forget();
        throw e;
      }
    };
  }
  return (from, to, writes) =>
    (handle.db as Db).transaction().execute(async (t) => {
      const row = (await sql<{ done: number | string }>`SELECT done_seq AS done FROM test_backfill FOR UPDATE`.execute(t)).rows[0];
      if (row === undefined) return FINISHED;
      if (Number(row.done) !== from) return Number(row.done);
      await writeTestRowsPostgres(t, writes);
      for (const q of testDimensionRollupAdditions(t, handle.dialect, seqRange(from, to))) await t.executeQuery(q);
      await sql`UPDATE test_backfill SET done_seq = ${to}`.execute(t);
      return undefined;
    });
}
