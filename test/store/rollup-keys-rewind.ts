// Takes the rollups back to their layout before store migration 0013 (the tables of 0009 and 0011,
// keyed by the key text with the dimension values in every row, filled the way those migrations
// fill them from the builds stored now) and records 0013 as not run: for the tests that rewind the
// store's migrations to an older schema. Later migrations must be undone first.

import { sql } from 'kysely';
import type { DatabaseHandle } from '../../src/db/database.js';
import {
  backfillRollups,
  BUILD_ROLLUPS,
  createFacetRollupTable,
  createRollupTables,
  DURATION_ROLLUPS,
  FACET_ROLLUPS,
  ROLLUP_KEYS,
  TASK_ROLLUPS,
  textKeyedFacetRollupStatements,
  textKeyedRollupStatements,
  type TaskLayout,
} from '../../src/store/rollups.js';

/** `tasks`: the layout build_tasks is in while the rollups are filled (the fill reads it). */
export async function rollupKeysBefore0013(handle: DatabaseHandle, tasks: TaskLayout): Promise<void> {
  for (const t of [BUILD_ROLLUPS, DURATION_ROLLUPS, TASK_ROLLUPS, FACET_ROLLUPS, ROLLUP_KEYS]) await sql`DROP TABLE ${sql.raw(t)}`.execute(handle.db);
  await sql`DROP INDEX builds_duration_day`.execute(handle.db);
  await createRollupTables(handle.db, handle.dialect);
  await createFacetRollupTable(handle.db, handle.dialect);
  await backfillRollups(handle.db, handle.dialect, () => {}, (d, di, selection, sign) => textKeyedRollupStatements(d, di, selection, sign, tasks));
  await backfillRollups(handle.db, handle.dialect, () => {}, textKeyedFacetRollupStatements);
  await sql`DELETE FROM store_migration WHERE name = '0013_rollup_keys'`.execute(handle.db);
}
