// Reads of the test dimension (store migration 0020) for the builds a query matches: per-test
// counts (from the per-test rollups of migration 0022 where they answer), a test's executions and
// its latest ones for a verdict, failure groups, and one group's tests, builds and days. Every
// statement runs through the store's search guard (search-guard.ts: time limit, search threads or
// slots) and reads builds under the caller's visibility, so a test of a project she may not see has
// no runs for her and does not exist.

import { sql, type CompiledQuery, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { DatabaseHandle } from '../../db/database.js';
import { compileQuery, dialectOf } from '../../sql/index.js';
import { customValueTables } from '../../sql/layout.js';
import { DAY_MS, FAILURE_GROUP_ROLLUPS, FAILURE_GROUP_TEST_ROLLUPS, rollupsAsBuilds, TEST_ROLLUPS } from './rollups.js';
import { rollupEligible } from './rollups-query.js';
import type { GuardedSearch, ReadRows } from '../search/search-guard.js';
import { numbersOf } from '../search/packed-rows.js';
import { hasSeq, inSeqSet, seqBounds, seqCount, seqRanges } from '../search/seq-set.js';
import { ofLatestRun, topFailureGroups, topTestCounts, type FailureGroupsPart, type FailureGroupsTotal, type PackFold, type PackFolds, type TestCountsPart } from '../events/test-packs.js';
import { layoutOf } from '../schema/layout.js';
import { assertNever } from '../../query/assert.js';
import { TEST_OUTCOME_OF_CODE, TEST_OUTCOME_CODES } from '../events/test-runs.js';
import type { AggregateScope, BuildCommitRow, RecentRunRow, FailureGroupCursor, FailureGroupDetail, FailureGroupDetailOptions, FailureGroupRow, TestCounts, TestIdentityRow, TestReads, TestRunRow, Visibility } from '../types.js';

/** A test's identity as the test dimension's reads select it (test_runs as r, tests as t). */
const TEST_IDENTITY_COLUMNS = ['r.test_id as test_id', 't.tool_type as tool_type', 't.project_name as project_name', 't.suite as suite', 't.name as name', 't.parameters as parameters'] as const;

export type { FailureGroupBuildRow, FailureGroupCursor, FailureGroupDetail, FailureGroupRow, FailureGroupTestRow, TestCounts, TestIdentityRow, TestReads, TestRunRow } from '../types.js';
import { projectVisible, visibilityCondition } from '../search/visibility.js';

const num = (v: unknown): number => Number(v);

/** Values a statement when a list is bound as parameters: within every database's limit. */
const PARAMETERS_PER_STATEMENT = 500;

/** `read` over `list` in slices of `size`, the answers in order; `concurrency` slices read at a time. */
async function inSlices<T, R>(list: readonly T[], size: number, read: (slice: readonly T[]) => Promise<readonly R[]>, concurrency = 1): Promise<R[]> {
  const slices: (readonly T[])[] = [];
  for (let i = 0; i < list.length; i += size) slices.push(list.slice(i, i + size));
  const answers: (readonly R[])[] = [];
  let next = 0;
  const reader = async (): Promise<void> => {
    for (let k = next++; k < slices.length; k = next++) answers[k] = await read(slices[k]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, slices.length) }, reader));
  return answers.flat();
}

/**
 * Statements of one request's independent reads (the verdicts' walks and commits) run at a time:
 * the store's search threads by default (SQLite; on PostgreSQL, search slots), so that both
 * cores work on the one request a person waits for.
 */
const READS_AT_A_TIME = 2;
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * The scope's builds as a set of seqs (seq-set.ts) from the analytics index, for a scope that
 * names builds by a query or a time range: then a statement tests each row's seq against it
 * instead of testing the query on the joined build. Undefined for every visible build (those
 * reads have ways of their own), and where the store has no index or it cannot answer yet.
 */
export type ScopeSets = (scope: AggregateScope) => Promise<Uint32Array | undefined>;

function everyBuild(scope: AggregateScope): boolean {
  return (scope.query === undefined || scope.query.kind === 'all') && scope.startFrom === undefined && scope.startTo === undefined;
}

async function setOf(sets: ScopeSets | undefined, scope: AggregateScope): Promise<Uint32Array | undefined> {
  return sets === undefined || everyBuild(scope) ? undefined : sets(scope);
}

/**
 * Only the scope's builds, as conditions on the joined `builds` (visibility, query, time range,
 * deadline check), or, given the scope's set, that the build is in it (the set holds all of those).
 */
function inScope<Q extends { where: (e: Expression<SqlBool>) => Q }>(handle: DatabaseHandle, q: Q, scope: AggregateScope, check: RawBuilder<SqlBool> | undefined, set?: Uint32Array): Q {
  let out = q.where(sql<SqlBool>`builds.seq IS NOT NULL`);
  if (check !== undefined) out = out.where(check);
  if (set !== undefined) return out.where(inSeqSet(handle.dialect, sql.ref('builds.seq'), set));
  out = out.where(visibilityCondition(scope.visibility)).where(queryCondition(handle, scope));
  if (scope.startFrom !== undefined) out = out.where(sql<SqlBool>`builds.buildstarttime >= ${scope.startFrom}`);
  if (scope.startTo !== undefined) out = out.where(sql<SqlBool>`builds.buildstarttime < ${scope.startTo}`);
  return out;
}

/**
 * Per-test counts over the scope's builds, the tests with most failures first (ties: most runs,
 * id): from the per-test rollups when they answer the scope (countsFromRollups), else from the
 * executions, grouped by the test's id alone over the joined builds (rather than a list of the
 * scope's seqs, which the planner probes once per test and seq). The identities of the tests
 * answered are read afterwards by primary key.
 */
export async function testCounts(handle: DatabaseHandle, scope: AggregateScope, guard: GuardedSearch, limit: number, sets: ScopeSets | undefined, packs: ScopePacks): Promise<TestCounts[]> {
  const rows = rollupsAnswer(scope) ? await countsFromRollups(handle, scope, guard, limit) : await countsFromRuns(handle, scope, guard, limit, await setOf(sets, scope), packs);
  const identities = await testsByIds(handle, rows.map((r) => r.testId));
  return rows.flatMap((r) => {
    const t = identities.get(r.testId);
    return t === undefined ? [] : [{ ...r, ...t }];
  });
}

type Counted = Omit<TestCounts, keyof TestIdentityRow> & { readonly testId: number };

/** A test's counts from SQL; `latest`: its latest execution as `max(seq * 4 + outcome)` (LATEST_RUN). */
const countedOf = (r: { test_id: unknown; runs: unknown; failures: unknown; skipped: unknown; builds: unknown; mean: unknown; latest: unknown }): Counted => {
  const latest = ofLatestRun(num(r.latest));
  return {
    testId: num(r.test_id),
    runs: num(r.runs),
    failures: num(r.failures),
    skipped: num(r.skipped),
    builds: num(r.builds),
    meanDurationMs: num(r.mean),
    lastSeq: latest.seq,
    latestOutcome: latest.outcome,
  };
};

/** latestRun (events/test-packs.ts) of an entry of test_runs `r`, in SQL. */
const LATEST_RUN = sql<number>`r.seq * 4 + r.outcome`;

/** Whether the per-test rollups hold the scope's counts: no time range, and a query of rollup dimensions (rollups-query.ts). */
function rollupsAnswer(scope: AggregateScope): boolean {
  return scope.startFrom === undefined && scope.startTo === undefined && rollupEligible(scope.query);
}

/** The scope's query as a condition on `builds` (or the rollup rows read under that name). */
function queryCondition(handle: DatabaseHandle, scope: AggregateScope): RawBuilder<SqlBool> {
  return scope.query === undefined || scope.query.kind === 'all' ? sql<SqlBool>`1 = 1` : (compileQuery(scope.query, dialectOf(handle.dialect)) as unknown as RawBuilder<SqlBool>);
}

/**
 * The counts from the executions: of the scope's set's builds from their test packs
 * (summed over the ranges read), else over the joined builds.
 */
async function countsFromRuns(handle: DatabaseHandle, scope: AggregateScope, guard: GuardedSearch, limit: number, set: Uint32Array | undefined, packs: ScopePacks): Promise<Counted[]> {
  if (set !== undefined) return topTestCounts(await packs.counts(scope, set), limit);
  const F = TEST_OUTCOME_CODES.failed;
  const S = TEST_OUTCOME_CODES.skipped;
  const q = inScope(handle, handle.db.selectFrom('test_runs as r').innerJoin('builds', 'builds.seq', 'r.seq'), scope, guard.deadlineCheck)
    .select([
      'r.test_id as test_id',
      sql<number>`sum(CASE WHEN r.outcome <> ${S} THEN 1 ELSE 0 END)`.as('runs'),
      sql<number>`sum(CASE WHEN r.outcome = ${F} THEN 1 ELSE 0 END)`.as('failures'),
      sql<number>`sum(CASE WHEN r.outcome = ${S} THEN 1 ELSE 0 END)`.as('skipped'),
      sql<number>`count(DISTINCT r.seq)`.as('builds'),
      sql<number>`avg(r.duration_ms)`.as('mean'),
      sql<number>`max(${LATEST_RUN})`.as('latest'),
    ])
    .groupBy('r.test_id')
    .orderBy('failures', 'desc')
    .orderBy('runs', 'desc')
    .orderBy('r.test_id')
    .limit(limit);
  return (await guard.search((read) => read(q.compile()))).map(countedOf);
}

/**
 * Ranges of packs read at a time: on PostgreSQL one range crosses while the two fold threads fold
 * two others (with two at a time, the connection waited for both folds; `tag:CI`'s page at 20
 * million executions: 550 ms with two, 430 and 407 ms with three and four, medians of 8); on
 * SQLite the third waits for a search thread, which then never waits for a statement.
 */
const PACK_READS_AT_A_TIME = 3;

/** Builds whose packs one statement of foldedPacks reads: a pack stream of at most a few MB, and ranges enough for both search threads (or for PostgreSQL to send one while the fold threads fold others). */
const PACKED_BUILDS_PER_READ = 5000;

/**
 * The folds of a scope's set's test packs, by what they count. A reader (testReads) keeps what it
 * folded for a scope: the Tests page reads its counts, then its failure groups, from one read of
 * the packs (each read of 50,000 builds' packs took 150-200 ms of the page).
 */
export interface ScopePacks {
  counts(scope: AggregateScope, set: Uint32Array): Promise<TestCountsPart[]>;
  groups(scope: AggregateScope, set: Uint32Array): Promise<FailureGroupsPart[]>;
}

/** A scope's counts and groups from one read of its packs, the first time its counts are asked for; its groups alone when they are asked first. */
function packsKept(handle: DatabaseHandle, guard: GuardedSearch): ScopePacks {
  const folded = new Map<AggregateScope, Promise<PackFolds['both'][]>>();
  return {
    counts: async (scope, set) => {
      let both = folded.get(scope);
      if (both === undefined) folded.set(scope, (both = foldedPacks(handle, guard, set, 'both')));
      return (await both).map((p) => p.counts);
    },
    groups: async (scope, set) => {
      const both = folded.get(scope);
      return both === undefined ? foldedPacks(handle, guard, set, 'failureGroups') : (await both).map((p) => p.groups);
    },
  };
}

/**
 * The fold `fold` of the set's builds' test packs: a range of seqs at a time, each range's packs
 * as one pack stream (StoreLayout.packStream), folded where it is read (in a search thread on
 * SQLite), two ranges at a time. Reads only the set's builds, where the test index would be
 * walked whole (docs/tests.md, "Speed"); the failure groups alone, only those with failures.
 */
async function foldedPacks<F extends PackFold>(handle: DatabaseHandle, guard: GuardedSearch, set: Uint32Array, fold: F): Promise<PackFolds[F][]> {
  const ranges = seqRanges(set, PACKED_BUILDS_PER_READ);
  return guard.search((_read, _readPacked, readFolded) =>
    inSlices(
      ranges,
      1,
      async ([range]) => {
        let q = handle.db
          .selectFrom('test_packs as p')
          .select(layoutOf(handle.dialect).packStream(fold === 'both').as('packs'))
          .where('p.seq', '>=', range![0])
          .where('p.seq', '<=', range![1])
          .where(inSeqSet(handle.dialect, sql.ref('p.seq'), set));
        if (fold === 'failureGroups') q = q.where('p.failures', 'is not', null);
        return [await readFolded(q.compile(), fold)];
      },
      PACK_READS_AT_A_TIME,
    ),
  );
}

/**
 * The counts from test_rollups (a few rows per test, whatever the number of builds), then each
 * answered test's latest build in the scope: its executions walked from the newest by the index
 * (test_id, seq, ...) until one of a build the scope holds.
 */
async function countsFromRollups(handle: DatabaseHandle, scope: AggregateScope, guard: GuardedSearch, limit: number): Promise<Counted[]> {
  const where = sql<SqlBool>`${visibilityCondition(scope.visibility)} AND ${queryCondition(handle, scope)}`;
  const sums = sql<{ test_id: unknown; runs: unknown; failures: unknown; skipped: unknown; builds: unknown; mean: unknown }>`SELECT builds.test_id AS test_id, sum(builds.runs) AS runs,
      sum(builds.failures) AS failures, sum(builds.skipped) AS skipped, sum(builds.builds) AS builds, sum(builds.duration_sum) / sum(builds.attempts) AS mean
    FROM ${rollupsAsBuilds(TEST_ROLLUPS)} WHERE ${where}
    GROUP BY builds.test_id ORDER BY failures DESC, runs DESC, test_id LIMIT ${limit}`;
  return guard.search(async (read) => {
    const rows = await read(sums.compile(handle.db));
    if (rows.length === 0) return [];
    // Every build the caller may see: a test's builds are all of its project, which the sums
    // already checked, so its latest is the index's last entry, no build read.
    // Ordered and limited, not max(): the index's last entry, where max of an expression read all
    // of a test's entries (the empty query's page on PostgreSQL at 20 million executions: 318 to
    // 650 ms).
    const lastRun = everyBuild(scope)
      ? sql`(SELECT ${LATEST_RUN} FROM test_runs AS r WHERE r.test_id = t.id ORDER BY r.seq DESC, r.outcome DESC LIMIT 1)`
      : sql`(SELECT ${LATEST_RUN} FROM test_runs AS r JOIN builds ON builds.seq = r.seq WHERE r.test_id = t.id AND ${where} ORDER BY r.seq DESC, r.outcome DESC LIMIT 1)`;
    const latest = sql<{ test_id: unknown; latest: unknown }>`SELECT t.id AS test_id, ${lastRun} AS latest
      FROM tests AS t WHERE t.id IN (${sql.join(rows.map((r) => num(r.test_id)))})`;
    const last = new Map((await read(latest.compile(handle.db))).map((r) => [num(r.test_id), r.latest]));
    return rows.map((r) => countedOf({ ...r, latest: last.get(num(r.test_id)) }));
  });
}

/** The identities of these tests, by id. */
async function testsByIds(handle: DatabaseHandle, ids: readonly number[]): Promise<Map<number, TestIdentityRow>> {
  const rows = await inSlices(ids, PARAMETERS_PER_STATEMENT, (slice) =>
    handle.db.selectFrom('tests').select(['id', 'tool_type', 'project_name', 'suite', 'name', 'parameters']).where('id', 'in', slice).execute(),
  );
  return new Map(rows.map((t) => [num(t.id), identityOf(t)]));
}

const identityOf = (t: { id: unknown; tool_type: string; project_name: string | null; suite: string; name: string; parameters: string }): TestIdentityRow => ({
  testId: num(t.id),
  tool: t.tool_type,
  project: t.project_name,
  suite: t.suite,
  name: t.name,
  parameters: t.parameters,
});

/** The name of the custom value that holds a build's Git commit, as stored (lower-cased, derive.ts). */
const COMMIT_NAME = 'git commit id';

/**
 * The `Git commit id` value of the build with seq `r.seq` (custom values are stored lower-cased,
 * derive.ts). Looked up by the seq alone, the name picked among the build's few values: a condition
 * on the name lets the planner take the (name, value, seq) index and read every build's commit for
 * each run.
 */
function commitOf(handle: DatabaseHandle) {
  const tables = customValueTables(dialectOf(handle.dialect).recentRows);
  const parts = tables.map((t) => sql`SELECT max(CASE WHEN cv.name = ${sql.lit(COMMIT_NAME)} THEN cv.value END) AS value FROM ${sql.table(t)} AS cv WHERE cv.seq = r.seq`);
  return sql<string | null>`(SELECT max(c.value) FROM (${sql.join(parts, sql` UNION ALL `)}) AS c)`;
}

/**
 * The executions of the given tests in the scope's builds (or, with `scope.query` absent, all
 * their visible builds), the latest `maxRows` at most, in build order. The rows are chosen first
 * and only they get their build's ID, start and commit: computed before the sort, the commit was
 * read for every execution of the tests.
 */
export async function testRuns(handle: DatabaseHandle, testIds: readonly number[], scope: AggregateScope, guard: GuardedSearch, maxRows = 100_000): Promise<TestRunRow[]> {
  if (testIds.length === 0) return [];
  const chosen = inScope(handle, handle.db.selectFrom('test_runs as r').innerJoin('builds', 'builds.seq', 'r.seq'), scope, guard.deadlineCheck)
    .where('r.test_id', 'in', [...testIds])
    .select(['r.test_id', 'r.seq', 'r.ord', 'r.outcome', 'r.attempt', 'r.duration_ms', 'r.group_id'])
    .orderBy('r.seq', 'desc')
    .orderBy('r.ord', 'desc')
    .limit(maxRows);
  const q = handle.db
    .selectFrom(chosen.as('r'))
    .innerJoin('builds', 'builds.seq', 'r.seq')
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
    .orderBy('r.ord', 'desc');
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

/** Tests a statement of recentRuns: a UNION ALL of one index walk each. */
const RECENT_TESTS_PER_STATEMENT = 100;

/**
 * Each test's latest `perTest` executions in the scope's builds (test id, seq, outcome), newest
 * first: per test, its entries of the index (test_id, seq, outcome, duration_ms) walked back from
 * the newest until `perTest` of the scope's builds. No row of test_runs is read. With the scope's
 * set from the analytics index (ScopeSets) the entries are read in windows and tested here
 * (recentRunsInSet); without one, each build is joined and tested.
 */
export async function recentRuns(handle: DatabaseHandle, testIds: readonly number[], scope: AggregateScope, guard: GuardedSearch, perTest: number, sets?: ScopeSets): Promise<RecentRunRow[]> {
  // Every build the caller may see: test_runs holds available builds only, and a test's builds are
  // all of its project, so the visibility is one check per test and the walks need no build
  // (the index alone: 754 tests' walks at 20 million executions, ~350 ms with the builds).
  const every = everyBuild(scope);
  const ids = every ? [...(await testsByIds(handle, testIds)).values()].filter((t) => projectVisible(scope.visibility, t.project)).map((t) => t.testId) : testIds;
  const set = await setOf(sets, scope);
  if (set !== undefined) return recentRunsInSet(handle, ids, guard, perTest, set);
  // A test's id: a number, or the lateral walk's key `t.id`.
  const entries = (id: number | RawBuilder<number>) => {
    const own = handle.db.selectFrom('test_runs as r').where('r.test_id', '=', id);
    return every ? own : inScope(handle, handle.db.selectFrom('test_runs as r').innerJoin('builds', 'builds.seq', 'r.seq').where('r.test_id', '=', id), scope, guard.deadlineCheck);
  };
  // Within a build, the attempts in the index's order (by outcome: skipped, failed, passed): a
  // walk that ends in a build's attempts ends the same on every path and database.
  const latest = (id: number | RawBuilder<number>) =>
    entries(id).select(['r.test_id as test_id', 'r.seq as seq', 'r.outcome as outcome']).orderBy('r.seq', 'desc').orderBy('r.outcome', 'desc').limit(perTest);
  const statement = (slice: readonly number[]): CompiledQuery => {
    const walks = layoutOf(handle.dialect).walks;
    switch (walks) {
      case 'union': {
        const parts = slice.map((id) => handle.db.selectFrom(latest(id).as('w')).selectAll());
        return parts.slice(1).reduce((all, w) => all.unionAll(w), parts[0]!).compile();
      }
      case 'lateral':
        return sql`SELECT w.test_id, w.seq, w.outcome FROM unnest(CAST(${[...slice]} AS bigint[])) AS t(id) CROSS JOIN LATERAL (${latest(sql<number>`t.id`)}) AS w`.compile(handle.db);
      default:
        return assertNever(walks, 'walks');
    }
  };
  const walk = (slice: readonly number[]): Promise<RecentRunRow[]> =>
    // Packed by column: tens of thousands of rows cross from the search thread as three arrays.
    guard.search(async (_read, readPacked) => {
      const packed = await readPacked(statement(slice), 3);
      if (packed.length === 0) return [];
      const [tests, seqs, outcomes] = packed.columns.map(numbersOf);
      return Array.from({ length: packed.length }, (_, i) => ({ testId: tests![i]!, seq: seqs![i]!, outcome: TEST_OUTCOME_OF_CODE[outcomes![i]!] ?? 'skipped' }));
    });
  return inSlices(ids, slicesFor(ids), walk, READS_AT_A_TIME);
}

/**
 * Tests a statement of the walks takes: a few (the Tests page judges its lists 20 at a time) still
 * make one statement per search thread, so both work on them.
 */
const slicesFor = (ids: readonly unknown[]): number => Math.max(1, Math.min(RECENT_TESTS_PER_STATEMENT, Math.ceil(ids.length / READS_AT_A_TIME)));

/**
 * The most entries a window of recentRunsInSet reads (about 0.5 MB of text a test): a set of few
 * builds far apart reads a test's index in several windows rather than in one of any size.
 */
const MAX_WINDOW = 65_536;

/** A test's window of its index: the entries at or below seq `upper`, `size` of them at most. */
interface RunWindow {
  readonly testId: number;
  readonly upper: number;
  readonly size: number;
}

/**
 * recentRuns given the scope's set: each test's entries within the set's seqs read newest first
 * in windows, as latestRun numbers (`seq * 4 + outcome`, one text a test), and tested against the
 * set here. The first window holds as many entries as `perTest` needs at the set's density, and a
 * quarter more; a test still short after a full window reads the next, twice as large, from the
 * last build it read (whose attempts that window may have cut, so they are read again). Testing
 * each entry in SQL called a function of the search thread per entry: the Tests page's walks of
 * 200 tests at 20 million executions took 137-169 ms, the windows 50-72 ms in one thread.
 */
async function recentRunsInSet(handle: DatabaseHandle, ids: readonly number[], guard: GuardedSearch, perTest: number, set: Uint32Array): Promise<RecentRunRow[]> {
  const bounds = seqBounds(set);
  if (bounds === undefined) return [];
  const density = seqCount(set) / (bounds.last - bounds.first + 1);
  const entries = (id: number | RawBuilder<number>, upper: number | RawBuilder<number>, size: number | RawBuilder<number>) =>
    handle.db
      .selectFrom('test_runs as r')
      .select(LATEST_RUN.as('run'))
      .where('r.test_id', '=', id)
      .where('r.seq', '>=', bounds.first)
      .where('r.seq', '<=', upper)
      .orderBy('r.seq', 'desc')
      .orderBy('r.outcome', 'desc')
      .limit(size);
  const statement = (slice: readonly RunWindow[]): CompiledQuery<{ test_id: unknown; runs: string | null }> => {
    const walks = layoutOf(handle.dialect).walks;
    switch (walks) {
      case 'union': {
        // The search deadline checked once a test, not once an entry (a window is bounded).
        const check = guard.deadlineCheck === undefined ? sql`` : sql` WHERE ${guard.deadlineCheck}`;
        const parts = slice.map((w) => sql`SELECT ${w.testId} AS test_id, (SELECT group_concat(e.run) FROM (${entries(w.testId, w.upper, w.size)}) AS e) AS runs${check}`);
        return sql<{ test_id: unknown; runs: string | null }>`${sql.join(parts, sql` UNION ALL `)}`.compile(handle.db);
      }
      case 'lateral':
        return sql<{ test_id: unknown; runs: string | null }>`SELECT t.id AS test_id, (SELECT string_agg(CAST(e.run AS text), ',') FROM (${entries(sql<number>`t.id`, sql<number>`t.upper`, sql<number>`t.size`)}) AS e) AS runs
          FROM unnest(CAST(${slice.map((w) => w.testId)} AS bigint[]), CAST(${slice.map((w) => w.upper)} AS bigint[]), CAST(${slice.map((w) => w.size)} AS bigint[])) AS t(id, upper, size)`.compile(handle.db);
      default:
        return assertNever(walks, 'walks');
    }
  };
  const kept = new Map<number, RecentRunRow[]>(ids.map((id) => [id, []]));
  let windows: RunWindow[] = ids.map((testId) => ({ testId, upper: bounds.last, size: Math.min(Math.ceil((perTest / density) * 1.25), MAX_WINDOW) }));
  while (windows.length > 0) {
    const read = await inSlices(windows, slicesFor(windows), (slice) => guard.search((read) => read(statement(slice))), READS_AT_A_TIME);
    const next: RunWindow[] = [];
    const byTest = new Map(windows.map((w) => [w.testId, w]));
    for (const row of read) {
      const window = byTest.get(num(row.test_id))!;
      const runs = row.runs === null ? [] : row.runs.split(',').map(Number).sort((a, b) => b - a);
      const full = runs.length >= window.size;
      // A full window may have cut its last build's attempts: that build is read again.
      const last = full ? ofLatestRun(runs[runs.length - 1]!).seq : -1;
      const mine = kept.get(window.testId)!;
      for (const run of runs) {
        const { seq, outcome } = ofLatestRun(run);
        if (seq === last) break;
        if (hasSeq(set, seq)) mine.push({ testId: window.testId, seq, outcome });
        if (mine.length === perTest) break;
      }
      // A window of one build's attempts only grows past MAX_WINDOW, so that it ends.
      if (full && mine.length < perTest) next.push({ testId: window.testId, upper: last, size: ofLatestRun(runs[0]!).seq === last ? window.size * 2 : Math.min(window.size * 2, MAX_WINDOW) });
    }
    windows = next;
  }
  return [...kept.values()].flat();
}

/** The commits of the builds of these seqs that have one, a few hundred a statement. */
export async function commitsOf(handle: DatabaseHandle, seqs: readonly number[], guard: GuardedSearch): Promise<BuildCommitRow[]> {
  const rows = await inSlices(seqs, PARAMETERS_PER_STATEMENT, (slice) => {
    const q = handle.db
      .selectFrom('builds as r')
      .where('r.seq', 'in', slice)
      .select(['r.seq as seq', commitOf(handle).as('git_commit')]);
    return guard.search((read) => read(q.compile()));
  }, READS_AT_A_TIME);
  return rows.flatMap((r) => (r.git_commit === null ? [] : [{ seq: num(r.seq), commit: r.git_commit as string }]));
}

/**
 * The builds with seqs in [from, to] whose commit is one of `commits`: one seek of the (name,
 * value, seq) index per commit and table, the seqs a range of it.
 */
export async function buildsOfCommits(handle: DatabaseHandle, commits: readonly string[], from: number, to: number, guard: GuardedSearch): Promise<BuildCommitRow[]> {
  const tables = customValueTables(dialectOf(handle.dialect).recentRows);
  const rows = await inSlices([...new Set(commits)], PARAMETERS_PER_STATEMENT, (slice) => {
    const parts = tables.map(
      (t) => sql`SELECT cv.seq AS seq, cv.value AS value FROM ${sql.table(t)} AS cv WHERE cv.name = ${sql.lit(COMMIT_NAME)} AND cv.value IN (${sql.join(slice)}) AND cv.seq >= ${from} AND cv.seq <= ${to}`,
    );
    return guard.search((read) => read(sql<{ seq: unknown; value: string }>`${sql.join(parts, sql` UNION ALL `)}`.compile(handle.db)));
  }, READS_AT_A_TIME);
  return rows.map((r) => ({ seq: num(r.seq), commit: r.value }));
}

/** A test by id, or undefined when it does not exist or is of a project `v` does not show. */
export async function testById(handle: DatabaseHandle, testId: number, v: Visibility): Promise<TestIdentityRow | undefined> {
  const row = (await testsByIds(handle, [testId])).get(testId);
  // A test's project is its builds' project: the one visibility rule decides (visibility.ts).
  if (row === undefined || !projectVisible(v, row.project)) return undefined;
  return row;
}

/** Which failures to read: those of one test (its attempts only), or of one group. */
interface FailureFilter {
  readonly testId?: number;
  readonly groupId?: number;
}

/**
 * The scope's failures as rows (seq, test_id, group_id, start: the build's): failed test attempts with a group and,
 * unless one test's are asked for, the builds' own failures (test_id NULL).
 */
function failuresOf(handle: DatabaseHandle, scope: AggregateScope, check: RawBuilder<SqlBool> | undefined, filter: FailureFilter = {}, set?: Uint32Array) {
  // The scope as conditions on the joined builds: a list of the scope's seqs is probed once per failure and seq.
  let tests = inScope(handle, handle.db.selectFrom('test_runs as f').innerJoin('builds', 'builds.seq', 'f.seq'), scope, check, set)
    .select(['f.seq as seq', sql<number | null>`f.test_id`.as('test_id'), sql<number>`f.group_id`.as('group_id'), sql<number | null>`builds.buildstarttime`.as('start')])
    .where('f.group_id', 'is not', null);
  if (filter.testId !== undefined) tests = tests.where('f.test_id', '=', filter.testId);
  if (filter.groupId !== undefined) tests = tests.where('f.group_id', '=', filter.groupId);
  if (filter.testId !== undefined) return tests;
  let own = inScope(handle, handle.db.selectFrom('build_failures as f').innerJoin('builds', 'builds.seq', 'f.seq'), scope, check, set).select(['f.seq as seq', sql<number | null>`NULL`.as('test_id'), 'f.group_id as group_id', sql<number | null>`builds.buildstarttime`.as('start')]);
  if (filter.groupId !== undefined) own = own.where('f.group_id', '=', filter.groupId);
  return tests.unionAll(own);
}

/** The statement of the groups of the scope's failures with their counts, most builds first. */
function groupRowsQuery(handle: DatabaseHandle, scope: AggregateScope, check: RawBuilder<SqlBool> | undefined, limit: number, filter: FailureFilter, set: Uint32Array | undefined) {
  // Counted by the group's id alone; its pattern and sample are joined to the rows answered only
  // (grouped by them, every failure carried its text through the sort).
  const counted = handle.db
    .selectFrom(failuresOf(handle, scope, check, filter, set).as('f'))
    .select([
      'f.group_id as id',
      sql<number>`count(DISTINCT f.seq)`.as('builds'),
      sql<number>`count(DISTINCT f.test_id)`.as('tests'),
      sql<number>`count(*)`.as('failures'),
      sql<number>`sum(CASE WHEN f.test_id IS NULL THEN 1 ELSE 0 END)`.as('own_failures'),
      sql<number | null>`min(f.start)`.as('first_seen'),
      sql<number | null>`max(f.start)`.as('last_seen'),
      sql<number>`max(f.seq)`.as('last_seq'),
    ])
    .groupBy('f.group_id')
    .orderBy('builds', 'desc')
    .orderBy('f.group_id')
    .limit(limit);
  return handle.db
    .selectFrom(counted.as('c'))
    .innerJoin('failure_groups as g', 'g.id', 'c.id')
    .select(['c.id as id', 'g.group_key as group_key', 'g.sample as sample', 'c.builds as builds', 'c.tests as tests', 'c.failures as failures', 'c.own_failures as own_failures', 'c.first_seen as first_seen', 'c.last_seen as last_seen', 'c.last_seq as last_seq'])
    .orderBy('c.builds', 'desc')
    .orderBy('c.id');
}

type GroupRowOf = Awaited<ReturnType<ReturnType<typeof groupRowsQuery>['execute']>>[number];

/** The group rows with the id of each one's latest build, read by primary key after the grouping. */
async function withLastBuilds(handle: DatabaseHandle, rows: readonly Omit<GroupRowOf, 'own_failures'>[]): Promise<FailureGroupRow[]> {
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

/**
 * Failure groups of the scope's builds (failed test attempts and build failures), most builds
 * first: from the failure groups' rollups when they answer the scope and no one test's are asked
 * for (groupsFromRollups), from the test packs of the scope's set (groupsFromPacks), else counted
 * from the failures.
 */
export async function failureGroups(handle: DatabaseHandle, scope: AggregateScope, guard: GuardedSearch, limit: number, testId: number | undefined, sets: ScopeSets | undefined, packs: ScopePacks): Promise<FailureGroupRow[]> {
  if (testId === undefined && rollupsAnswer(scope)) return withLastBuilds(handle, await groupsFromRollups(handle, scope, guard, limit));
  const filter = testId === undefined ? {} : { testId };
  const set = await setOf(sets, scope);
  if (testId === undefined && set !== undefined) return withLastBuilds(handle, await groupsFromPacks(handle, topFailureGroups(await packs.groups(scope, set), limit)));
  const rows = await guard.search((read) => read(groupRowsQuery(handle, scope, guard.deadlineCheck, limit, filter, set).compile()));
  return withLastBuilds(handle, rows);
}

/** The groups summed from test packs, with their patterns and samples. */
async function groupsFromPacks(handle: DatabaseHandle, totals: readonly FailureGroupsTotal[]): Promise<Omit<GroupRowOf, 'own_failures'>[]> {
  if (totals.length === 0) return [];
  const texts = await handle.db
    .selectFrom('failure_groups')
    .select(['id', 'group_key', 'sample'])
    .where('id', 'in', totals.map((t) => t.groupId))
    .execute();
  const byId = new Map(texts.map((g) => [num(g.id), g]));
  return totals.flatMap((t) => {
    const g = byId.get(t.groupId);
    return g === undefined ? [] : [{ id: t.groupId, group_key: g.group_key, sample: g.sample, builds: t.builds, tests: t.tests, failures: t.failures, first_seen: t.firstSeen, last_seen: t.lastSeen, last_seq: t.lastSeq }];
  });
}

/**
 * The groups from FAILURE_GROUP_ROLLUPS (a few rows per group, whatever the number of failures),
 * then, for the groups answered only, the tests each hit (distinct tests over the scope's keys in
 * FAILURE_GROUP_TEST_ROLLUPS) and its latest build in the scope (each table's index by group
 * walked from the newest until a build the scope holds).
 */
async function groupsFromRollups(handle: DatabaseHandle, scope: AggregateScope, guard: GuardedSearch, limit: number): Promise<GroupRowOf[]> {
  const where = sql<SqlBool>`${visibilityCondition(scope.visibility)} AND ${queryCondition(handle, scope)}`;
  const check = guard.deadlineCheck ?? sql<SqlBool>`1 = 1`;
  const sums = sql<{ id: unknown; n_builds: unknown; failures: unknown; own_failures: unknown; first_seen: unknown; last_seen: unknown }>`SELECT builds.group_id AS id,
      sum(builds.builds) AS n_builds, sum(builds.failures) AS failures, sum(builds.own_failures) AS own_failures, min(builds.first_seen) AS first_seen, max(builds.last_seen) AS last_seen
    FROM ${rollupsAsBuilds(FAILURE_GROUP_ROLLUPS)} WHERE ${where}
    GROUP BY builds.group_id ORDER BY n_builds DESC, id LIMIT ${limit}`;
  return guard.search(async (read) => {
    const rows = await read(sums.compile(handle.db));
    if (rows.length === 0) return [];
    const latestIn = (table: string) =>
      sql`(SELECT f.seq FROM ${sql.table(table)} AS f JOIN builds ON builds.seq = f.seq WHERE f.group_id = g.id AND ${where} AND ${check} ORDER BY f.seq DESC LIMIT 1)`;
    const details = sql<{ id: unknown; group_key: string; sample: string; tests: unknown; last_seq: unknown }>`SELECT g.id AS id, g.group_key AS group_key, g.sample AS sample,
        (SELECT count(DISTINCT builds.test_id) FROM ${rollupsAsBuilds(FAILURE_GROUP_TEST_ROLLUPS)} WHERE builds.group_id = g.id AND ${where}) AS tests,
        (SELECT max(m.s) FROM (SELECT ${latestIn('test_runs')} AS s UNION ALL SELECT ${latestIn('build_failures')} AS s) AS m) AS last_seq
      FROM failure_groups AS g WHERE g.id IN (${sql.join(rows.map((r) => num(r.id)))})`;
    const byId = new Map((await read(details.compile(handle.db))).map((d) => [num(d.id), d]));
    return rows.flatMap((r) => {
      const d = byId.get(num(r.id));
      if (d === undefined) return [];
      return [{ id: r.id, group_key: d.group_key, sample: d.sample, builds: r.n_builds, tests: d.tests, failures: r.failures, own_failures: r.own_failures, first_seen: r.first_seen, last_seen: r.last_seen, last_seq: d.last_seq } as GroupRowOf];
    });
  });
}

/** The tests a group hit in the scope's builds, most builds first. */
function groupTestsQuery(handle: DatabaseHandle, scope: AggregateScope, check: RawBuilder<SqlBool> | undefined, groupId: number, limit: number, set: Uint32Array | undefined) {
  return inScope(handle, handle.db.selectFrom('test_runs as r').innerJoin('tests as t', 't.id', 'r.test_id').innerJoin('builds', 'builds.seq', 'r.seq'), scope, check, set)
    .where('r.group_id', '=', groupId)
    .select([
      ...TEST_IDENTITY_COLUMNS,
      sql<number>`count(*)`.as('failures'),
      sql<number>`count(DISTINCT r.seq)`.as('builds'),
      sql<number | null>`max(builds.buildstarttime)`.as('last_seen'),
    ])
    .groupBy(['r.test_id', 't.tool_type', 't.project_name', 't.suite', 't.name', 't.parameters'])
    .orderBy('builds', 'desc')
    .orderBy('failures', 'desc')
    .orderBy('r.test_id')
    .limit(limit);
}

/** A build's place in the order of a group's builds: its start, -1 when unknown (those go last). */
const startKey = sql<number>`COALESCE(builds.buildstarttime, -1)`;

/**
 * A page of the builds with failures of a group, the latest start first, ties by seq (one more than
 * the page, to tell a next page). By start rather than availability: the page shows when each
 * build started, and a build sent late belongs where it ran.
 */
function groupBuildsQuery(handle: DatabaseHandle, scope: AggregateScope, check: RawBuilder<SqlBool> | undefined, groupId: number, limit: number, before: FailureGroupCursor | undefined, set: Uint32Array | undefined) {
  let q = handle.db.selectFrom(failuresOf(handle, scope, check, { groupId }, set).as('f')).innerJoin('builds', 'builds.seq', 'f.seq');
  if (before !== undefined) q = q.where(sql<SqlBool>`(${startKey} < ${before.start} OR (${startKey} = ${before.start} AND f.seq < ${before.seq}))`);
  return q
    .select([
      'f.seq as seq',
      'builds.id as build_id',
      sql<number | null>`builds.buildstarttime`.as('start_time'),
      sql<string | null>`builds.buildoutcome`.as('outcome'),
      'builds.project_name as project_name',
      'builds.tool_type as tool_type',
      sql<number>`count(*)`.as('failures'),
      sql<number>`count(DISTINCT f.test_id)`.as('tests'),
    ])
    .groupBy(['f.seq', 'builds.id', sql`builds.buildstarttime`, sql`builds.buildoutcome`, 'builds.project_name', 'builds.tool_type'])
    .orderBy(startKey, 'desc')
    .orderBy('f.seq', 'desc')
    .limit(limit + 1);
}

/** The group's builds per UTC day, the latest `maxDays` days with any. */
function groupDaysQuery(handle: DatabaseHandle, scope: AggregateScope, check: RawBuilder<SqlBool> | undefined, groupId: number, maxDays: number, set: Uint32Array | undefined) {
  const day = dialectOf(handle.dialect).utcDay(sql`builds.buildstarttime`);
  return handle.db
    .selectFrom(failuresOf(handle, scope, check, { groupId }, set).as('f'))
    .innerJoin('builds', 'builds.seq', 'f.seq')
    .where(sql<SqlBool>`builds.buildstarttime IS NOT NULL`)
    .select([day.as('day'), sql<number>`count(DISTINCT f.seq)`.as('builds')])
    .groupBy(day)
    .orderBy(day, 'desc')
    .limit(maxDays);
}

function cursorOf(b: { readonly seq: unknown; readonly start_time: unknown }): FailureGroupCursor {
  return { start: numOrNull(b.start_time) ?? -1, seq: num(b.seq) };
}

/** The group's key and sample when a build `visibility` shows has a failure of it. */
async function visibleGroup(handle: DatabaseHandle, groupId: number, visibility: Visibility, guard: GuardedSearch, read: ReadRows) {
  const any = failuresOf(handle, { visibility }, guard.deadlineCheck, { groupId });
  const q = handle.db.selectFrom('failure_groups as g').select(['g.group_key as group_key', 'g.sample as sample']).where('g.id', '=', groupId).where(({ exists }) => exists(handle.db.selectFrom(any.as('f')).select(sql`1`.as('one'))));
  return (await read(q.compile()))[0];
}

/**
 * One failure group in the scope's builds: its counts, the tests it hit (at most `maxTests`, most
 * builds first), its builds per UTC day and a page of its builds, newest first. Undefined when no
 * build the scope's visibility shows has a failure of it; with a query that matches none of its
 * builds, the group with no builds.
 */
export async function failureGroup(handle: DatabaseHandle, groupId: number, scope: AggregateScope, guard: GuardedSearch, options: FailureGroupDetailOptions, sets?: ScopeSets): Promise<FailureGroupDetail | undefined> {
  const check = guard.deadlineCheck;
  const set = await setOf(sets, scope);
  const found = await guard.search(async (read) => {
    const [row] = await read(groupRowsQuery(handle, scope, check, 1, { groupId }, set).compile());
    if (row === undefined) return { kind: 'none' as const, seen: await visibleGroup(handle, groupId, scope.visibility, guard, read) };
    const tests = await read(groupTestsQuery(handle, scope, check, groupId, options.maxTests, set).compile());
    const days = await read(groupDaysQuery(handle, scope, check, groupId, options.maxDays, set).compile());
    const builds = await read(groupBuildsQuery(handle, scope, check, groupId, options.limit, options.before, set).compile());
    return { kind: 'found' as const, row, tests, days, builds };
  });
  if (found.kind === 'none') {
    if (found.seen === undefined) return undefined;
    const group: FailureGroupRow = { groupId, key: found.seen.group_key, sample: found.seen.sample, builds: 0, tests: 0, failures: 0, firstSeen: null, lastSeen: null, lastBuildId: '' };
    return { group, buildFailures: 0, tests: [], days: [], builds: [], next: null };
  }
  const { row, tests, days, builds } = found;
  const page = builds.slice(0, options.limit);
  return {
    group: (await withLastBuilds(handle, [row]))[0]!,
    buildFailures: num(row.own_failures),
    tests: tests.map((t) => ({
      testId: num(t.test_id),
      tool: t.tool_type,
      project: t.project_name,
      suite: t.suite,
      name: t.name,
      parameters: t.parameters,
      failures: num(t.failures),
      builds: num(t.builds),
      lastSeen: numOrNull(t.last_seen),
    })),
    days: days.reverse().map((d) => ({ day: num(d.day) * DAY_MS, builds: num(d.builds) })),
    builds: page.map((b) => ({
      seq: num(b.seq),
      buildId: b.build_id,
      startTime: numOrNull(b.start_time),
      outcome: b.outcome ?? null,
      project: b.project_name,
      tool: b.tool_type,
      failures: num(b.failures),
      tests: num(b.tests),
    })),
    next: builds.length > options.limit ? cursorOf(page[page.length - 1]!) : null,
  };
}

/** The ids of the tests of these identity keys, by key (a key no build has sent is absent). */
export async function testIdsOf(handle: DatabaseHandle, keys: readonly string[]): Promise<Map<string, number>> {
  const rows = await inSlices([...new Set(keys)], PARAMETERS_PER_STATEMENT, (slice) => handle.db.selectFrom('tests').select(['id', 'test_key']).where('test_key', 'in', slice).execute());
  return new Map(rows.map((r) => [r.test_key, num(r.id)]));
}

/**
 * The test dimension's reads, each scope's builds given by `sets` where it can (ScopeSets). One
 * instance serves one request: a scope's set is found once per scope object and kept by it (a page
 * of tests reads its scope's builds a dozen times), so a later request takes a new one.
 */
export function testReads(handle: DatabaseHandle, guard: GuardedSearch, scopeSets?: ScopeSets): TestReads {
  const found = new Map<AggregateScope, Promise<Uint32Array | undefined>>();
  const sets: ScopeSets | undefined =
    scopeSets === undefined
      ? undefined
      : (scope) => {
          let set = found.get(scope);
          if (set === undefined) found.set(scope, (set = scopeSets(scope)));
          return set;
        };
  const packs = packsKept(handle, guard);
  return {
    counts: (scope, limit) => testCounts(handle, scope, guard, limit, sets, packs),
    runs: (ids, scope, maxRows) => testRuns(handle, ids, scope, guard, maxRows),
    recentRuns: (ids, scope, perTest) => recentRuns(handle, ids, scope, guard, perTest, sets),
    commitsOf: (seqs) => commitsOf(handle, seqs, guard),
    buildsOfCommits: (commits, from, to) => buildsOfCommits(handle, commits, from, to, guard),
    byId: (id, v) => testById(handle, id, v),
    failureGroups: (scope, limit, testId) => failureGroups(handle, scope, guard, limit, testId, sets, packs),
    failureGroup: (groupId, scope, options) => failureGroup(handle, groupId, scope, guard, options, sets),
    idsOf: (keys) => testIdsOf(handle, keys),
  };
}
