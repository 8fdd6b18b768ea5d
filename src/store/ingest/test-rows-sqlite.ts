// SQLite: the test dimension's rows of a part (store migrations 0020 and 0024: test_runs,
// build_failures, test_packs), written by the ingest in the part's transaction with the build's
// other rows, and by migration 0021's backfill (test-backfill.ts). The tests and failure groups new
// to the store are added to their dictionaries once per distinct key of the part, not per run: a
// look-up by key and an INSERT for the new ones (the writer is alone; a rolled-back part leaves
// none behind).

import type BetterSqlite3 from 'better-sqlite3';
import type { TestWrites } from './plan.js';
import type { FailureTuple } from '../events/test-runs.js';
import { testPackRows, type PackRun } from '../events/test-packs.js';

/** ingest/sqlite.ts's multi-row INSERT (handed in, so the two modules do not import each other). */
export type RowInserter = (db: BetterSqlite3.Database, insert: string, width?: number) => (rows: readonly (readonly unknown[])[]) => void;

export function sqliteTestRows(db: BetterSqlite3.Database, rowInserter: RowInserter): (w: TestWrites) => void {
  const selectTest = db.prepare('SELECT id FROM tests WHERE test_key = ?').pluck();
  const insertTest = db.prepare('INSERT INTO tests (test_key, tool_type, project_name, suite, name, parameters) VALUES (?, ?, ?, ?, ?, ?)');
  const selectGroup = db.prepare('SELECT id FROM failure_groups WHERE group_key = ?').pluck();
  const insertGroup = db.prepare('INSERT INTO failure_groups (group_key, sample) VALUES (?, ?)');
  const insertRuns = rowInserter(db, 'INSERT INTO test_runs (seq, ord, test_id, outcome, attempt, start_ms, duration_ms, group_id) VALUES', 8);
  const insertFailures = rowInserter(db, 'INSERT INTO build_failures (seq, ord, group_id) VALUES', 3);
  const insertPacks = rowInserter(db, 'INSERT INTO test_packs (seq, start, runs, failures) VALUES', 4);

  const groups = new Map<string, number>();
  const groupId = ([key, sample]: FailureTuple): number => {
    let id = groups.get(key);
    if (id === undefined) {
      id = (selectGroup.get(key) as number | undefined) ?? Number(insertGroup.run(key, sample).lastInsertRowid);
      groups.set(key, id);
    }
    return id;
  };

  return (w) => {
    if (w.testRuns.length === 0 && w.buildFailures.length === 0) return;
    const tests = new Map<string, number>();
    groups.clear();
    const packed: PackRun[] = [];
    const rows = w.testRuns.map(([seq, ord, key, identity, outcome, attempt, start, duration, failure]) => {
      let id = tests.get(key);
      if (id === undefined) {
        id = (selectTest.get(key) as number | undefined) ?? Number(insertTest.run(key, ...identity).lastInsertRowid);
        tests.set(key, id);
      }
      const group = failure === null ? null : groupId(failure);
      packed.push([seq, id, outcome, duration, group]);
      return [seq, ord, id, outcome, attempt, start, duration, group];
    });
    // In key order (seq, ord), as planned: appended at the end of the table.
    insertRuns(rows);
    const own = w.buildFailures.map(([seq, ord, f]) => [seq, ord, groupId(f)] as const);
    insertFailures(own);
    insertPacks(testPackRows(w.testBuilds, packed, own.map(([seq, , group]) => [seq, group] as const)));
  };
}
