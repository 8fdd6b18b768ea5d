// The trend rollups (src/store/analytics/rollups.ts) stay exact: for random builds, random deletions (the
// prune's deleteBuilds) and random queries the rollups answer, the trend read from the rollups
// equals the trend computed from the builds directly and the one computed in TypeScript, and the
// exact count from the rollups equals the reference's, and the facets from the rollups (any
// limit, so ties and the cut are exercised) equal the direct ones, on SQLite and PostgreSQL. And
// the backfills of migrations 0009 and 0011 (converted by 0013) build the same rollups the ingest
// and prune keep.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { evaluate } from '../../src/query/evaluate.js';
import { parseQuery } from '../../src/query/index.js';
import { buildFacets, buildTrends, type TrendOptions } from '../../src/store/analytics/analytics.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { deleteBuilds } from '../../src/store/prune.js';
import {
  backfillRollups,
  BUILD_ROLLUPS,
  createFacetRollupTable,
  createRollupTables,
  DURATION_ROLLUPS,
  FACET_ROLLUPS,
  facetRollupStatements,
  ROLLUP_KEYS,
  rollupsAsBuilds,
  rollupStatements,
  TASK_ROLLUPS,
  textKeyedFacetRollupStatements,
  textKeyedRollupStatements,
} from '../../src/store/analytics/rollups.js';
import { migrateRollupKeys } from '../../src/store/schema/rollup-keys.js';
import { migrateTaskRollupPaths } from '../../src/store/schema/task-rollup-paths.js';
import { facetsFromRollups, rollupEligible, trendRowsFromRollups } from '../../src/store/analytics/rollups-query.js';
import { tasksOf } from '../../src/store/events/tasks.js';
import { SEE_EVERYTHING, type BuildEvent, type BuildStore, type BuildWithAttributes, type Visibility } from '../../src/store/types.js';
import { createTestDatabase, pgAvailable } from '../support/postgres.js';
import { referenceTrends, visible, type RefBuild } from '../web/trend-reference.js';
import { randomBuildLine, type RandomBuild } from './support.js';

const NOW = Date.UTC(2026, 2, 31, 12);
const DAY = 86_400_000;

type Gen = RandomBuild & { tasks: NonNullable<RandomBuild['tasks']> };

const genBuild: fc.Arbitrary<Gen> = fc.record({
  project: fc.constantFrom('inventory', 'inventory', 'Billing', 'billing', 'docs', null),
  outcome: fc.constantFrom('succeeded' as const, 'failed' as const, 'failed' as const, null),
  // Slot-aligned starts and any millisecond over 12 days (the trends cover 10 or 14), most of
  // them within a few hours, so rollup rows sum several builds and deletions leave some behind.
  ago: fc.option(
    fc.oneof(
      { weight: 3, arbitrary: fc.integer({ min: 0, max: 6 * 3_600_000 }) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 12 * 96 }).map((s) => s * 900_000) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 12 * DAY }) },
    ),
    { nil: null, freq: 8 },
  ),
  // Few distinct durations, so percentiles fall on ties and bucket edges (1, 2, 256, 257 ms ...).
  duration: fc.oneof(fc.constantFrom(0, 1, 2, 3, 255, 256, 257, 1000), fc.integer({ min: 0, max: 400_000 })),
  tasks: fc.array(
    fc.record({ path: fc.constantFrom(':a', ':b', ':c', ':d'), outcome: fc.constantFrom('SUCCESS', 'FAILED', 'UP-TO-DATE', 'FROM-CACHE', 'SKIPPED'), took: fc.integer({ min: 0, max: 500 }) }),
    { maxLength: 4 },
  ),
  tool: fc.constantFrom('native', 'native', 'jvmbuild', 'pybuild'),
  user: fc.constantFrom('ann', 'Ann', 'bob', 'ci', null),
  tags: fc.array(fc.constantFrom('CI', 'ci', 'local', 'nightly', 'x'), { maxLength: 3 }),
});

const ndjson = (id: string, g: Gen): string => randomBuildLine(id, g, NOW);

const OPTIONS: readonly TrendOptions[] = [
  { from: NOW - 10 * DAY, to: NOW, interval: 'day', tz: 'UTC' },
  { from: NOW - 10 * DAY, to: NOW, interval: 'day', tz: 'Europe/Berlin' },
  { from: NOW - 10 * DAY, to: NOW, interval: 'day', tz: 'Asia/Kathmandu' },
  { from: NOW - 14 * DAY, to: NOW + DAY, interval: 'week', tz: 'America/New_York' },
];
const VISIBILITIES: readonly Visibility[] = [SEE_EVERYTHING, { projects: ['Billing', 'inventory'], withoutProject: true }, { projects: ['billing'], withoutProject: false }];

const genQuery = fc
  .record({ project: fc.option(fc.constantFrom('inventory', 'billing', 'BILLING', 'nothing'), { nil: undefined }), outcome: fc.option(fc.constantFrom('succeeded', 'failed'), { nil: undefined }) })
  .map(({ project, outcome }) => [project && `project:${project}`, outcome && `buildOutcome:${outcome}`].filter(Boolean).join(' '));

const genCase = fc.record({
  builds: fc.array(genBuild, { minLength: 1, maxLength: 40, size: 'max' }),
  deletions: fc.array(fc.nat(), { maxLength: 12, size: 'max' }),
  checks: fc.array(fc.record({ query: genQuery, visibility: fc.nat(VISIBILITIES.length - 1), options: fc.nat(OPTIONS.length - 1), limit: fc.integer({ min: 1, max: 9 }) }), {
    minLength: 1,
    maxLength: 4,
  }),
});

async function reference(store: BuildStore): Promise<RefBuild[]> {
  const builds = (await store.listBuilds({ visibility: SEE_EVERYTHING, withAttributes: true })) as BuildWithAttributes[];
  const out: RefBuild[] = [];
  for (const build of builds) {
    const events: BuildEvent[] = [];
    for await (const e of store.streamEvents(build.id)) events.push(e);
    out.push({ build, tasks: tasksOf(events) });
  }
  return out;
}

/**
 * Every rollup row with its key's text and dimension values instead of the key's ID (IDs depend
 * on the order keys were first seen), in key order.
 */
async function tables(handle: DatabaseHandle): Promise<unknown[]> {
  const out = [];
  for (const t of [BUILD_ROLLUPS, DURATION_ROLLUPS, TASK_ROLLUPS, FACET_ROLLUPS]) {
    const order = t === FACET_ROLLUPS ? sql`field, value, k` : t === BUILD_ROLLUPS ? sql`lvl, t, k` : t === DURATION_ROLLUPS ? sql`lvl, t, k, bucket` : sql`lvl, t, k, path_id`;
    const rows = await sql<Record<string, unknown>>`SELECT * FROM ${rollupsAsBuilds(t)} ORDER BY ${order}`.execute(handle.db);
    out.push(
      rows.rows.map((r) => Object.fromEntries(Object.entries(r).flatMap(([k, v]) => (k === 'kid' ? [] : [[k, typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v]])))),
    );
  }
  return out;
}

function suite(name: string, open: () => Promise<{ handle: DatabaseHandle; cleanup(): Promise<void> }>, runs: number) {
  describe(name, () => {
    it('rollups == direct == TypeScript after random ingest and deletions', async () => {
      let n = 0;
      await fc.assert(
        fc.asyncProperty(genCase, async (c) => {
          const { handle, cleanup } = await open();
          const store = await openBuildStore(handle, { ingestWorker: false });
          try {
            const ids = c.builds.map(() => `rl${String(++n).padStart(11, '0')}`);
            // Two ingest batches, so a batch adds to rollup rows an earlier one created.
            const lines = c.builds.map((g, i) => ndjson(ids[i]!, g));
            const half = Math.ceil(lines.length / 2);
            for (const part of [lines.slice(0, half), lines.slice(half)]) {
              if (part.length === 0) continue;
              const results = await store.ingestNdjson(part.join('\n'));
              expect(results.filter((r) => r.status !== 'stored')).toEqual([]);
            }
            const stored = (await store.listBuilds({ visibility: SEE_EVERYTHING })) as { id: string; seq: number | null; project: string | null }[];
            const gone = [...new Set(c.deletions.map((d) => d % stored.length))].map((i) => stored[i]!);
            // Deleted in two transactions, as a prune does in batches.
            for (const part of [gone.slice(0, 3), gone.slice(3)]) await deleteBuilds(handle, part.map((b) => ({ id: b.id, seq: b.seq, project: b.project })), NOW);
            const all = await reference(store);
            for (const check of c.checks) {
              const r = parseQuery(check.query, { now: NOW });
              expect(r.ok).toBe(true);
              const expr = r.expr!;
              expect(rollupEligible(expr)).toBe(true);
              const scope = { query: expr, visibility: VISIBILITIES[check.visibility]! };
              const o = OPTIONS[check.options]!;
              const fromRollups = await buildTrends(handle, scope, o);
              const direct = await buildTrends(handle, scope, o, { rollups: false });
              expect(fromRollups).toEqual(direct);
              const want = referenceTrends(all, expr, scope.visibility, o);
              expect(fromRollups.buckets.map(({ failureRate: _f, avoidedShare: _a, ...b }) => b)).toEqual(want.buckets.map(({ failureRate: _f, avoidedShare: _a, ...b }) => b));
              expect([fromRollups.slowestTasks, fromRollups.failingTasks]).toEqual([want.slowestTasks, want.failingTasks]);
              // The exact count from the all-time rows, builds without a start time included.
              expect(await store.countBuilds(scope)).toBe(all.filter((b) => visible(b.build, scope.visibility) && evaluate(expr, b.build)).length);
              // The facets from the rollups: values, counts, order (ties by value) and the cut.
              expect(await facetsFromRollups(handle, expr, sql`1 = 1` as never, check.limit)).toBeDefined();
              expect(await buildFacets(handle, scope, check.limit)).toEqual(await buildFacets(handle, scope, check.limit, { rollups: false }));
            }
            // What the ingest and the deletions left is what migration 0008 builds from the
            // builds that remain: no stale sums, no empty rows, the right longest runs.
            const kept = await tables(handle);
            for (const t of [BUILD_ROLLUPS, DURATION_ROLLUPS, TASK_ROLLUPS, FACET_ROLLUPS]) await sql`DELETE FROM ${sql.raw(t)}`.execute(handle.db);
            await backfillRollups(handle.db, handle.dialect, () => {}, rollupStatements);
            await backfillRollups(handle.db, handle.dialect, () => {}, facetRollupStatements);
            expect(await tables(handle)).toEqual(kept);
            // And what migrations 0009 and 0011 fill (key text and dimension columns) and 0013
            // converts to key IDs, with a fresh dictionary, and 0025 to path IDs.
            for (const t of [BUILD_ROLLUPS, DURATION_ROLLUPS, TASK_ROLLUPS, FACET_ROLLUPS, ROLLUP_KEYS]) await sql`DROP TABLE ${sql.raw(t)}`.execute(handle.db);
            await sql`DROP INDEX builds_duration_day`.execute(handle.db);
            await createRollupTables(handle.db, handle.dialect);
            await createFacetRollupTable(handle.db, handle.dialect);
            await backfillRollups(handle.db, handle.dialect, () => {}, (d, di, selection, sign) => textKeyedRollupStatements(d, di, selection, sign, 'coded'));
            // Over today's build_values (field codes, store migration 0016).
            await backfillRollups(handle.db, handle.dialect, () => {}, (d, di, selection, sign) => textKeyedFacetRollupStatements(d, di, selection, sign, 'coded'));
            await migrateRollupKeys(handle.db, handle.dialect, () => {});
            await migrateTaskRollupPaths(handle.db, handle.dialect, () => {});
            expect(await tables(handle)).toEqual(kept);
          } finally {
            await store.close();
            await cleanup();
          }
        }),
        { numRuns: runs },
      );
    }, 600_000);

    it('the rollups answer eligible queries (trends: over slot-aligned periods), and only those', async () => {
      const { handle, cleanup } = await open();
      const store = await openBuildStore(handle, { ingestWorker: false });
      try {
        const vis = sql`1 = 1` as never;
        const periods = [{ start: NOW - DAY, end: NOW }];
        const periodOf = () => sql<number>`0`;
        const q = (text: string) => parseQuery(text, { now: NOW }).expr!;
        expect(await trendRowsFromRollups(handle, q('project:inventory buildOutcome:failed'), vis, periods, periodOf)).toBeDefined();
        expect(await trendRowsFromRollups(handle, undefined, vis, periods, periodOf)).toBeDefined();
        for (const text of ['project:inv*', 'buildTool:native', 'tag:CI', 'project:a or project:b', '-project:a', 'project:*']) {
          expect(await trendRowsFromRollups(handle, q(text), vis, periods, periodOf), text).toBeUndefined();
          expect(await facetsFromRollups(handle, q(text), vis, 8), text).toBeUndefined();
        }
        expect(await facetsFromRollups(handle, q('project:inventory buildOutcome:failed'), vis, 8)).toBeDefined();
        // A period bound off the 15-minute grid (a zone's historical local mean time).
        expect(await trendRowsFromRollups(handle, undefined, vis, [{ start: NOW - DAY + 60_000, end: NOW }], periodOf)).toBeUndefined();
      } finally {
        await store.close();
        await cleanup();
      }
    });
  });
}

suite(
  'trend rollups on SQLite',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'buildscope-rollups-'));
    const handle = await openDatabase({ data: dir });
    return { handle, cleanup: async () => { await handle.close(); rmSync(dir, { recursive: true, force: true }); } };
  },
  25,
);

describe.skipIf(!pgAvailable())('on PostgreSQL', () => {
  suite(
    'trend rollups on PostgreSQL',
    async () => {
      const db = (await createTestDatabase())!;
      const handle = await openDatabase({ url: db.url });
      return { handle, cleanup: async () => { await handle.close(); await db.drop(); } };
    },
    8,
  );
});
