// The per-test rollups of an ingest part on SQLite, summed in memory from the part's test rows:
// the sums testRollupStatements' GROUP BY makes (rollups.ts), without its sorting of the part's
// rows in a temporary B-tree and its second one for each group's distinct builds (22 of the
// statement's 34 ms a part of 100 builds of 200 tests; docs/tests.md, "Ingest cost"). Prune, the
// test backfill and PostgreSQL keep the statement; the recount tests hold both to the same sums.

import { TEST_ROLLUP_SUMS, TEST_ROLLUPS } from './rollups.js';
import { TEST_OUTCOME_CODES } from '../events/test-runs.js';

/** A test_runs row as the ingest writes it: [seq, ord, test id, outcome code, attempt, start ms, duration ms, failure group or null]. */
export type TestRunRow = readonly [seq: number, ord: number, testId: number, outcome: number, attempt: number, start: number, duration: number, group: number | null];

/** A test_rollups row to add: [test id, rollup key id, ...TEST_ROLLUP_SUMS]. */
export type TestRollupRow = [testId: number, kid: number, runs: number, failures: number, skipped: number, builds: number, attempts: number, durationSum: number];

/** The upsert that adds TestRollupRows: `insert`, then the rows' tuples, then `conflict`. */
export const testRollupUpsert = {
  insert: `INSERT INTO ${TEST_ROLLUPS} (test_id, kid, ${TEST_ROLLUP_SUMS.join(', ')}) VALUES`,
  conflict: `ON CONFLICT (test_id, kid) DO UPDATE SET ${TEST_ROLLUP_SUMS.map((c) => `${c} = ${TEST_ROLLUPS}.${c} + excluded.${c}`).join(', ')}`,
  width: 2 + TEST_ROLLUP_SUMS.length,
} as const;

const SKIPPED = TEST_OUTCOME_CODES.skipped;
const FAILED = TEST_OUTCOME_CODES.failed;

/**
 * The sums of test rows per test and rollup key, in (test id, key id) order (the upsert's
 * neighbouring keys on neighbouring pages). `kids` gives each row's build its key id; a build
 * without one is a fault of the caller. A build's rows come together (each build's tests are
 * planned at once), so a group counts a build when its previous row was another build's.
 */
export function sumTestRollups(rows: readonly TestRunRow[], kids: ReadonlyMap<number, number>): TestRollupRow[] {
  const byTest = new Map<number, Map<number, { row: TestRollupRow; seq: number }>>();
  for (const [seq, , testId, outcome, , , duration] of rows) {
    const kid = kids.get(seq);
    if (kid === undefined) throw new Error(`test rows of build ${seq}, which has no rollup key`);
    let byKey = byTest.get(testId);
    if (byKey === undefined) byTest.set(testId, (byKey = new Map()));
    let sum = byKey.get(kid);
    if (sum === undefined) byKey.set(kid, (sum = { row: [testId, kid, 0, 0, 0, 0, 0, 0], seq: -1 }));
    const r = sum.row;
    if (outcome === SKIPPED) r[4]++;
    else r[2]++;
    if (outcome === FAILED) r[3]++;
    if (sum.seq !== seq) {
      r[5]++;
      sum.seq = seq;
    }
    r[6]++;
    r[7] += duration;
  }
  const out: TestRollupRow[] = [];
  for (const testId of [...byTest.keys()].sort((a, b) => a - b)) {
    const byKey = byTest.get(testId)!;
    for (const kid of [...byKey.keys()].sort((a, b) => a - b)) out.push(byKey.get(kid)!.row);
  }
  return out;
}
