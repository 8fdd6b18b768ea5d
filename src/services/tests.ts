// Tests over time (docs/tests.md): the tests of the builds a query matches, with their verdicts
// and statistics, and one test's history. Over the store's test dimension (store/analytics/test-analytics.ts,
// searches under the caller's visibility) and the pure verdicts (test-verdicts.ts).

import { BadRequestError, NotFoundError } from '../errors/domain.js';
import type { FailureGroupCursor, FailureGroupDetail, FailureGroupRow, TestCounts, TestIdentityRow, TestReads, TestRunRow } from '../store/analytics/test-analytics.js';
import type { AggregateScope, BuildStore, RecentRunRow, Visibility } from '../store/types.js';
import { failureEstimate, verdictOf, wilson, type Estimate, type JudgedRun, type TestExecution, type Verdict, type VerdictKind } from './test-verdicts.js';

/** Tests counted per query: enough for every list of the page. */
export const MAX_TESTS = 500;
export const MAX_HISTORY = 1000;
/**
 * Latest executions read per test to judge it, on the Tests page and the build page: the verdicts
 * reach their goal at 50 runs (docs/tests.md), and a verdict says what the test does lately.
 */
export const RUNS_PER_VERDICT = 200;
/** Failure groups answered per query at most. */
export const MAX_GROUPS = 500;
/** A failure group's builds a page at most, the tests it hit and the days with builds it answers. */
export const MAX_GROUP_BUILDS = 500;
export const MAX_GROUP_TESTS = 100;
export const MAX_GROUP_DAYS = 731;

export interface TestSummary extends TestCounts {
  readonly verdict: VerdictKind;
  readonly estimate: Estimate;
}

export interface TestsOverview {
  readonly tests: number;
  readonly mostFailing: readonly TestSummary[];
  readonly flakiest: readonly TestSummary[];
  readonly slowest: readonly TestSummary[];
  readonly newlyFailing: readonly TestSummary[];
  readonly failureGroups: readonly FailureGroupRow[];
}

export interface TestHistory {
  readonly test: TestIdentityRow;
  readonly runs: readonly TestRunRow[];
  readonly verdict: Verdict;
  readonly estimate: Estimate;
  readonly failureGroups: readonly FailureGroupRow[];
}

const execution = (r: TestRunRow): TestExecution => ({ seq: r.seq, buildId: r.buildId, startTime: r.startTime, commit: r.commit, outcome: r.outcome, attempt: r.attempt, durationMs: r.durationMs });

type Named = Pick<TestSummary, 'suite' | 'name' | 'testId'>;

const byName = (a: Named, b: Named) => (a.suite + a.name < b.suite + b.name ? -1 : a.suite + a.name > b.suite + b.name ? 1 : a.testId - b.testId);

/**
 * The flakiest first: by the lower end of the failure probability's interval, then the estimate.
 * Ranking by the estimate alone puts a test that failed 1 of 2 attempts (50%, interval 9-91%) over
 * one that failed 15 of 60 (25%, 16-37%); the lower end ranks by what the runs show for sure.
 */
export function byFlakiness(a: Named & Pick<TestSummary, 'estimate'>, b: Named & Pick<TestSummary, 'estimate'>): number {
  return b.estimate.low - a.estimate.low || b.estimate.p - a.estimate.p || byName(a, b);
}

/**
 * A verdict as the lists and the build page use it: its kind and the build since which the test
 * fails (broken, regressed).
 */
export interface VerdictSummary {
  readonly kind: VerdictKind;
  readonly sinceSeq: number | null;
}

/**
 * The verdicts on these tests, each from its latest RUNS_PER_VERDICT executions in the scope's
 * builds. The lists show a verdict's kind and order by the seq it fails since, so no build's ID or
 * start is read, and of the commits only those that can make a same-commit pair (pairCommits).
 */
export async function verdictsOf(tests: TestReads, scope: AggregateScope, testIds: readonly number[]): Promise<Map<number, VerdictSummary>> {
  const runs = await tests.recentRuns(testIds, scope, RUNS_PER_VERDICT);
  // The ID and start only name the evidence, which a summary leaves out.
  const judgedRuns = (commits: ReadonlyMap<number, string>) => {
    const byTest = new Map<number, JudgedRun[]>();
    for (const r of runs) {
      const run: JudgedRun = { seq: r.seq, buildId: '', startTime: null, commit: commits.get(r.seq) ?? null, outcome: r.outcome };
      const list = byTest.get(r.testId);
      if (list === undefined) byTest.set(r.testId, [run]);
      else list.push(run);
    }
    return byTest;
  };
  // Judged without commits first: a commit only adds same-commit evidence, which changes a verdict
  // that is regressed or passing to flaky; a broken or flaky one it leaves as it is
  // (test-verdicts.ts). So only the other tests' commits are read, and only they are judged again.
  const without = judgedRuns(new Map());
  const verdicts = new Map(testIds.map((id) => [id, verdictOf(without.get(id) ?? [])]));
  const open = new Set(testIds.filter((id) => ['regressed', 'passing'].includes(verdicts.get(id)!.kind)));
  if (open.size > 0) {
    const commits = await pairCommits(tests, runs.filter((r) => open.has(r.testId)));
    if (commits.size > 0) for (const [id, list] of judgedRuns(commits)) if (open.has(id)) verdicts.set(id, verdictOf(list));
  }
  return new Map(
    testIds.map((id) => {
      const v = verdicts.get(id)!;
      return [id, { kind: v.kind, sinceSeq: v.kind === 'broken' || v.kind === 'regressed' ? v.since.seq : null }];
    }),
  );
}

/**
 * The commits of the runs' builds that can make a same-commit pair (test-verdicts.ts): a pair is a
 * build where a test failed and another where it passed, of one commit. So a test needs commits
 * only when its runs hold both kinds of build, and then only one side's, the smaller: those builds'
 * commits are read by seq, and the builds of those commits (the other side among them) by value,
 * the (name, value, seq) index over the runs' range of seqs. Reading a commit for each of the
 * runs' builds took 230 ms for the Tests page at 20 million executions (16,224 builds); a broken
 * test's window of failures alone needs none.
 */
async function pairCommits(tests: TestReads, runs: readonly RecentRunRow[]): Promise<Map<number, string>> {
  const sides = new Map<number, { failed: Set<number>; passed: Set<number> }>();
  let from = Infinity;
  let to = -Infinity;
  for (const r of runs) {
    from = Math.min(from, r.seq);
    to = Math.max(to, r.seq);
    if (r.outcome === 'skipped') continue;
    let side = sides.get(r.testId);
    if (side === undefined) sides.set(r.testId, (side = { failed: new Set(), passed: new Set() }));
    side[r.outcome].add(r.seq);
  }
  const probe = new Set<number>();
  for (const { failed, passed } of sides.values()) {
    if (failed.size === 0 || passed.size === 0) continue;
    for (const seq of failed.size <= passed.size ? failed : passed) probe.add(seq);
  }
  if (probe.size === 0) return new Map();
  const commits = await tests.commitsOf([...probe]);
  if (commits.length === 0) return new Map();
  const rows = await tests.buildsOfCommits([...new Set(commits.map((c) => c.commit))], from, to);
  return new Map([...commits, ...rows].map((r) => [r.seq, r.commit]));
}

/**
 * The lists of the Tests page for a scope, `limit` tests each. Each test's counts and estimate
 * are over all its runs in the scope; only the tests a list may show are judged (verdictsOf): the
 * most failing and the slowest shown, the failing tests in the order of flakiness until `limit`
 * are flaky, and those whose latest run did not pass (the only ones that can be regressed or
 * broken). The lists are those of judging every failing test (a property in
 * test/services/tests-overview.property.test.ts).
 */
export async function testsOverview(store: BuildStore, scope: AggregateScope, limit = 20): Promise<TestsOverview> {
  // One reader for the page: the scope's builds are found once for all its reads (TestReads).
  const tests = store.tests;
  const counts = await tests.counts(scope, MAX_TESTS);
  const all = counts.map((c) => ({ ...c, estimate: wilson(c.failures, c.runs) }));
  // A test without failures is passing; the others are judged when a list needs them.
  const failing = all.filter((c) => c.failures > 0);
  const verdicts = new Map<number, VerdictSummary>();
  const judge = async (candidates: readonly { readonly testId: number; readonly failures: number }[]) => {
    const ids = candidates.filter((t) => t.failures > 0 && !verdicts.has(t.testId)).map((t) => t.testId);
    if (ids.length > 0) for (const [id, v] of await verdictsOf(tests, scope, ids)) verdicts.set(id, v);
  };
  const summary = (c: (typeof all)[number]): TestSummary => ({ ...c, verdict: c.failures === 0 ? 'passing' : verdicts.get(c.testId)!.kind });

  const mostFailing = failing.slice(0, limit);
  const slowest = [...all].sort((a, b) => b.meanDurationMs - a.meanDurationMs || byName(a, b)).slice(0, limit);
  await judge([...mostFailing, ...slowest]);

  const flakiest: TestSummary[] = [];
  const byFlakinessOrder = [...failing].sort(byFlakiness);
  for (let i = 0; i < byFlakinessOrder.length && flakiest.length < limit; i += limit) {
    const batch = byFlakinessOrder.slice(i, i + limit);
    await judge(batch);
    for (const c of batch) if (flakiest.length < limit && verdicts.get(c.testId)!.kind === 'flaky') flakiest.push(summary(c));
  }

  // Regressed and broken need a failed latest build: a test whose latest run passed is neither.
  // The counts give each test's latest run (walking 311 failing tests' indexes for it took 60-80
  // ms of the page at 20 million executions).
  const maybeNew = failing.filter((c) => c.latestOutcome !== 'passed');
  await judge(maybeNew);
  const since = (id: number): number => verdicts.get(id)!.sinceSeq ?? 0;
  const newlyFailing = maybeNew
    .filter((c) => ['regressed', 'broken'].includes(verdicts.get(c.testId)!.kind))
    .map(summary)
    .sort((a, b) => since(b.testId) - since(a.testId) || byName(a, b))
    .slice(0, limit);

  return {
    tests: counts.length,
    mostFailing: mostFailing.map(summary),
    flakiest,
    slowest: slowest.map(summary),
    newlyFailing,
    failureGroups: await tests.failureGroups(scope, limit),
  };
}

/** The failure groups of a scope's builds, most builds first. */
export async function failureGroupsOf(store: BuildStore, scope: AggregateScope, limit = 50): Promise<{ readonly groups: readonly FailureGroupRow[] }> {
  return { groups: await store.tests.failureGroups(scope, Math.min(limit, MAX_GROUPS)) };
}

/** A failure group that does not exist, or has no failure in a build the caller may see. */
export class UnknownFailureGroupError extends NotFoundError {}

/** A failure group as the API answers it: the page of builds' keyset as a string, `<start>:<seq>`. */
export type FailureGroupPage = Omit<FailureGroupDetail, 'next'> & { readonly next: string | null };

/** The `before` of a page of a group's builds: `<start>:<seq>` as `next` gave it (start -1: unknown). */
export const GROUP_CURSOR_PATTERN = '^-?[0-9]{1,16}:[0-9]{1,16}$';

function cursorText(c: FailureGroupCursor): string {
  return `${c.start}:${c.seq}`;
}

function parseCursor(text: string): FailureGroupCursor {
  const m = new RegExp(GROUP_CURSOR_PATTERN).exec(text);
  const [start, seq] = text.split(':').map(Number);
  if (m === null || !Number.isSafeInteger(start) || !Number.isSafeInteger(seq)) throw new BadRequestError(`before must be the next of a page, <start>:<seq>, not ${JSON.stringify(text)}`);
  return { start: start!, seq: seq! };
}

/**
 * One failure group in a scope's builds: its pattern and an example, counts, the tests it hit, its
 * builds per UTC day and a page of its builds, latest first (`before`: the previous page's `next`).
 */
export async function failureGroupDetail(store: BuildStore, scope: AggregateScope, groupId: number, options: { readonly limit?: number; readonly before?: string } = {}): Promise<FailureGroupPage> {
  const limit = Math.max(1, Math.min(MAX_GROUP_BUILDS, options.limit ?? 50));
  const before = options.before === undefined ? undefined : parseCursor(options.before);
  const detail = await store.tests.failureGroup(groupId, scope, { limit, maxTests: MAX_GROUP_TESTS, maxDays: MAX_GROUP_DAYS, ...(before !== undefined ? { before } : {}) });
  if (detail === undefined) throw new UnknownFailureGroupError(`There is no failure group ${groupId}`);
  return { ...detail, next: detail.next === null ? null : cursorText(detail.next) };
}

/** A test that does not exist, or does not exist for the caller (a project she may not see). */
export class UnknownTestError extends NotFoundError {}

/** One test's latest `limit` executions in the builds the caller may see, its verdict and its failure groups. */
export async function testHistory(store: BuildStore, visibility: Visibility, testId: number, limit = MAX_HISTORY): Promise<TestHistory> {
  const test = await store.tests.byId(testId, visibility);
  if (test === undefined) throw new UnknownTestError(`There is no test ${testId}`);
  const scope: AggregateScope = { visibility };
  const runs = await store.tests.runs([testId], scope, limit);
  const executions = runs.map(execution);
  return { test, runs, verdict: verdictOf(executions), estimate: failureEstimate(executions), failureGroups: await store.tests.failureGroups(scope, 20, testId) };
}
