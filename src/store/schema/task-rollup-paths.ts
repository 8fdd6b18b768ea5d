// Migration 0025: the task rollups name a task's path by its `task_paths` id. Until then every
// row of build_task_rollups held the path's text in its primary key (12.6 characters on average
// in the demo data), although build_tasks has named paths by id since migration 0012: at a
// million demo builds its 2.7 million rows took 111 bytes a build. The rollup statements now
// write the task row's `path_id` as it is (no join of task_paths per task at ingest) and the
// readers join the few paths of their answer at the end. Converted in batches of rows, with
// progress, like migration 0013. See docs/store.md "Rollup keys".

import { sql, type Kysely } from 'kysely';
import type { DatabaseHandle } from '../../db/database.js';
import { TASK_ROLLUPS } from '../analytics/rollups.js';
import { dialectOf } from '../../sql/index.js';
import { layoutOf } from './layout.js';
import { copyInBatches, replaceTable, ROLLUP_KEYS_BATCH } from './rollup-keys.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

const NEW = `${TASK_ROLLUPS}_0025`;

/**
 * Migration 0025 (frozen): converts build_task_rollups from `(lvl, t, kid, path)` to
 * `(lvl, t, kid, path_id)`, reporting the rows converted after every batch. A path the rollups
 * hold that task_paths lacks (none should: both come from the same task rows) is added first, so
 * that no row is lost. Does nothing to a table that has `path_id` already.
 */
export async function migrateTaskRollupPaths(db: Db, dialect: DatabaseHandle['dialect'], progress: (done: number, total: number) => void, batchRows = ROLLUP_KEYS_BATCH): Promise<void> {
  // A table already keyed by path id (its record removed by a rewind of later migrations, or a
  // table made after this one) is left as it is.
  if ((await dialectOf(dialect).columnsOf(db, TASK_ROLLUPS)).includes('path_id')) return;
  const { int64: big, float64: real, clustered } = layoutOf(dialect);
  await sql
    .raw(
      `CREATE TABLE ${NEW} (lvl integer NOT NULL, t ${big} NOT NULL, kid ${big} NOT NULL, path_id ${big} NOT NULL, runs ${big} NOT NULL, failures ${big} NOT NULL, dur_sum ${real} NOT NULL, dur_max ${real}, PRIMARY KEY (lvl, t, kid, path_id))${clustered}`,
    )
    .execute(db);
  await sql`INSERT INTO task_paths (path) SELECT DISTINCT o.path FROM ${sql.raw(TASK_ROLLUPS)} AS o
    WHERE NOT EXISTS (SELECT 1 FROM task_paths AS p WHERE p.path = o.path) ORDER BY o.path ON CONFLICT (path) DO NOTHING`.execute(db);
  const total = Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM ${sql.raw(TASK_ROLLUPS)}`.execute(db)).rows[0]!.n);
  const done = await copyInBatches(
    db,
    TASK_ROLLUPS,
    'lvl',
    't',
    batchRows,
    async (batch) => {
      const r = await sql`INSERT INTO ${sql.raw(NEW)} (lvl, t, kid, path_id, runs, failures, dur_sum, dur_max)
        SELECT o.lvl, o.t, o.kid, p.id, o.runs, o.failures, o.dur_sum, o.dur_max
        FROM ${sql.raw(TASK_ROLLUPS)} AS o JOIN task_paths AS p ON p.path = o.path
        WHERE ${batch}`.execute(db);
      return Number(r.numAffectedRows ?? 0n);
    },
    (done) => progress(done, total),
  );
  if (done !== total) throw new Error(`task rollup paths: ${TASK_ROLLUPS} has ${total} rows, ${done} converted`);
  await replaceTable(db, dialect, TASK_ROLLUPS, NEW);
}
