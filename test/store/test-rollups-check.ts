// The test dimension's rollups (src/store/analytics/rollups.ts: TEST_ROLLUPS, FAILURE_GROUP_ROLLUPS,
// FAILURE_GROUP_TEST_ROLLUPS) and the same sums recounted from the stored rows, by the builds'
// project and outcome, as comparable lines.

import { sql, type Kysely, type RawBuilder } from 'kysely';
import { testPackRows, type TestPackRow } from '../../src/store/events/test-packs.js';

const line =
  (columns: readonly string[]) =>
  (r: Record<string, unknown>): string =>
    columns
      .map((c) => r[c])
      .map((v) => (v === null ? '-' : String(Number.isNaN(Number(v)) ? v : Math.round(Number(v)))))
      .join(' ');

const TEST_COLUMNS = ['test_id', 'project_name', 'buildoutcome', 'runs', 'failures', 'skipped', 'builds', 'attempts', 'duration_sum'];
const GROUP_COLUMNS = ['group_id', 'project_name', 'buildoutcome', 'builds', 'failures', 'own_failures', 'first_seen', 'last_seen'];
const GROUP_TEST_COLUMNS = ['group_id', 'project_name', 'buildoutcome', 'test_id', 'failures'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

const lines = async (db: Db, columns: readonly string[], query: RawBuilder<Record<string, unknown>>): Promise<string[]> => (await query.execute(db)).rows.map(line(columns)).sort();

export async function testRollupsAndRecount(db: Db): Promise<{ rolledUp: string[]; recount: string[] }> {
  const rolledUp = await lines(
    db,
    TEST_COLUMNS,
    sql`SELECT r.test_id, k.project_name, k.buildoutcome, r.runs, r.failures, r.skipped, r.builds, r.attempts, r.duration_sum
    FROM test_rollups AS r JOIN rollup_keys AS k ON k.id = r.kid`,
  );
  const recount = await lines(
    db,
    TEST_COLUMNS,
    sql`SELECT r.test_id, b.project_name, b.buildoutcome, sum(CASE WHEN r.outcome <> 2 THEN 1 ELSE 0 END) AS runs,
      sum(CASE WHEN r.outcome = 1 THEN 1 ELSE 0 END) AS failures, sum(CASE WHEN r.outcome = 2 THEN 1 ELSE 0 END) AS skipped, count(DISTINCT r.seq) AS builds,
      count(*) AS attempts, sum(r.duration_ms) AS duration_sum
    FROM test_runs AS r JOIN builds AS b ON b.seq = r.seq GROUP BY r.test_id, b.project_name, b.buildoutcome`,
  );
  return { rolledUp, recount };
}

export async function failureGroupRollupsAndRecount(db: Db): Promise<{ rolledUp: string[]; recount: string[] }> {
  const rolledUp = [
    ...(await lines(
      db,
      GROUP_COLUMNS,
      sql`SELECT r.group_id, k.project_name, k.buildoutcome, r.builds, r.failures, r.own_failures, r.first_seen, r.last_seen
      FROM failure_group_rollups AS r JOIN rollup_keys AS k ON k.id = r.kid`,
    )),
    ...(await lines(db, GROUP_TEST_COLUMNS, sql`SELECT r.group_id, k.project_name, k.buildoutcome, r.test_id, r.failures FROM failure_group_test_rollups AS r JOIN rollup_keys AS k ON k.id = r.kid`)),
  ];
  const recount = [
    ...(await lines(
      db,
      GROUP_COLUMNS,
      sql`SELECT f.group_id, b.project_name, b.buildoutcome, count(DISTINCT f.seq) AS builds, count(*) AS failures, sum(f.own) AS own_failures,
        min(b.buildstarttime) AS first_seen, max(b.buildstarttime) AS last_seen
      FROM (SELECT seq, group_id, 0 AS own FROM test_runs WHERE group_id IS NOT NULL UNION ALL SELECT seq, group_id, 1 FROM build_failures) AS f
      JOIN builds AS b ON b.seq = f.seq GROUP BY f.group_id, b.project_name, b.buildoutcome`,
    )),
    ...(await lines(
      db,
      GROUP_TEST_COLUMNS,
      sql`SELECT r.group_id, b.project_name, b.buildoutcome, r.test_id, count(*) AS failures
      FROM test_runs AS r JOIN builds AS b ON b.seq = r.seq WHERE r.group_id IS NOT NULL GROUP BY r.group_id, b.project_name, b.buildoutcome, r.test_id`,
    )),
  ];
  return { rolledUp: rolledUp.sort(), recount: recount.sort() };
}

/** Each build's stored row of test_packs (store migration 0024) and the row made from its builds, test_runs and build_failures rows, as `seq start runs failures` lines. */
export async function testPacksAndRepack(db: Db): Promise<{ stored: string[]; repacked: string[] }> {
  const line = (r: TestPackRow) => `${r[0]} ${r[1]} ${r[2].toString('hex')} ${r[3]?.toString('hex') ?? '-'}`;
  const n = (v: unknown) => (v === null ? null : Number(v));
  const stored = (await sql<{ seq: unknown; start: unknown; runs: Uint8Array; failures: Uint8Array | null }>`SELECT seq, start, runs, failures FROM test_packs ORDER BY seq`.execute(db)).rows.map((r) =>
    line([Number(r.seq), n(r.start), Buffer.from(r.runs), r.failures === null ? null : Buffer.from(r.failures)]),
  );
  const builds = (await sql<{ seq: unknown; start: unknown }>`SELECT seq, buildstarttime AS start FROM builds WHERE seq IS NOT NULL ORDER BY seq`.execute(db)).rows;
  const runs = (await sql<{ seq: unknown; test_id: unknown; outcome: unknown; duration_ms: unknown; group_id: unknown }>`SELECT seq, test_id, outcome, duration_ms, group_id FROM test_runs`.execute(db)).rows;
  const own = (await sql<{ seq: unknown; group_id: unknown }>`SELECT seq, group_id FROM build_failures`.execute(db)).rows;
  const repacked = testPackRows(
    builds.map((b) => [Number(b.seq), n(b.start)] as const),
    runs.map((r) => [Number(r.seq), Number(r.test_id), Number(r.outcome), Number(r.duration_ms), n(r.group_id)] as const),
    own.map((f) => [Number(f.seq), Number(f.group_id)] as const),
  ).map(line);
  return { stored, repacked };
}
