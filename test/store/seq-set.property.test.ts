// A set of builds given to a statement as a bitmap over seqs (src/store/search/seq-set.ts): a
// statement must find a seq in it exactly when its bit is set, on every connection that runs
// searches (SQLite's search threads and the server's own connection, PostgreSQL's get_bit); and the
// Tests page's reads that test each row's build against the analytics index's set must answer what
// the same reads answer with the query tested on the joined builds, on both databases; and a test's
// latest outcome in the counts is the one a walk of its index finds.

import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { sql } from 'kysely';
import { pgAvailable } from '../support/postgres.js';
import { useTestStore } from './support.js';
import { testedBuild, type TestedBuildSpec } from './tested-build.js';
import { parseQuery } from '../../src/query/index.js';
import { ReadPool } from '../../src/store/search/read-pool.js';
import { SearchGuard, unguarded, type GuardedSearch } from '../../src/store/search/search-guard.js';
import { inSeqSet } from '../../src/store/search/seq-set.js';
import { testReads, type ScopeSets } from '../../src/store/analytics/test-analytics.js';
import { AnalyticsIndex } from '../../src/store/analytics/analytics-index.js';
import { dialectOf } from '../../src/sql/index.js';
import type { AggregateScope, Visibility } from '../../src/store/types.js';

const dialects = pgAvailable() ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

const inBitmap = (words: Uint32Array, seq: number) => seq < words.length * 32 && ((words[seq >>> 5]! >>> (seq & 31)) & 1) === 1;

describe.each(dialects)('a set of seqs (%s)', (dialect) => {
  const t = useTestStore(dialect, false);

  // First: the store's analytics index reads the builds of this test only (the property's resets
  // delete rows behind its back, so it gets an index of its own).
  it("gives the Tests page's reads the set of its analytics index", async () => {
    await t.store.ingestNdjson([build({ project: 'shop', start: 1_700_000_000_000, ci: true, tests: [{ name: 'a', message: 'boom', retried: false }], own: [] }), build({ project: 'shop', start: 1_700_000_000_001, ci: false, tests: [{ name: 'a', message: undefined, retried: false }], own: [] })].join('\n'));
    const scope: AggregateScope = { query: parseQuery('tag:CI').expr!, visibility: { projects: 'all', withoutProject: true } };
    const joined = testReads(t.handle, unguarded(t.handle));
    const counts = await t.store.tests.counts(scope, 10);
    expect(counts.map((c) => [c.name, c.runs, c.failures])).toEqual([['a', 1, 1]]);
    expect(counts).toEqual(await joined.counts(scope, 10));
    expect(await t.store.tests.recentRuns([counts[0]!.testId], scope, 5)).toEqual(await joined.recentRuns([counts[0]!.testId], scope, 5));
  });

  // The verdicts' windows test no entry in SQL, so the search deadline is checked once a test
  // there (a search thread's deadlineCheck; PostgreSQL has statement_timeout instead).
  it.skipIf(dialect !== 'sqlite')("checks the search deadline in the verdicts' windows", async () => {
    await t.store.ingestNdjson([build({ project: 'shop', start: 1_700_000_000_000, ci: true, tests: [{ name: 'a', message: 'boom', retried: false }], own: [] })].join('\n'));
    const scope: AggregateScope = { query: parseQuery('tag:CI').expr!, visibility: { projects: 'all', withoutProject: true } };
    const index = new AnalyticsIndex(t.handle.db, dialectOf(dialect), unguarded(t.handle));
    try {
      const sets: ScopeSets = (s) => index.matching(s);
      const ids = (await sql<{ id: number }>`SELECT id FROM tests`.execute(t.handle.db)).rows.map((r) => Number(r.id));
      t.handle.sqlite!.function('buildscope_past_deadline', { deterministic: false }, () => {
        throw new Error('past the deadline');
      });
      const expired: GuardedSearch = { deadlineCheck: sql`buildscope_past_deadline() = 1`, search: (f, o) => unguarded(t.handle).search(f, o) };
      expect(await testReads(t.handle, unguarded(t.handle), sets).recentRuns(ids, scope, 5)).toHaveLength(1);
      await expect(testReads(t.handle, expired, sets).recentRuns(ids, scope, 5)).rejects.toThrow(/past the deadline/);
    } finally {
      index.close();
    }
  });

  it('holds a seq exactly when its bit is set, past the end none, on each connection that runs searches', async () => {
    const pool = dialect === 'sqlite' ? new ReadPool(t.location.data! + '/buildscope.db', 1) : undefined;
    try {
      await fc.assert(
        fc.asyncProperty(fc.uint32Array({ maxLength: 6 }), fc.uniqueArray(fc.integer({ min: 0, max: 260 }), { minLength: 1, maxLength: 40 }), async (words, seqs) => {
          const values = sql.join(seqs.map((s) => sql`(${sql.lit(s)})`));
          const q = sql<{ seq: number }>`WITH x(v) AS (VALUES ${values}) SELECT x.v AS seq FROM x WHERE ${inSeqSet(dialect, sql.ref('x.v'), words)} ORDER BY x.v`.compile(t.handle.db);
          const expected = seqs.filter((s) => inBitmap(words, s)).sort((a, b) => a - b);
          const here = await unguarded(t.handle).search((read) => read(q));
          expect(here.map((r) => Number(r.seq))).toEqual(expected);
          if (pool !== undefined) expect(((await pool.run(q.sql, q.parameters, 10_000)) as { seq: number }[]).map((r) => r.seq)).toEqual(expected);
        }),
        { numRuns: 60 },
      );
    } finally {
      await pool?.close();
    }
  });

  const MESSAGES = ['timed out after 5 ms', 'timed out after 61 ms', 'expected 200 but was 500'];
  const buildSpec = fc.record({
    project: fc.constantFrom('shop', 'billing'),
    start: fc.integer({ min: 1_700_000_000_000, max: 1_700_000_900_000 }),
    ci: fc.boolean(),
    tests: fc.array(fc.record({ name: fc.constantFrom('a', 'b', 'c'), message: fc.option(fc.constantFrom(...MESSAGES), { nil: undefined }), retried: fc.boolean() }), { maxLength: 3 }),
    own: fc.array(fc.constantFrom('Process 12 failed', 'disk full'), { maxLength: 1 }),
  });
  const build = (spec: { readonly ci: boolean } & TestedBuildSpec): string => testedBuild({ ...spec, tags: spec.ci ? ['CI'] : [] });

  // Queries the rollups do not answer: a tag, a time range, a negation, an outcome with a tag.
  const QUERIES = ['tag:CI', 'buildStartTime>=2023-11-14T22:20:00Z', '-tag:CI', 'buildOutcome:failed tag:CI', 'project:shop -buildOutcome:failed', 'tag:nothing'];
  const VISIBILITIES: Visibility[] = [{ projects: 'all', withoutProject: true }, { projects: ['shop'], withoutProject: false }];

  it("answers the Tests page's reads of a query's builds as the reads through the joined builds do", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(buildSpec, { minLength: 1, maxLength: 8 }), fc.constantFrom(...QUERIES), fc.constantFrom(...VISIBILITIES), fc.integer({ min: 1, max: 4 }), async (builds, text, visibility, perTest) => {
        await t.reset();
        await t.store.ingestNdjson(builds.map(build).join('\n'));
        const parsed = parseQuery(text);
        const scope: AggregateScope = { query: parsed.expr!, visibility };
        // The reads given sets: the store's own (its index, its search threads), and over an index
        // of this test's that must answer every scope (so the sets are known to be used).
        const index = new AnalyticsIndex(t.handle.db, dialectOf(dialect), unguarded(t.handle));
        let answered = 0;
        const sets: ScopeSets = async (s) => {
          const words = await index.matching(s);
          expect(words).toBeDefined();
          answered++;
          return words;
        };
        const joined = testReads(t.handle, unguarded(t.handle));
        const ids = (await sql<{ id: number }>`SELECT id FROM tests ORDER BY id`.execute(t.handle.db)).rows.map((r) => Number(r.id));
        const runs = (rows: readonly { testId: number; seq: number; outcome: string }[]) => rows.map((r) => `${r.testId} ${r.seq} ${r.outcome}`).sort();
        const options = { limit: 3, maxTests: 10, maxDays: 30 };
        const expected = {
          counts: await joined.counts(scope, 50),
          runs: runs(await joined.recentRuns(ids, scope, perTest)),
          groups: await joined.failureGroups(scope, 50),
        };
        const details = await Promise.all(expected.groups.map((g) => joined.failureGroup(g.groupId, scope, options)));
        // A test's latest outcome in the counts is the run a walk of one run finds: the Tests page
        // reads it instead of that walk.
        const walked = new Map((await joined.recentRuns(expected.counts.map((c) => c.testId), scope, 1)).map((r) => [r.testId, r.outcome]));
        expect(expected.counts.map((c) => [c.testId, c.latestOutcome])).toEqual(expected.counts.map((c) => [c.testId, walked.get(c.testId)]));
        // Through search threads (SQLite) or slots (PostgreSQL), and in this thread.
        guard ??= new SearchGuard(t.handle, dialectOf(dialect), { timeoutMs: 20_000, threads: 1 });
        for (const withSets of [testReads(t.handle, guard, sets), testReads(t.handle, unguarded(t.handle), sets)]) {
          expect(await withSets.counts(scope, 50)).toEqual(expected.counts);
          expect(runs(await withSets.recentRuns(ids, scope, perTest))).toEqual(expected.runs);
          expect(await withSets.failureGroups(scope, 50)).toEqual(expected.groups);
          for (const [i, g] of expected.groups.entries()) expect(await withSets.failureGroup(g.groupId, scope, options)).toEqual(details[i]);
        }
        // Each reader found the scope's builds once, for all its reads.
        expect(answered).toBe(2);
        // A reader asked for the failure groups first (the failure groups' page) folds them alone;
        // one asked for the counts first (the Tests page) reads the packs once for both.
        const folds: string[] = [];
        const counting: GuardedSearch = { deadlineCheck: undefined, search: (f, o) => unguarded(t.handle).search((read, packed, folded) => f(read, packed, (q, fold) => (folds.push(fold), folded(q, fold))), o) };
        expect(await testReads(t.handle, counting, sets).failureGroups(scope, 50)).toEqual(expected.groups);
        const page = testReads(t.handle, counting, sets);
        expect(await page.counts(scope, 50)).toEqual(expected.counts);
        expect(await page.failureGroups(scope, 50)).toEqual(expected.groups);
        // (No fold at all when the query matches no build; else one range: a few builds.)
        expect(folds).toEqual(folds.length === 0 ? [] : ['failureGroups', 'both']);
        index.close();
      }),
      { numRuns: 30 },
    );
  }, 120_000);
  let guard: SearchGuard | undefined;
  afterAll(() => guard?.close());
});
