// The per-test rollups (src/store/analytics/rollups.ts, TEST_ROLLUPS) and the same sums recounted
// from the stored executions, by test and the builds' project and outcome, as comparable lines.

import { sql, type Kysely } from 'kysely';

const line = (r: Record<string, unknown>): string =>
  [r['test_id'], r['project_name'], r['buildoutcome'], r['runs'], r['failures'], r['skipped'], r['builds'], r['attempts'], Math.round(Number(r['duration_sum']))]
    .map((v) => (v === null ? '-' : String(Number.isNaN(Number(v)) ? v : Number(v))))
    .join(' ');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function testRollupsAndRecount(db: Kysely<any>): Promise<{ rolledUp: string[]; recount: string[] }> {
  const rolled = await sql<Record<string, unknown>>`SELECT r.test_id, k.project_name, k.buildoutcome, r.runs, r.failures, r.skipped, r.builds, r.attempts, r.duration_sum
    FROM test_rollups AS r JOIN rollup_keys AS k ON k.id = r.kid`.execute(db);
  const recount = await sql<Record<string, unknown>>`SELECT r.test_id, b.project_name, b.buildoutcome, sum(CASE WHEN r.outcome <> 2 THEN 1 ELSE 0 END) AS runs,
      sum(CASE WHEN r.outcome = 1 THEN 1 ELSE 0 END) AS failures, sum(CASE WHEN r.outcome = 2 THEN 1 ELSE 0 END) AS skipped, count(DISTINCT r.seq) AS builds,
      count(*) AS attempts, sum(r.duration_ms) AS duration_sum
    FROM test_runs AS r JOIN builds AS b ON b.seq = r.seq GROUP BY r.test_id, b.project_name, b.buildoutcome`.execute(db);
  return { rolledUp: rolled.rows.map(line).sort(), recount: recount.rows.map(line).sort() };
}
