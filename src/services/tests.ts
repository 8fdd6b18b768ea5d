// Tests over time (docs/tests.md): the tests of the builds a query matches, with their verdicts
// and statistics, and one test's history. Over the store's test dimension (store/analytics/test-analytics.ts,
// searches under the caller's visibility) and the pure verdicts (test-verdicts.ts).

import { BadRequestError, NotFoundError } from '../errors/domain.js';
import type { FailureGroupCursor, FailureGroupDetail, FailureGroupRow, TestCounts, TestIdentityRow, TestRunRow } from '../store/analytics/test-analytics.js';
import type { AggregateScope, BuildStore, Visibility } from '../store/types.js';
import { failureEstimate, verdictOf, wilson, type Estimate, type TestExecution, type Verdict, type VerdictKind } from './test-verdicts.js';

/** Tests counted per query: enough for every list of the page. */
export const MAX_TESTS = 500;
/** Executions read to judge the failing tests of a page, and a test's history at most. */
const MAX_RUNS = 100_000;
export const MAX_HISTORY = 1000;
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

const byName = (a: TestSummary, b: TestSummary) => (a.suite + a.name < b.suite + b.name ? -1 : a.suite + a.name > b.suite + b.name ? 1 : a.testId - b.testId);

/**
 * The flakiest first: by the lower end of the failure probability's interval, then the estimate.
 * Ranking by the estimate alone puts a test that failed 1 of 2 attempts (50%, interval 9-91%) over
 * one that failed 15 of 60 (25%, 16-37%); the lower end ranks by what the runs show for sure.
 */
export function byFlakiness(a: TestSummary, b: TestSummary): number {
  return b.estimate.low - a.estimate.low || b.estimate.p - a.estimate.p || byName(a, b);
}

/** The lists of the Tests page for a scope, `limit` tests each. */
export async function testsOverview(store: BuildStore, scope: AggregateScope, limit = 20): Promise<TestsOverview> {
  const counts = await store.tests.counts(scope, MAX_TESTS);
  // Only tests that failed need their executions: a test without failures is passing.
  const failing = counts.filter((c) => c.failures > 0);
  const runs = await store.tests.runs(
    failing.map((c) => c.testId),
    scope,
    MAX_RUNS,
  );
  const byTest = new Map<number, TestExecution[]>();
  for (const r of runs) {
    const list = byTest.get(r.testId);
    if (list === undefined) byTest.set(r.testId, [execution(r)]);
    else list.push(execution(r));
  }
  const verdicts = new Map<number, Verdict>();
  const summaries = counts.map((c): TestSummary => {
    const v = c.failures === 0 ? ({ kind: 'passing' } as const) : verdictOf(byTest.get(c.testId) ?? []);
    verdicts.set(c.testId, v);
    return { ...c, verdict: v.kind, estimate: c.failures === 0 ? wilson(0, c.runs) : failureEstimate(byTest.get(c.testId) ?? []) };
  });
  const since = (s: TestSummary): number => {
    const v = verdicts.get(s.testId)!;
    return v.kind === 'broken' || v.kind === 'regressed' ? v.since.seq : 0;
  };

  return {
    tests: counts.length,
    mostFailing: summaries.filter((s) => s.failures > 0).slice(0, limit),
    flakiest: summaries.filter((s) => s.verdict === 'flaky').sort(byFlakiness).slice(0, limit),
    slowest: [...summaries].sort((a, b) => b.meanDurationMs - a.meanDurationMs || byName(a, b)).slice(0, limit),
    newlyFailing: summaries.filter((s) => s.verdict === 'regressed' || s.verdict === 'broken').sort((a, b) => since(b) - since(a) || byName(a, b)).slice(0, limit),
    failureGroups: await store.tests.failureGroups(scope, limit),
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
