// The test dimension of the builds stored before store migration 0020: marked by migration 0021,
// filled from their events when the store opens, row for row what the ingest writes
// (src/store/ingest/test-backfill.ts), on SQLite and PostgreSQL: a store rewound to before 0020, and one
// whose earlier builds alone lack their rows (the builds of an upgrade), get back exactly the rows
// they had, and the mark is gone; a run stopped part way goes on where it stopped. The per-test
// rollups equal a recount of the rows at each step.

import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openBuildStore } from '../../src/store/build-store.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { pgAvailable } from '../support/postgres.js';
import { openTestStore } from './support.js';
import { undoTests } from './tests-rewind.js';
import { failureGroupRollupsAndRecount, testPacksAndRepack, testRollupsAndRecount } from './test-rollups-check.js';

const dialects = pgAvailable() ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

/** The dimension's rows, by key rather than id (ids are handed out in another order by a backfill). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function dimension(db: Kysely<any>) {
  // The per-test and failure group rollups sum the rows, whichever wrote them.
  const { rolledUp, recount } = await testRollupsAndRecount(db);
  expect(rolledUp).toEqual(recount);
  const grouped = await failureGroupRollupsAndRecount(db);
  expect(grouped.rolledUp).toEqual(grouped.recount);
  // Each build's pack holds its rows, whichever wrote them.
  const packed = await testPacksAndRepack(db);
  expect(packed.stored).toEqual(packed.repacked);
  const runs = await sql`SELECT r.seq, r.ord, t.test_key, t.tool_type, t.project_name, t.suite, t.name, t.parameters, r.outcome, r.attempt, r.start_ms, r.duration_ms, g.group_key
    FROM test_runs AS r JOIN tests AS t ON t.id = r.test_id LEFT JOIN failure_groups AS g ON g.id = r.group_id ORDER BY r.seq, r.ord`.execute(db);
  const failures = await sql`SELECT f.seq, f.ord, g.group_key FROM build_failures AS f JOIN failure_groups AS g ON g.id = f.group_id ORDER BY f.seq, f.ord`.execute(db);
  const groups = await sql`SELECT group_key, sample FROM failure_groups ORDER BY group_key`.execute(db);
  // Numbers as numbers on both databases (PostgreSQL's bigint arrives as text).
  const plain = (rows: unknown[]) => rows.map((r) => Object.fromEntries(Object.entries(r as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'string' && /^(seq|ord)$/.test(k) ? Number(v) : v])));
  return { runs: plain(runs.rows), failures: plain(failures.rows), groups: groups.rows };
}

describe.each(dialects)('the test dimension of builds stored before 0020 (%s)', (dialect) => {
  it('is filled from their events when the store opens: the same runs, failures and groups as the ingest wrote, once', async () => {
    const t = await openTestStore(dialect);
    try {
      await t.store.ingestNdjson([...demoBuilds({ builds: 150, seed: 11, now: t.now.value })].join('\n'));
      const written = await dimension(t.handle.db);
      expect(written.runs.length).toBeGreaterThan(300);
      expect(written.failures.length).toBeGreaterThan(0);

      // Every build from before 0020.
      await undoTests(t.handle.db);
      expect((await dimension(t.handle.db)).runs).toEqual([]);
      const reopened = await openBuildStore(t.handle, {});
      await reopened.close();
      expect(await dimension(t.handle.db)).toEqual(written);
      expect((await sql`SELECT * FROM test_backfill`.execute(t.handle.db)).rows).toEqual([]);

      // Only the earlier half without rows, as in a store upgraded across 0020: they are filled,
      // the later builds' rows are left as they are, and nothing is written twice.
      const middle = Number(written.runs[Math.floor(written.runs.length / 2)]!['seq']);
      for (const table of ['test_runs', 'test_packs', 'build_failures']) await sql`DELETE FROM ${sql.table(table)} WHERE seq < ${middle}`.execute(t.handle.db);
      // A store from before 0021 has no per-test or failure group rollups (0022, 0023) or test packs (0024) either.
      await sql`DELETE FROM store_migration WHERE name IN ('0021_tests_backfill', '0022_test_rollups', '0023_failure_group_rollups', '0024_test_packs', '0025_task_rollup_paths')`.execute(t.handle.db);
      for (const table of ['test_rollups', 'failure_group_rollups', 'failure_group_test_rollups']) await sql`DELETE FROM ${sql.table(table)}`.execute(t.handle.db);
      const again = await openBuildStore(t.handle, {});
      await again.close();
      expect(await dimension(t.handle.db)).toEqual(written);
      expect((await sql`SELECT * FROM test_backfill`.execute(t.handle.db)).rows).toEqual([]);

      // A run stopped after the batches up to `middle` (the mark moved there): it goes on after it.
      for (const table of ['test_runs', 'test_packs', 'build_failures', 'test_rollups', 'failure_group_rollups', 'failure_group_test_rollups']) await sql`DELETE FROM ${sql.table(table)}`.execute(t.handle.db);
      const last = Number(written.runs.at(-1)!['seq']);
      await sql`INSERT INTO test_backfill (below_seq, done_seq) VALUES (${last + 1}, ${middle})`.execute(t.handle.db);
      const resumed = await openBuildStore(t.handle, {});
      await resumed.close();
      const after = (rows: readonly Record<string, unknown>[]) => rows.filter((r) => Number(r['seq']) > middle);
      expect(await dimension(t.handle.db)).toEqual({ runs: after(written.runs), failures: after(written.failures), groups: written.groups });
    } finally {
      await t.close();
    }
  }, 120_000);
});
