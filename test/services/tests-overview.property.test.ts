// The Tests page judges only the tests its lists may show (services/tests.ts, testsOverview): the
// most failing and slowest shown, the failing tests in the order of flakiness until enough are
// flaky, and those whose latest run did not pass. Its lists must be those of judging every failing
// test, which this reference does, over random histories (flaky retries, same commits, broken and
// regressed streaks, skips), list lengths and queries, on both databases.

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { pgAvailable } from '../support/postgres.js';
import { ev, id, line, useTestStore } from '../store/support.js';
import { byFlakiness, MAX_TESTS, RUNS_PER_VERDICT, testsOverview, type TestSummary } from '../../src/services/tests.js';
import { parseQuery } from '../../src/query/index.js';
import { verdictOf, wilson, type Verdict } from '../../src/services/test-verdicts.js';
import { SEE_EVERYTHING, type AggregateScope, type BuildStore, type Visibility } from '../../src/store/types.js';

const dialects = pgAvailable() ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

type Result = 'passed' | 'failed' | 'skipped' | 'retried';

function build(commit: string, results: readonly Result[]): string {
  const events = [ev('BuildStarted'), ev('ProjectStructure', { rootProjectName: 'shop' }), ev('UserNamedValue', { key: 'Git commit id', value: commit })];
  let n = 0;
  const attempt = (i: number, outcome: string, number: number) => {
    n++;
    events.push(ev('TestStarted', { id: n, suite: 'acme.T', name: `t${i}` }));
    events.push(ev('TestFinished', { id: n, outcome, attempt: number, ...(outcome === 'failed' ? { failure: { type: 'AssertionError', message: `boom ${i}` } } : {}) }));
  };
  results.forEach((r, i) => {
    if (r === 'retried') {
      attempt(i, 'failed', 1);
      attempt(i, 'passed', 2);
    } else attempt(i, r, 1);
  });
  const failed = results.includes('failed');
  events.push(ev('BuildFinished', { outcome: failed ? 'failed' : 'succeeded', failures: failed ? [{ classification: 'verification', message: 'tests failed' }] : [] }));
  return line({ buildId: id(), events });
}

const byName = (a: TestSummary, b: TestSummary) => (a.suite + a.name < b.suite + b.name ? -1 : a.suite + a.name > b.suite + b.name ? 1 : a.testId - b.testId);

/**
 * The lists when every failing test is judged, each on its executions as its history reads them
 * (every build's ID, start and commit), not as verdictsOf reads them (the index, and only the
 * commits that can pair).
 */
async function reference(store: BuildStore, scope: AggregateScope, limit: number) {
  const counts = await store.tests.counts(scope, MAX_TESTS);
  const verdicts = new Map<number, Verdict>();
  for (const c of counts) if (c.failures > 0) verdicts.set(c.testId, verdictOf(await store.tests.runs([c.testId], scope, RUNS_PER_VERDICT)));
  const all: TestSummary[] = counts.map((c) => ({ ...c, estimate: wilson(c.failures, c.runs), verdict: verdicts.get(c.testId)?.kind ?? 'passing' }));
  const since = (s: TestSummary) => {
    const v = verdicts.get(s.testId) as Verdict;
    return v.kind === 'broken' || v.kind === 'regressed' ? v.since.seq : 0;
  };
  return {
    mostFailing: all.filter((s) => s.failures > 0).slice(0, limit),
    flakiest: all.filter((s) => s.verdict === 'flaky').sort(byFlakiness).slice(0, limit),
    slowest: [...all].sort((a, b) => b.meanDurationMs - a.meanDurationMs || byName(a, b)).slice(0, limit),
    newlyFailing: all.filter((s) => s.verdict === 'regressed' || s.verdict === 'broken').sort((a, b) => since(b) - since(a) || byName(a, b)).slice(0, limit),
  };
}

const shown = (list: readonly TestSummary[]) => list.map((s) => `${s.testId} ${s.verdict} ${s.failures}/${s.runs}`);

describe.each(dialects)('the Tests page judges only what its lists show (%s)', (dialect) => {
  const t = useTestStore(dialect, false);

  it('lists what judging every failing test lists', async () => {
    const result = fc.constantFrom<Result>('passed', 'passed', 'passed', 'failed', 'skipped', 'retried');
    const history = fc.array(fc.record({ commit: fc.constantFrom('a', 'b', 'c', 'd', 'e'), results: fc.array(result, { minLength: 8, maxLength: 8 }) }), { minLength: 3, maxLength: 14 });
    // Who asks: everyone's builds, the project's, or another project's only (no test).
    const visibility = fc.constantFrom<Visibility>(SEE_EVERYTHING, { projects: ['shop'], withoutProject: false }, { projects: ['other'], withoutProject: true });
    // Of what builds: all, or a query (the counts and each test's latest run are then read from
    // the rollups for a project or an outcome, else from the packs or the joined builds).
    const query = fc.constantFrom(undefined, 'project:shop', 'buildOutcome:failed', '-buildOutcome:failed', 'value:"Git commit id=a" or value:"Git commit id=c"');
    await fc.assert(
      fc.asyncProperty(history, fc.integer({ min: 1, max: 3 }), fc.boolean(), visibility, query, async (builds, limit, brokenTail, seen, text) => {
        await t.reset();
        // A tail where two tests fail every build: broken or regressed ones to find.
        const all = brokenTail ? [...builds, ...Array.from({ length: 4 }, (_, k) => ({ commit: `z${k}`, results: builds[0]!.results.map((r, i): Result => (i < 2 ? 'failed' : r)) }))] : builds;
        await t.store.ingestNdjson(all.map((b) => build(b.commit, b.results)).join('\n'));
        const scope: AggregateScope = text === undefined ? { visibility: seen } : { visibility: seen, query: parseQuery(text).expr! };
        const page = await testsOverview(t.store, scope, limit);
        const expected = await reference(t.store, scope, limit);
        expect(shown(page.mostFailing)).toEqual(shown(expected.mostFailing));
        expect(shown(page.flakiest)).toEqual(shown(expected.flakiest));
        expect(shown(page.slowest)).toEqual(shown(expected.slowest));
        expect(shown(page.newlyFailing)).toEqual(shown(expected.newlyFailing));
      }),
      { numRuns: dialect === 'sqlite' ? 30 : 10 },
    );
  }, 120_000);
});
