// Takes build_tasks back to its layout before store migration 0012 (migrations 0005 and 0006: path
// and outcome as text, a rowid table with indexes on seq and on (path, seq, outcome, duration_ms)),
// keeping its rows, and drops the path dictionary: for the tests that rewind the store's migrations
// to before 0012 and let them run again.

import { sql, type Kysely } from 'kysely';
import { TASK_OUTCOME_CODES, TASK_OUTCOMES } from '../../src/store/events/tasks.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function tasksBefore0012(db: Kysely<any>): Promise<void> {
  const outcome = TASK_OUTCOMES.map((o) => `WHEN ${TASK_OUTCOME_CODES[o]} THEN '${o}'`).join(' ');
  for (const statement of [
    `CREATE TABLE build_tasks_0005 (seq bigint NOT NULL, path text NOT NULL, outcome text NOT NULL, start_ms double precision NOT NULL,
      duration_ms double precision NOT NULL, cacheable integer)`,
    // In the order the ingest wrote them: by build, each build's tasks in order.
    `INSERT INTO build_tasks_0005 (seq, path, outcome, start_ms, duration_ms, cacheable)
      SELECT t.seq, p.path, CASE t.outcome ${outcome} END, t.start_ms, t.duration_ms, t.cacheable
      FROM build_tasks AS t JOIN task_paths AS p ON p.id = t.path_id ORDER BY t.seq, t.ord`,
    'DROP TABLE build_tasks',
    'DROP TABLE task_paths',
    'ALTER TABLE build_tasks_0005 RENAME TO build_tasks',
    'CREATE INDEX build_tasks_seq ON build_tasks (seq)',
    'CREATE INDEX build_tasks_path ON build_tasks (path, seq, outcome, duration_ms)',
  ]) {
    await sql.raw(statement).execute(db);
  }
}
