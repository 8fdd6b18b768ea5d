// Takes the rollups back to their layout before store migration 0013 (the tables of 0009 and 0011,
// keyed by the key text with the dimension values in every row, filled the way those migrations
// fill them from the builds stored now) and records 0013 (and 0025, which converts its task rollups) as not run: for the tests that rewind the
// store's migrations to an older schema. Later migrations must be undone first. Also the rollup rows
// as those tests compare them: by their keys' text, since a conversion numbers the keys anew.

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
  rollupsAsBuilds,
  TASK_ROLLUPS,
  textKeyedFacetRollupStatements,
  textKeyedRollupStatements,
  type TaskLayout,
} from '../../src/store/analytics/rollups.js';

/** `tasks`: the layout build_tasks is in while the rollups are filled (the fill reads it). */
export async function rollupKeysBefore0013(handle: DatabaseHandle, tasks: TaskLayout): Promise<void> {
  for (const t of [BUILD_ROLLUPS, DURATION_ROLLUPS, TASK_ROLLUPS, FACET_ROLLUPS, ROLLUP_KEYS]) await sql`DROP TABLE ${sql.raw(t)}`.execute(handle.db);
  await sql`DROP INDEX builds_duration_day`.execute(handle.db);
  await createRollupTables(handle.db, handle.dialect);
  await createFacetRollupTable(handle.db, handle.dialect);
  await backfillRollups(handle.db, handle.dialect, () => {}, (d, di, selection, sign) => textKeyedRollupStatements(d, di, selection, sign, tasks));
  await backfillRollups(handle.db, handle.dialect, () => {}, textKeyedFacetRollupStatements);
  // 0025 (task rollups by path id) converts what 0013 made: it runs again after it.
  await sql`DELETE FROM store_migration WHERE name IN ('0013_rollup_keys', '0025_task_rollup_paths')`.execute(handle.db);
}

/**
 * A rollup table's rows, each with its key's text and values in place of the key ID (and a task
 * rollup's path text in place of its path ID: a rewind before 0012 numbers the paths anew), in key
 * order (PostgreSQL's bigint strings as numbers).
 */
async function byKeyText(handle: DatabaseHandle, table: string, order: string): Promise<Record<string, unknown>[]> {
  const paths = table === TASK_ROLLUPS ? sql`, p.path FROM ${rollupsAsBuilds(table)} JOIN task_paths AS p ON p.id = builds.path_id` : sql` FROM ${rollupsAsBuilds(table)}`;
  const rows = (await sql<Record<string, unknown>>`SELECT builds.*${paths} ORDER BY ${sql.raw(order)}`.execute(handle.db)).rows;
  return rows.map(({ kid: _kid, path_id: _pathId, ...r }) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v])));
}

/** Every rollup table's rows by their keys' text (byKeyText). */
export async function rollupRowsByKeyText(handle: DatabaseHandle) {
  return {
    builds: await byKeyText(handle, BUILD_ROLLUPS, 'lvl, t, k'),
    durations: await byKeyText(handle, DURATION_ROLLUPS, 'lvl, t, k, bucket'),
    tasks: await byKeyText(handle, TASK_ROLLUPS, 'lvl, t, k, p.path'),
    facets: await byKeyText(handle, FACET_ROLLUPS, 'field, value, k'),
  };
}
