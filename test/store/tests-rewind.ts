// Takes a store back to before store migration 0020 (the test dimension), for the tests that rewind
// the migrations to an older schema: its rows are removed and 0020 and 0021 (which marks the builds
// before 0020 for the backfill at open, test-backfill.ts) are no longer recorded as run.
// The tables stay, empty (0020 creates them only where they are missing): today's reads and prune
// use them. The per-test and failure group rollups (0022, 0023) and the test packs (0024) are emptied with the rows they sum and run again after 0021; the backfill adds them again. 0025 (task rollups by path id) runs again too, and finds its table converted.

import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function undoTests(db: Kysely<any>): Promise<void> {
  const ran = (await sql`SELECT 1 FROM store_migration WHERE name = '0020_tests'`.execute(db)).rows.length > 0;
  if (!ran) return;
  for (const table of ['test_runs', 'build_failures', 'tests', 'failure_groups', 'test_backfill', 'test_rollups', 'failure_group_rollups', 'failure_group_test_rollups', 'test_packs']) await sql`DELETE FROM ${sql.table(table)}`.execute(db);
  await sql`DELETE FROM store_migration WHERE name IN ('0020_tests', '0021_tests_backfill', '0022_test_rollups', '0023_failure_group_rollups', '0024_test_packs', '0025_task_rollup_paths')`.execute(db);
}
