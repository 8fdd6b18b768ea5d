// Reads of the test dimension (store migration 0020) for the builds a query matches: per-test
// counts, a test's executions, failure groups. Every statement runs through the store's search
// guard (search-guard.ts: time limit, search threads or slots) and reads builds under the caller's
// visibility, so a test of a project she may not see has no runs for her and does not exist.

import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { DatabaseHandle } from '../db/database.js';
import { compileQuery, dialectOf } from '../sql/index.js';
import { customValueTables } from '../sql/layout.js';
import type { GuardedSearch } from './search-guard.js';
import { TEST_OUTCOME_OF_CODE, TEST_OUTCOME_CODES } from './test-runs.js';
import type { AggregateScope, FailureGroupRow, TestCounts, TestIdentityRow, TestReads, TestRunRow, Visibility } from './types.js';

export type { FailureGroupRow, TestCounts, TestIdentityRow, TestReads, TestRunRow } from './types.js';
import { projectVisible, visibilityCondition } from './visibility.js';

/** The seqs of the scope's available builds, as a subquery (visibility, query, time range, deadline check). */
function scopeSeqs(handle: DatabaseHandle, scope: AggregateScope, check: RawBuilder<SqlBool> | undefined) {
  let q = handle.db.selectFrom('builds').select('builds.seq').where('builds.seq', 'is not', null).where(visibilityCondition(scope.visibility));
  if (check !== undefined) q = q.where(check);
  if (scope.query !== undefined && scope.query.kind !== 'all') q = q.where(compileQuery(scope.query, dialectOf(handle.dialect)));
  if (scope.startFrom !== undefined) q = q.where('builds.buildstarttime', '>=', scope.startFrom);
  if (scope.startTo !== undefined) q = q.where('builds.buildstarttime', '<', scope.startTo);
  return q;
}

const num = (v: unknown): number => Number(v);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** Per-test counts over the scope's builds, the tests with most failures first (ties: most runs, id). */
export async function testCounts(handle: DatabaseHandle, scope: AggregateScope, guard: GuardedSearch, limit: number): Promise<TestCounts[]> {
  const F = TEST_OUTCOME_CODES.failed;
  const S = TEST_OUTCOME_CODES.skipped;
  const q = handle.db
    .selectFrom('test_runs as r')
    .innerJoin('tests as t', 't.id', 'r.test_id')
    .where('r.seq', 'in', scopeSeqs(handle, scope, guard.deadlineCheck))
    .select([
      'r.test_id as test_id',
      't.tool_type as tool_type',
      't.project_name as project_name',
      't.suite as suite',
      't.name as name',
      't.parameters as parameters',
      sql<number>`sum(CASE WHEN r.outcome <> ${S} THEN 1 ELSE 0 END)`.as('runs'),
      sql<number>`sum(CASE WHEN r.outcome = ${F} THEN 1 ELSE 0 END)`.as('failures'),
      sql<number>`sum(CASE WHEN r.outcome = ${S} THEN 1 ELSE 0 END)`.as('skipped'),
      sql<number>`count(DISTINCT r.seq)`.as('builds'),
      sql<number>`avg(r.duration_ms)`.as('mean'),
      sql<number>`max(r.seq)`.as('last_seq'),
    ])
    .groupBy(['r.test_id', 't.tool_type', 't.project_name', 't.suite', 't.name', 't.parameters'])
    .orderBy('failures', 'desc')
    .orderBy('runs', 'desc')
    .orderBy('r.test_id')
    .limit(limit);
  const rows = await guard.search((read) => read(q.compile()));
  return rows.map((r) => ({
    testId: num(r.test_id),
    tool: r.tool_type,
    project: r.project_name,
    suite: r.suite,
    name: r.name,
    parameters: r.parameters,
    runs: num(r.runs),
    failures: num(r.failures),
    skipped: num(r.skipped),
    builds: num(r.builds),
    meanDurationMs: num(r.mean),
    lastSeq: num(r.last_seq),
  }));
}

/** The `Git commit id` value of the build (custom values are stored lower-cased, derive.ts). */
function commitOf(handle: DatabaseHandle) {
  const tables = customValueTables(handle.dialect === 'sqlite');
  const parts = tables.map((t) => sql`SELECT cv.value FROM ${sql.table(t)} AS cv WHERE cv.seq = r.seq AND cv.name = 'git commit id'`);
  return sql<string | null>`(${sql.join(parts, sql` UNION ALL `)} LIMIT 1)`;
}

/**
 * The executions of the given tests in the scope's builds (or, with `scope.query` absent, all
 * their visible builds), latest `perTest` builds' worth at most, in build order.
 */
export async function testRuns(handle: DatabaseHandle, testIds: readonly number[], scope: AggregateScope, guard: GuardedSearch, maxRows = 100_000): Promise<TestRunRow[]> {
  if (testIds.length === 0) return [];
  const q = handle.db
    .selectFrom('test_runs as r')
    .innerJoin('builds', 'builds.seq', 'r.seq')
    .where('r.test_id', 'in', [...testIds])
    .where('r.seq', 'in', scopeSeqs(handle, scope, guard.deadlineCheck))
    .select([
      'r.test_id as test_id',
      'r.seq as seq',
      'builds.id as build_id',
      sql<number | null>`builds.buildstarttime`.as('start_time'),
      commitOf(handle).as('git_commit'),
      'r.outcome as outcome',
      'r.attempt as attempt',
      'r.duration_ms as duration_ms',
      'r.group_id as group_id',
    ])
    .orderBy('r.seq', 'desc')
    .orderBy('r.ord', 'desc')
    .limit(maxRows);
  const rows = await guard.search((read) => read(q.compile()));
  return rows.reverse().map((r) => ({
    testId: num(r.test_id),
    seq: num(r.seq),
    buildId: r.build_id,
    startTime: numOrNull(r.start_time),
    commit: (r.git_commit as string | null) ?? null,
    outcome: TEST_OUTCOME_OF_CODE[num(r.outcome)] ?? 'skipped',
    attempt: num(r.attempt),
    durationMs: num(r.duration_ms),
    failureGroup: numOrNull(r.group_id),
  }));
}

/** A test by id, or undefined when it does not exist or is of a project `v` does not show. */
export async function testById(handle: DatabaseHandle, testId: number, v: Visibility): Promise<TestIdentityRow | undefined> {
  const row = await handle.db.selectFrom('tests').select(['id', 'tool_type', 'project_name', 'suite', 'name', 'parameters']).where('id', '=', testId).executeTakeFirst();
  // A test's project is its builds' project: the one visibility rule decides (visibility.ts).
  if (row === undefined || !projectVisible(v, row.project_name)) return undefined;
  return { testId: num(row.id), tool: row.tool_type, project: row.project_name, suite: row.suite, name: row.name, parameters: row.parameters };
}

/** Failure groups of the scope's builds (failed test attempts and build failures), most builds first. */
export async function failureGroups(handle: DatabaseHandle, scope: AggregateScope, guard: GuardedSearch, limit: number, testId?: number): Promise<FailureGroupRow[]> {
  const seqs = scopeSeqs(handle, scope, guard.deadlineCheck);
  let tests = handle.db.selectFrom('test_runs').select(['seq', sql<number | null>`test_id`.as('test_id'), sql<number>`group_id`.as('group_id')]).where('group_id', 'is not', null).where('seq', 'in', seqs);
  if (testId !== undefined) tests = tests.where('test_id', '=', testId);
  const own = handle.db.selectFrom('build_failures').select(['seq', sql<number | null>`NULL`.as('test_id'), 'group_id']).where('seq', 'in', scopeSeqs(handle, scope, guard.deadlineCheck));
  const all = testId === undefined ? tests.unionAll(own) : tests;
  const q = handle.db
    .selectFrom(all.as('f'))
    .innerJoin('builds', 'builds.seq', 'f.seq')
    .innerJoin('failure_groups as g', 'g.id', 'f.group_id')
    .select([
      'g.id as id',
      'g.group_key as group_key',
      'g.sample as sample',
      sql<number>`count(DISTINCT f.seq)`.as('builds'),
      sql<number>`count(DISTINCT f.test_id)`.as('tests'),
      sql<number>`count(*)`.as('failures'),
      sql<number | null>`min(builds.buildstarttime)`.as('first_seen'),
      sql<number | null>`max(builds.buildstarttime)`.as('last_seen'),
      sql<number>`max(f.seq)`.as('last_seq'),
    ])
    .groupBy(['g.id', 'g.group_key', 'g.sample'])
    .orderBy('builds', 'desc')
    .orderBy('g.id')
    .limit(limit);
  const rows = await guard.search((read) => read(q.compile()));
  // The latest build of each group, for a link to it: a look-up by primary key after the grouping.
  const lastSeqs = [...new Set(rows.map((r) => num(r.last_seq)))];
  const ids = new Map<number, string>();
  if (lastSeqs.length > 0) for (const b of await handle.db.selectFrom('builds').select(['seq', 'id']).where('seq', 'in', lastSeqs).execute()) ids.set(num(b.seq), b.id);
  return rows.map((r) => ({
    groupId: num(r.id),
    key: r.group_key,
    sample: r.sample,
    builds: num(r.builds),
    tests: num(r.tests),
    failures: num(r.failures),
    firstSeen: numOrNull(r.first_seen),
    lastSeen: numOrNull(r.last_seen),
    lastBuildId: ids.get(num(r.last_seq)) ?? '',
  }));
}

/** The ids of the tests of these identity keys, by key (a key no build has sent is absent). */
export async function testIdsOf(handle: DatabaseHandle, keys: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const unique = [...new Set(keys)];
  // A few hundred keys a statement: within every database's limit of bound parameters.
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await handle.db.selectFrom('tests').select(['id', 'test_key']).where('test_key', 'in', unique.slice(i, i + 500)).execute();
    for (const r of rows) out.set(r.test_key, num(r.id));
  }
  return out;
}

export function testReads(handle: DatabaseHandle, guard: GuardedSearch): TestReads {
  return {
    counts: (scope, limit) => testCounts(handle, scope, guard, limit),
    runs: (ids, scope, maxRows) => testRuns(handle, ids, scope, guard, maxRows),
    byId: (id, v) => testById(handle, id, v),
    failureGroups: (scope, limit, testId) => failureGroups(handle, scope, guard, limit, testId),
    idsOf: (keys) => testIdsOf(handle, keys),
  };
}
