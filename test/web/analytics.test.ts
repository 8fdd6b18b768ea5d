// Count, facets and trends computed in the database (src/store/analytics/analytics.ts) against a reference
// computed in TypeScript from the stored builds (the reference evaluator for the query, the
// events for the tasks), on SQLite and on PostgreSQL, for several queries and visibilities.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate } from '../../src/query/evaluate.js';
import type { CheckedExpr } from '../../src/query/checked.js';
import { checkedQuery } from '../store/support.js';
import { buildFacets, buildTrends, trendPeriods, TrendRangeError, type Facets, type TrendOptions } from '../../src/store/analytics/analytics.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { tasksOf } from '../../src/store/events/tasks.js';
import { SEE_EVERYTHING, type BuildEvent, type BuildStore, type BuildWithAttributes, type Visibility } from '../../src/store/types.js';
import { createTestDatabase, pgAvailable, type TestDatabase } from '../support/postgres.js';
import { referenceTrends, visible, type RefBuild } from './trend-reference.js';
import { ingestLine, type EventTuple } from '../support/lines.js';

const NOW = Date.UTC(2026, 2, 31, 12); // the spring DST change of Europe/Berlin is inside the 30 days
const DAY = 86_400_000;

const line = (id: string, events: EventTuple[]) => ingestLine(id, events, { toolVersion: '8.10' });

/** Builds the demo data lacks: unknown outcome, unknown start, a task without its start event. */
const ODD = [
  line('odd0000000001', [
    [NOW - 3 * DAY, 'BuildStarted', {}],
    [NOW - 3 * DAY + 5, 'ProjectStructure', { rootProjectName: 'inventory' }],
    [NOW - 3 * DAY + 9, 'TaskFinished', { id: 1, path: ':lonely', outcome: 'FAILED' }],
    [NOW - 3 * DAY + 50, 'BuildFinished', { failures: [] }],
  ]),
  line('odd0000000002', [
    [NOW - 2 * DAY, 'ProjectStructure', { rootProjectName: 'billing' }],
    [NOW - 2 * DAY + 50, 'BuildFinished', { outcome: 'failed', failures: [] }],
  ]),
];

const NDJSON = [...demoBuilds({ builds: 240, seed: 23, now: NOW }), ...ODD].join('\n');

const QUERIES = [
  '',
  'buildOutcome:failed',
  'buildTool:native or tag:CI',
  '-user:ci',
  'project:inv* or project:billing',
  'buildDuration>2m',
  // Answered from the rollups (a conjunction of exact values of rollup dimensions).
  'project:inventory buildOutcome:failed',
  'project:Billing',
];
const VISIBILITIES: readonly Visibility[] = [SEE_EVERYTHING, { projects: ['inventory', 'billing', 'Checkout-Web'], withoutProject: false }, { projects: [], withoutProject: true }];
const OPTIONS: readonly TrendOptions[] = [
  { from: NOW - 30 * DAY, to: NOW, interval: 'day', tz: 'UTC' },
  { from: NOW - 30 * DAY, to: NOW, interval: 'day', tz: 'Europe/Berlin' },
  { from: NOW - 40 * DAY, to: NOW + DAY, interval: 'week', tz: 'America/New_York' },
];

const checked = (text: string): CheckedExpr => checkedQuery(text, NOW);

function referenceFacets(all: readonly RefBuild[], expr: CheckedExpr, v: Visibility): Facets {
  const matched = all.filter((r) => visible(r.build, v) && evaluate(expr, r.build));
  const top = (values: (string | undefined | null)[]) => {
    const counts = new Map<string, number>();
    for (const x of values) if (x !== undefined && x !== null) counts.set(x, (counts.get(x) ?? 0) + 1);
    return [...counts]
      .map(([value, count]) => ({ value, count }))
      .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
      .slice(0, 8);
  };
  const attr = (r: RefBuild, k: string) => r.build.attributes[k] as string | undefined;
  return {
    buildOutcome: top(matched.map((r) => attr(r, 'buildOutcome'))),
    buildTool: top(matched.map((r) => r.build.toolType)),
    project: top(matched.map((r) => r.build.project)),
    user: top(matched.map((r) => attr(r, 'user')?.toLowerCase())),
    tag: top(matched.flatMap((r) => [...new Set(((r.build.attributes['tag'] as string[] | undefined) ?? []).map((t) => t.toLowerCase()))])),
  };
}

function suite(name: string, open: () => Promise<{ handle: DatabaseHandle; cleanup(): Promise<void> }>) {
  describe(name, () => {
    let handle: DatabaseHandle;
    let store: BuildStore;
    let cleanup: () => Promise<void>;
    let all: RefBuild[];

    beforeAll(async () => {
      ({ handle, cleanup } = await open());
      store = await openBuildStore(handle, { ingestWorker: false });
      const results = await store.ingestNdjson(NDJSON);
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      const builds = (await store.listBuilds({ visibility: SEE_EVERYTHING, withAttributes: true })) as BuildWithAttributes[];
      all = [];
      for (const build of builds) {
        const events: BuildEvent[] = [];
        for await (const e of store.streamEvents(build.id)) events.push(e);
        all.push({ build, tasks: tasksOf(events) });
      }
    });
    afterAll(async () => {
      await store?.close();
      await cleanup?.();
    });

    it('has task rows for the demo builds and a failed task in every failed demo build', () => {
      expect(all.length).toBe(242);
      const failedDemo = all.filter((r) => r.build.attributes['buildOutcome'] === 'failed' && r.build.id.startsWith('odd') === false);
      expect(failedDemo.length).toBeGreaterThan(10);
      for (const r of failedDemo) expect(r.tasks.some((t) => t.outcome === 'failed')).toBe(true);
    });

    for (const q of QUERIES) {
      it(`count and facets of ${JSON.stringify(q)} match the reference for every visibility`, async () => {
        const expr = checked(q);
        for (const visibility of VISIBILITIES) {
          const expected = all.filter((r) => visible(r.build, visibility) && evaluate(expr, r.build)).length;
          expect(await store.countBuilds({ query: expr, visibility })).toBe(expected);
          const facets = await buildFacets(handle, { query: expr, visibility });
          expect(facets).toEqual(referenceFacets(all, expr, visibility));
          // From the rollups (for the queries they answer) and from the builds: the same answer.
          expect(await buildFacets(handle, { query: expr, visibility }, 8, { rollups: false })).toEqual(facets);
          expect(await buildFacets(handle, { query: expr, visibility }, 3, { rollups: false })).toEqual(await buildFacets(handle, { query: expr, visibility }, 3));
        }
      });
      it(`trends of ${JSON.stringify(q)} match the reference`, async () => {
        const expr = checked(q);
        for (const visibility of VISIBILITIES) {
          for (const o of OPTIONS) {
            const got = await buildTrends(handle, { query: expr, visibility }, o);
            const want = referenceTrends(all, expr, visibility, o);
            // The rollups and the builds themselves give the same answer, to the last bit.
            expect(await buildTrends(handle, { query: expr, visibility }, o, { rollups: false })).toEqual(got);
            expect(got.buckets.length).toBe(want.buckets.length);
            for (let i = 0; i < want.buckets.length; i++) {
              const { failureRate: fr, avoidedShare: as, ...rest } = want.buckets[i]!;
              const { failureRate: gfr, avoidedShare: gas, ...grest } = got.buckets[i]!;
              expect(grest).toEqual(rest);
              expect(gfr === null ? null : gfr.toFixed(9)).toEqual(fr === null ? null : fr.toFixed(9));
              expect(gas === null ? null : gas.toFixed(9)).toEqual(as === null ? null : as.toFixed(9));
            }
            expect(got.slowestTasks).toEqual(want.slowestTasks);
            expect(got.failingTasks).toEqual(want.failingTasks);
            expect([got.from, got.to]).toEqual([want.from, want.to]);
          }
        }
      });
    }

    it('counts the build without a start time but leaves it out of every period', async () => {
      const expr = checked('project:billing');
      const n = await store.countBuilds({ query: expr, visibility: SEE_EVERYTHING });
      const t = await buildTrends(handle, { query: expr, visibility: SEE_EVERYTHING }, OPTIONS[0]!);
      expect(t.buckets.reduce((s, b) => s + b.builds, 0)).toBe(n - 1);
    });
  });
}

suite('analytics on SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'buildscope-analytics-'));
  const handle = await openDatabase({ data: dir });
  return { handle, cleanup: async () => { await handle.close(); rmSync(dir, { recursive: true, force: true }); } };
});

describe.skipIf(!pgAvailable())('on PostgreSQL', () => {
  let db: TestDatabase | undefined;
  suite('analytics on PostgreSQL', async () => {
    db = await createTestDatabase();
    const handle = await openDatabase({ url: db!.url });
    return { handle, cleanup: async () => { await handle.close(); await db?.drop(); } };
  });
});

describe('trend periods', () => {
  it('follow the time zone: a day of 23 hours at the spring change, weeks from Monday', () => {
    // Midnight of 31 March in Berlin (CEST) is 22:00 UTC the day before.
    const days = trendPeriods({ from: Date.UTC(2026, 2, 28, 12), to: Date.UTC(2026, 2, 30, 22), interval: 'day', tz: 'Europe/Berlin' });
    expect(days.map((d) => d.label)).toEqual(['2026-03-28', '2026-03-29', '2026-03-30']);
    expect(days.map((d) => (d.end - d.start) / 3_600_000)).toEqual([24, 23, 24]);
    const weeks = trendPeriods({ from: Date.UTC(2026, 2, 4), to: Date.UTC(2026, 2, 20), interval: 'week', tz: 'UTC' });
    expect(weeks.map((w) => w.label)).toEqual(['2026-03-02', '2026-03-09', '2026-03-16']);
  });
  it('refuse an unknown zone, an empty range and too many periods', () => {
    expect(() => trendPeriods({ from: 0, to: DAY, interval: 'day', tz: 'Mars/Olympus' })).toThrow(TrendRangeError);
    expect(() => trendPeriods({ from: DAY, to: DAY, interval: 'day', tz: 'UTC' })).toThrow(/after/);
    expect(() => trendPeriods({ from: 0, to: 1000 * DAY, interval: 'day', tz: 'UTC' })).toThrow(/more than 750/);
  });
});
