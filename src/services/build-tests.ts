// A page of a build's tests (build-report.ts) with what the test dimension knows of each: its id,
// for a link to the test's page, and its verdict over its latest runs in the builds the caller may
// see (flaky, broken, newly failing), so that the build page marks the tests to distrust.

import { testKeyOf } from '../store/events/test-runs.js';
import type { BuildStore, BuildSummary, Visibility } from '../store/types.js';
import type { TestRow, TestsPage } from './build-report.js';
import type { VerdictKind } from './test-verdicts.js';
import { verdictsOf } from './tests.js';

export interface BuildTestRow extends TestRow {
  /** The test's id (GET /api/tests/{testId}/history), or null when the store has no row for it. */
  readonly testId: number | null;
  /** Its verdict over its latest runs the caller may see, or null without an id. */
  readonly verdict: VerdictKind | null;
}

export interface BuildTestsPage extends Omit<TestsPage, 'tests'> {
  readonly tests: readonly BuildTestRow[];
}

/** The tests with their ids and verdicts. */
export async function withTestIds(store: BuildStore, build: Pick<BuildSummary, 'toolType' | 'project'>, visibility: Visibility, tests: readonly TestRow[]): Promise<BuildTestRow[]> {
  // The identity the ingest gave each test (ingest/plan.ts): tool and project of the build, suite, name, parameters.
  const keyOf = (t: TestRow) => testKeyOf(build.toolType, build.project, t.suite, t.name, t.parameters ?? '');
  const ids = await store.tests.idsOf(tests.map(keyOf));
  const verdicts = await verdictsOf(store.tests, { visibility }, [...new Set(ids.values())]);
  return tests.map((t) => {
    const id = ids.get(keyOf(t));
    if (id === undefined) return { ...t, testId: null, verdict: null };
    return { ...t, testId: id, verdict: verdicts.get(id)!.kind };
  });
}

/** A page of tests with their ids and verdicts. */
export async function testsPageWithIds(store: BuildStore, build: Pick<BuildSummary, 'toolType' | 'project'>, visibility: Visibility, page: TestsPage): Promise<BuildTestsPage> {
  return { ...page, tests: await withTestIds(store, build, visibility, page.tests) };
}
