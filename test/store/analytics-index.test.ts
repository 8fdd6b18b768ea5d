// The analytics index (src/store/analytics/analytics-index.ts) answers what SQL answers: for random builds,
// random and/or/not queries over the fields the facets show and others (wildcards, negations,
// time ranges, durations, custom values), random visibilities, time ranges and limits, its
// count equals SQL's count over the compiled query, its facets equal the direct path's
// (analytics.ts, one statement), and its trends (random ranges, days or weeks, time zones) equal
// the direct path's and the rollups' where they answer, whether it read the builds within the
// search or in the background -- after each of: an ingest, a deletion by this store (the index
// is told), a deletion behind its back (another process's prune: the all-time rollup count no
// longer matches and the index reads again), and more ingests. And the store answers facets,
// counts and trends from it through its guarded searches, equal to the direct path. All of it on
// SQLite and on PostgreSQL, whose index reads many builds in ranges of seq.

import fc from 'fast-check';
import { sql, type SqlBool } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle, DialectName } from '../../src/db/database.js';
import type { CheckedExpr } from '../../src/query/checked.js';
import { parseQuery } from '../../src/query/index.js';
import { compileQuery, dialectOf } from '../../src/sql/index.js';
import { AnalyticsIndex } from '../../src/store/analytics/analytics-index.js';
import { buildFacets, buildTrends } from '../../src/store/analytics/analytics.js';
import type { TrendRows } from '../../src/store/analytics/rollups-query.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { deleteBuilds } from '../../src/store/prune.js';
import { unguarded } from '../../src/store/search/search-guard.js';
import { SEE_EVERYTHING, type AggregateScope, type BuildStore, type TrendOptions, type Visibility } from '../../src/store/types.js';
import { visibilityCondition } from '../../src/store/search/visibility.js';
import { queryOf } from '../sql/support/arbitraries.js';
import { pgAvailable } from '../support/postgres.js';
import { openTestStore, randomBuildLine, type RandomBuild, type TestStore } from './support.js';

const NOW = Date.UTC(2026, 2, 31, 12);
const DAY = 86_400_000;

type Gen = RandomBuild & { values: NonNullable<RandomBuild['values']> };

const genBuild: fc.Arbitrary<Gen> = fc.record({
  project: fc.constantFrom('inventory', 'Billing', 'billing', 'docs', 'Ünïcode', null),
  outcome: fc.constantFrom('succeeded' as const, 'failed' as const, null),
  ago: fc.option(fc.integer({ min: 0, max: 10 * DAY }), { nil: null, freq: 8 }),
  duration: fc.integer({ min: 0, max: 400_000 }),
  tool: fc.constantFrom('native', 'jvmbuild', 'pybuild', 'targetbuild'),
  user: fc.constantFrom('ann', 'Ann', 'bob', 'ci', 'é', null),
  tags: fc.array(fc.constantFrom('CI', 'ci', 'local', 'nightly', 'x', 'É', 'e'), { maxLength: 3 }),
  values: fc.array(fc.tuple(fc.constantFrom('Git branch', 'os'), fc.constantFrom('main', 'feature/a', 'linux')), { maxLength: 2 }),
  // Requested tasks, a value repeated at times: a term's child rows list a build once per matching row.
  requested: fc.array(fc.constantFrom('test', 'integrationTest', 'build', 'Test', ':app:test'), { maxLength: 3 }),
  // Few paths and durations, so that means tie (the lists then order by path); one duration past
  // 32 bits (the index keeps it beside its array).
  tasks: fc.array(
    fc.record({
      path: fc.constantFrom(':a', ':b', ':app:compile', ':Z'),
      outcome: fc.constantFrom('SUCCESS', 'failed', 'UP-TO-DATE', 'FROM-CACHE', 'skipped', 'NO-SOURCE'),
      took: fc.oneof(fc.constantFrom(0, 10, 20, 5_000_000_000), fc.integer({ min: 0, max: 60_000 })),
    }),
    { maxLength: 4 },
  ),
});

const ndjson = (id: string, g: Gen): string => randomBuildLine(id, g, NOW);

const TERMS = [
  'project:inventory',
  'project:bill*',
  'project:*o*',
  'project:BILLING',
  'project:ünï*',
  'project:*',
  'user:ann',
  'user:Ann',
  'user:é',
  'user:*n*',
  'user:A*',
  'user:*É',
  'user:*',
  'tag:ci',
  'tag:CI',
  'tag:É',
  'tag:e*',
  'tag:*I',
  'tag:*',
  'buildOutcome:failed',
  'buildOutcome:succeeded',
  'buildTool:native',
  'buildTool:jvmbuild',
  'buildTool:NATIVE',
  'buildTool:*build',
  'buildStartTime>-3d',
  'buildStartTime:[-8d to -2d]',
  'buildDuration>2m',
  'buildDuration:[1m to 5m]',
  'buildStartTime<=-5d',
  'value:"Git branch=main"',
  'value:os=*',
  'value:"git*=main"',
  'value:"*=linux"',
  'value:null',
  'requested:*test*',
  'requested:build',
  'requested:test*',
  'requested:null',
  'hasFailedTest',
];
const term = fc.constantFrom(
  ...TERMS.map((t) => {
    const r = parseQuery(t, { now: NOW });
    if (!r.ok || r.expr === undefined) throw new Error(`${t}: ${JSON.stringify(r.diagnostics)}`);
    return r.expr;
  }),
);
const VISIBILITIES: readonly Visibility[] = [SEE_EVERYTHING, { projects: ['Billing', 'inventory'], withoutProject: true }, { projects: ['billing', 'Ünïcode'], withoutProject: false }, { projects: 'all', withoutProject: false }];

const genCheck = fc.record({
  query: queryOf(term),
  visibility: fc.nat(VISIBILITIES.length - 1),
  range: fc.option(fc.tuple(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 1, max: 10 })), { nil: undefined }),
  limit: fc.integer({ min: 1, max: 9 }),
  trend: fc.record({
    from: fc.integer({ min: -DAY, max: 11 * DAY }),
    days: fc.integer({ min: 1, max: 12 }),
    interval: fc.constantFrom('day' as const, 'week' as const),
    tz: fc.constantFrom('UTC', 'Europe/Berlin', 'Asia/Kathmandu'),
  }),
});
type Check = typeof genCheck extends fc.Arbitrary<infer T> ? T : never;

const genCase = fc.record({
  first: fc.array(genBuild, { minLength: 1, maxLength: 30 }),
  second: fc.array(genBuild, { maxLength: 30 }),
  deletions: fc.array(fc.nat(), { maxLength: 8 }),
  checks: fc.array(genCheck, { minLength: 1, maxLength: 3 }),
});

function scopeOf(c: Check): AggregateScope {
  const range = c.range === undefined ? {} : { startFrom: NOW - c.range[0] * DAY - c.range[1] * DAY, startTo: NOW - c.range[0] * DAY };
  return { query: c.query, visibility: VISIBILITIES[c.visibility]!, ...range };
}

function trendOf(c: Check): TrendOptions {
  const from = NOW - c.trend.from;
  return { from, to: from + c.trend.days * DAY, interval: c.trend.interval, tz: c.trend.tz };
}

async function sqlCount(handle: DatabaseHandle, scope: AggregateScope): Promise<number> {
  const dialect = handle.dialect;
  let q = handle.db
    .selectFrom('builds')
    .select(sql<number>`count(*)`.as('n'))
    .where('builds.seq', 'is not', null)
    .where(visibilityCondition(scope.visibility) as never as ReturnType<typeof sql<SqlBool>>);
  if (scope.query !== undefined) q = q.where(compileQuery(scope.query as CheckedExpr, dialect));
  if (scope.startFrom !== undefined) q = q.where('builds.buildstarttime', '>=', scope.startFrom);
  if (scope.startTo !== undefined) q = q.where('builds.buildstarttime', '<', scope.startTo);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

const DIALECTS: readonly { readonly name: DialectName; readonly skip: boolean; readonly runs: number }[] = [
  { name: 'sqlite', skip: false, runs: 20 },
  { name: 'postgres', skip: !pgAvailable(), runs: 10 },
];

describe.each(DIALECTS)('the analytics index on $name', ({ name, skip, runs }) => {
  it.skipIf(skip)('counts, facets and trends as SQL does, through ingests, its own deletions and deletions behind its back', async () => {
    let n = 0;
    // One database for every run, emptied before each; a new index per run.
    const t = await openTestStore(name, { ingestWorker: false, analyticsIndex: false, postings: false });
    t.now.value = Date.now();
    const { store, handle } = t;
    try {
      await fc.assert(
        fc.asyncProperty(genCase, async (c) => {
          await t.reset();
          // Builds read by seq from the table within a search (few new ones), and as the layout's
          // column scan reads many (narrow indexes, or ranges of seq: here of 7 builds, so that a
          // read spans several) in the background (many: here any), searches reading the database
          // meanwhile.
          // The first sums every trend's tasks build by build (blocks of one seq); the others by
          // block where they can (task-blocks.ts): of 4 seqs, so that blocks of which a trend
          // picks most builds and blocks of whose longest runs a build left out holds one are
          // common, and of 4,096 (every build of these stores in one block).
          const inline = new AnalyticsIndex(handle.db, dialectOf(name), unguarded(handle), { blockShift: 0 });
          const wide = new AnalyticsIndex(handle.db, dialectOf(name), unguarded(handle), { wideReadBuilds: 0, seqRangeBuilds: 7 });
          const blocks = new AnalyticsIndex(handle.db, dialectOf(name), unguarded(handle), { blockShift: 2 });
          const indexes = [inline, wide, blocks];
          // `behind`: builds it has not read (new ones, or all after a deletion behind its back).
          const same = async (when: string, behind: boolean): Promise<void> => {
            if (behind) expect(await wide.count({ visibility: SEE_EVERYTHING }), `${when}: answered while the builds are read`).toBeUndefined();
            wide.catchUp();
            await wide.settled();
            for (const check of c.checks) {
              const scope = scopeOf(check);
              const count = await sqlCount(handle, scope);
              const facets = await buildFacets(handle, scope, check.limit, { rollups: false });
              const options = trendOf(check);
              const trends = await buildTrends(handle, scope, options, { rollups: false });
              // The rollups where they answer (a query of exact project/outcome values, UTC days or weeks).
              expect(await buildTrends(handle, scope, options), `${when}: rollups`).toEqual(trends);
              // The index's own answer, not the direct path it falls back to; over one period, the
              // same by block as build by build.
              const whole = [{ start: options.from, end: options.to }];
              // Task paths in name order: each index numbers them in the order it met them.
              const byName = (r: TrendRows | undefined) => r && { ...r, paths: [...r.paths].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)) };
              const rows = byName(await inline.trendRows(scope, whole));
              expect(rows, when).toBeDefined();
              for (const index of indexes) {
                expect(await index.count(scope), when).toBe(count);
                expect(await index.facets(scope, check.limit), when).toEqual(facets);
                expect(byName(await index.trendRows(scope, whole)), `${when}: one period`).toEqual(rows);
                expect(await buildTrends(handle, scope, options, { rollups: false, index }), `${when}: trends`).toEqual(trends);
              }
            }
          };
          const ingest = async (gens: readonly Gen[]) => {
            if (gens.length === 0) return;
            const results = await store.ingestNdjson(gens.map((g) => ndjson(`ai${String(++n).padStart(11, '0')}`, g)).join('\n'));
            expect(results.filter((r) => r.status !== 'stored')).toEqual([]);
          };
          await ingest(c.first);
          await same('after the first ingest', true);
          const stored = (await store.listBuilds({ visibility: SEE_EVERYTHING })) as { id: string; seq: number | null; project: string | null }[];
          const gone = [...new Set(c.deletions.map((d) => d % stored.length))].map((i) => stored[i]!);
          const [mine, theirs] = [gone.filter((_, i) => i % 2 === 0), gone.filter((_, i) => i % 2 === 1)];
          // This store's deletions, told to the index as the store tells it ...
          const deleted = await deleteBuilds(handle, mine.map((b) => ({ id: b.id, seq: b.seq, project: b.project })), NOW);
          for (const index of indexes) index.forget(deleted.flatMap((d) => (d.seq === null ? [] : [d.seq])));
          await same('after deletions it was told of', false);
          // ... and another process's, which it is not told of.
          await deleteBuilds(handle, theirs.map((b) => ({ id: b.id, seq: b.seq, project: b.project })), NOW);
          await same('after deletions behind its back', theirs.length > 0 && gone.length < stored.length);
          await ingest(c.second);
          await same('after the second ingest', c.second.length > 0);
        }),
        { numRuns: runs },
      );
    } finally {
      await t.close();
    }
  }, 240_000);

  it.skipIf(skip)('reads the builds again when every build was deleted behind its back and as many new ones took their seqs', async () => {
    const t = await openTestStore(name, { ingestWorker: false, analyticsIndex: false, postings: false });
    try {
      const index = new AnalyticsIndex(t.handle.db, dialectOf(name), unguarded(t.handle));
      const countOf = async (text: string) => index.count({ query: parseQuery(text, { now: NOW }).expr!, visibility: SEE_EVERYTHING });
      const ingest = async (user: string) => {
        const lines = [1, 2].map((k) => ndjson(`ai${user}`.padEnd(12, '0') + k, { project: 'docs', outcome: 'succeeded', ago: DAY, duration: 1000, tool: 'native', user, tags: [], values: [], tasks: [] }));
        expect((await t.store.ingestNdjson(lines.join('\n'))).map((r) => r.status)).toEqual(['stored', 'stored']);
      };
      await ingest('ann');
      expect(await countOf('user:ann')).toBe(2);
      // Every row deleted, the index not told: SQLite numbers the next builds from 1 again, so
      // the count of builds agrees with what the index read.
      await t.reset();
      await ingest('bob');
      expect(await countOf('user:bob')).toBe(2);
      expect(await countOf('user:ann')).toBe(0);
      index.close();
    } finally {
      await t.close();
    }
  });

  describe.skipIf(skip)('in the store, through its guarded searches (SQLite: search threads, packed rows; PostgreSQL: search slots)', () => {
    let t: TestStore;
    let handle: DatabaseHandle;
    let store: BuildStore;
    beforeAll(async () => {
      t = await openTestStore(name);
      t.now.value = Date.now();
      ({ handle, store } = t);
      await store.ingestNdjson([...demoBuilds({ builds: 600, seed: 3, now: NOW })].join('\n'), { bulk: true });
      // A build of 300 tasks: counts past a byte, which the index keeps beside its array.
      const tasks = Array.from({ length: 300 }, (_, k) => ({ path: `:t${k % 7}`, outcome: k % 3 === 0 ? 'SUCCESS' : 'UP-TO-DATE', took: k }));
      const big = randomBuildLine('ai-many-tasks', { project: 'inventory', outcome: 'failed', ago: DAY, duration: 1000, tool: 'native', user: 'bot', tags: ['CI'], tasks }, NOW);
      await store.ingestNdjson(big);
    }, 120_000);
    afterAll(async () => {
      await t?.close();
    });

    it('answers the facets, counts and trends of queries the rollups do not, equal to the direct path', async () => {
      // The index has read the builds (the server warms it when it opens the store).
      const index = (store as unknown as { index: AnalyticsIndex }).index;
      index.catchUp();
      await index.settled();
      for (const text of ['tag:ci', '-user:bot', 'requested:*test*', 'project:inv* or buildOutcome:failed', 'buildTool:native -tag:local', 'tag:nothing-has-this']) {
        const r = parseQuery(text, { now: NOW });
        expect(r.ok, text).toBe(true);
        for (const visibility of VISIBILITIES) {
          const scope = { query: r.expr!, visibility };
          expect(await store.facets(scope, 5), text).toEqual(await buildFacets(handle, scope, 5, { rollups: false }));
          expect(await store.countBuilds(scope), text).toBe(await sqlCount(handle, scope));
          for (const trend of [
            { from: NOW - 30 * DAY, to: NOW, interval: 'day', tz: 'UTC' },
            { from: NOW - 30 * DAY, to: NOW, interval: 'week', tz: 'America/New_York' },
          ] as const) {
            expect(await index.trendRows(scope, [{ start: trend.from, end: trend.to }]), text).toBeDefined();
            expect(await store.trends(scope, trend), text).toEqual(await buildTrends(handle, scope, trend, { rollups: false }));
          }
        }
      }
    });
  });
});
