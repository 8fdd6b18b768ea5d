// PostgreSQL: the test dimension's rows of a part (store migrations 0020 and 0024: test_runs,
// build_failures, test_packs), written by the ingest in the part's transaction with the build's
// other rows, and by migration 0021's backfill (test-backfill.ts). The tests and failure groups new
// to the store are added to their dictionaries with one INSERT ... ON CONFLICT DO NOTHING and read
// back with one SELECT each per part, in key order (two transactions adding the same keys wait on
// each other in one order rather than deadlock; READ COMMITTED lets the read see a key another one
// committed).

import { sql, type Kysely } from 'kysely';
import type { TestWrites } from './plan.js';
import { testPackRows } from '../events/test-packs.js';
import { testKeyOf } from '../events/test-runs.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Trx = Kysely<any>;

export async function writeTestRowsPostgres(t: Trx, w: TestWrites): Promise<void> {
  if (w.testRuns.length === 0 && w.buildFailures.length === 0) return;
  const keyOf = w.testRuns.map((r) => testKeyOf(...r[2]));
  const tests = new Map<string, readonly [string, string | null, string, string, string]>();
  w.testRuns.forEach((r, i) => tests.set(keyOf[i]!, r[2]));
  const testIds = new Map<string, number>();
  if (tests.size > 0) {
    const keys = [...tests.keys()].sort();
    const col = (i: number) => keys.map((k) => tests.get(k)![i]);
    await sql`INSERT INTO tests (test_key, tool_type, project_name, suite, name, parameters)
      SELECT * FROM unnest(${keys}::text[], ${col(0)}::text[], ${col(1)}::text[], ${col(2)}::text[], ${col(3)}::text[], ${col(4)}::text[]) AS u(k) ORDER BY k
      ON CONFLICT (test_key) DO NOTHING`.execute(t);
    const rows = (await sql<{ id: string | number; test_key: string }>`SELECT id, test_key FROM tests WHERE test_key = ANY(${keys}::text[])`.execute(t)).rows;
    for (const r of rows) testIds.set(r.test_key, Number(r.id));
  }
  const samples = new Map<string, string>();
  for (const r of w.testRuns) if (r[7] !== null && !samples.has(r[7][0])) samples.set(r[7][0], r[7][1]);
  for (const [, , f] of w.buildFailures) if (!samples.has(f[0])) samples.set(f[0], f[1]);
  const groupIds = new Map<string, number>();
  if (samples.size > 0) {
    const keys = [...samples.keys()].sort();
    await sql`INSERT INTO failure_groups (group_key, sample)
      SELECT * FROM unnest(${keys}::text[], ${keys.map((k) => samples.get(k)!)}::text[]) AS u(k) ORDER BY k
      ON CONFLICT (group_key) DO NOTHING`.execute(t);
    const rows = (await sql<{ id: string | number; group_key: string }>`SELECT id, group_key FROM failure_groups WHERE group_key = ANY(${keys}::text[])`.execute(t)).rows;
    for (const r of rows) groupIds.set(r.group_key, Number(r.id));
  }
  if (w.testRuns.length > 0) {
    const runs = w.testRuns;
    await sql`INSERT INTO test_runs (seq, ord, test_id, outcome, attempt, start_ms, duration_ms, group_id)
      SELECT * FROM unnest(${runs.map((r) => r[0])}::bigint[], ${runs.map((r) => r[1])}::integer[], ${keyOf.map((k) => testIds.get(k)!)}::bigint[],
        ${runs.map((r) => r[3])}::smallint[], ${runs.map((r) => r[4])}::smallint[], ${runs.map((r) => r[5])}::double precision[],
        ${runs.map((r) => r[6])}::double precision[], ${runs.map((r) => (r[7] === null ? null : groupIds.get(r[7][0])!))}::bigint[])`.execute(t);
  }
  if (w.buildFailures.length > 0) {
    const fs = w.buildFailures;
    await sql`INSERT INTO build_failures (seq, ord, group_id)
      SELECT * FROM unnest(${fs.map((f) => f[0])}::bigint[], ${fs.map((f) => f[1])}::integer[], ${fs.map((f) => groupIds.get(f[2][0])!)}::bigint[])`.execute(t);
  }
  const packs = testPackRows(
    w.testBuilds,
    w.testRuns.map((r, i) => [r[0], testIds.get(keyOf[i]!)!, r[3], r[6], r[7] === null ? null : groupIds.get(r[7][0])!] as const),
    w.buildFailures.map((f) => [f[0], groupIds.get(f[2][0])!] as const),
  );
  if (packs.length > 0) {
    await sql`INSERT INTO test_packs (seq, start, runs, failures)
      SELECT * FROM unnest(${packs.map((p) => p[0])}::bigint[], ${packs.map((p) => p[1])}::double precision[], ${packs.map((p) => p[2])}::bytea[], ${packs.map((p) => p[3])}::bytea[])`.execute(t);
  }
}
