// SQLite: the test dimension's rows of a part (store migrations 0020 and 0024: test_runs,
// build_failures, test_packs), written by the ingest in the part's transaction with the build's
// other rows, and by migration 0021's backfill (test-backfill.ts), and the per-test rollups of the
// part's builds (test-rollup-sums.ts), summed from the same rows.
//
// The tests and failure groups new to the store are added to their dictionaries by a look-up by
// key and an INSERT for the new ones (the writer is alone). The ids found are kept for the writer's
// later parts, as long as no part or transaction rolls back (`forget`): a project's tests come
// again in each of its builds, and the look-ups were a tenth of the writer's thread with 200 tests
// a build (docs/tests.md, "Ingest cost"). Dictionary rows are never deleted, so an id once
// committed stays right.

import type BetterSqlite3 from 'better-sqlite3';
import type { TestRunWrite, TestWrites } from './plan.js';
import { testKeyOf, type FailureTuple } from '../events/test-runs.js';
import { testPackRows, type PackRun } from '../events/test-packs.js';
import { sumTestRollups, testRollupUpsert, type TestRunRow } from '../analytics/test-rollup-sums.js';

/** ingest/sqlite.ts's multi-row INSERT (handed in, so the two modules do not import each other). */
export type RowInserter = (db: BetterSqlite3.Database, insert: string, width?: number, tail?: string) => (rows: readonly (readonly unknown[])[]) => void;

export interface SqliteTestRows {
  /** Writes a part's test rows; returns its executions with their test ids, for `addRollups`. */
  write(w: TestWrites): TestRunRow[];
  /** Adds executions to test_rollups, given each build's rollup key id by seq (their keys added already). */
  addRollups(rows: readonly TestRunRow[], kids: ReadonlyMap<number, number>): void;
  /** Forgets the dictionary ids found so far: a part or transaction that may have added some rolled back. */
  forget(): void;
}

/** The most test ids kept between parts (then all are dropped): about 10 MB of keys and maps. */
const MAX_KNOWN_TESTS = 50_000;

type Identity = TestRunWrite[2];

/**
 * Test ids by identity, a map per part of it ([tool, project, suite, name, parameters]): a test
 * seen before is found without building its key's text (testKeyOf), which cost as much as the
 * look-up it saved.
 */
class KnownTests {
  #root = new Map<string, Map<string | null, Map<string, Map<string, Map<string, number>>>>>();
  #size = 0;

  get([tool, project, suite, name, parameters]: Identity): number | undefined {
    return this.#root.get(tool)?.get(project)?.get(suite)?.get(name)?.get(parameters);
  }

  set([tool, project, suite, name, parameters]: Identity, id: number): void {
    if (this.#size >= MAX_KNOWN_TESTS) this.clear();
    const level = <K, V>(m: Map<K, V>, k: K, make: () => V): V => {
      let v = m.get(k);
      if (v === undefined) m.set(k, (v = make()));
      return v;
    };
    const names = level(level(level(this.#root, tool, () => new Map()), project, () => new Map()), suite, () => new Map());
    level(names, name, () => new Map<string, number>()).set(parameters, id);
    this.#size++;
  }

  clear(): void {
    this.#root = new Map();
    this.#size = 0;
  }
}

export function sqliteTestRows(db: BetterSqlite3.Database, rowInserter: RowInserter): SqliteTestRows {
  const selectTest = db.prepare('SELECT id FROM tests WHERE test_key = ?').pluck();
  const insertTest = db.prepare('INSERT INTO tests (test_key, tool_type, project_name, suite, name, parameters) VALUES (?, ?, ?, ?, ?, ?)');
  const selectGroup = db.prepare('SELECT id FROM failure_groups WHERE group_key = ?').pluck();
  const insertGroup = db.prepare('INSERT INTO failure_groups (group_key, sample) VALUES (?, ?)');
  const insertRuns = rowInserter(db, 'INSERT INTO test_runs (seq, ord, test_id, outcome, attempt, start_ms, duration_ms, group_id) VALUES', 8);
  const insertFailures = rowInserter(db, 'INSERT INTO build_failures (seq, ord, group_id) VALUES', 3);
  const insertPacks = rowInserter(db, 'INSERT INTO test_packs (seq, start, runs, failures) VALUES', 4);
  const upsertRollups = rowInserter(db, testRollupUpsert.insert, testRollupUpsert.width, testRollupUpsert.conflict);

  const tests = new KnownTests();
  const testId = (identity: Identity): number => {
    let id = tests.get(identity);
    if (id === undefined) {
      const key = testKeyOf(...identity);
      id = (selectTest.get(key) as number | undefined) ?? Number(insertTest.run(key, ...identity).lastInsertRowid);
      tests.set(identity, id);
    }
    return id;
  };
  // Failure group ids, kept the same way and up to the same count.
  const groups = new Map<string, number>();
  const groupId = ([key, sample]: FailureTuple): number => {
    let id = groups.get(key);
    if (id === undefined) {
      id = (selectGroup.get(key) as number | undefined) ?? Number(insertGroup.run(key, sample).lastInsertRowid);
      if (groups.size >= MAX_KNOWN_TESTS) groups.clear();
      groups.set(key, id);
    }
    return id;
  };

  return {
    write(w) {
      if (w.testRuns.length === 0 && w.buildFailures.length === 0) return [];
      const packed: PackRun[] = [];
      const rows = w.testRuns.map(([seq, ord, identity, outcome, attempt, start, duration, failure]): TestRunRow => {
        const id = testId(identity);
        const group = failure === null ? null : groupId(failure);
        packed.push([seq, id, outcome, duration, group]);
        return [seq, ord, id, outcome, attempt, start, duration, group];
      });
      // In key order (seq, ord), as planned: appended at the end of the table.
      insertRuns(rows);
      const own = w.buildFailures.map(([seq, ord, f]) => [seq, ord, groupId(f)] as const);
      insertFailures(own);
      insertPacks(testPackRows(w.testBuilds, packed, own.map(([seq, , group]) => [seq, group] as const)));
      return rows;
    },
    addRollups(rows, kids) {
      upsertRollups(sumTestRollups(rows, kids));
    },
    forget() {
      tests.clear();
      groups.clear();
    },
  };
}
