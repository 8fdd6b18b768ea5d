// The compact task rows (store migration 0012) on both databases: a store whose tasks were written
// in the layout before 0012 (path and outcome as text) is converted when it opens, and every reader
// answers as before: the task rows themselves (path, outcome, order within the build), trends from
// the rollups and from the builds directly, and the rollup tables. After the conversion the ingest
// and the deletions keep working on the new layout: re-sends stay unchanged, new paths enter the
// dictionary once, and the rollups stay what a fresh fill from the remaining builds makes.

import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { parseQuery } from '../../src/query/index.js';
import { buildTrends, type TrendOptions } from '../../src/store/analytics/analytics.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { compactTasks } from '../../src/store/schema/compact-tasks.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { deleteBuilds } from '../../src/store/prune.js';
import { backfillRollups, BUILD_ROLLUPS, DURATION_ROLLUPS, FACET_ROLLUPS, facetRollupStatements, rollupStatements, TASK_ROLLUPS } from '../../src/store/analytics/rollups.js';
import { TASK_OUTCOME_CODES, tasksOf } from '../../src/store/events/tasks.js';
import { SEE_EVERYTHING, type BuildEvent } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';
import { ev, id, line, openTestStore } from './support.js';
import { tasksBefore0012 } from './tasks-before-0012.js';
import { undoEventsKey } from './events-key-rewind.js';
import { rollupKeysBefore0013, rollupRowsByKeyText } from './rollup-keys-rewind.js';

const NOW = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];

const OPTIONS: readonly TrendOptions[] = [
  { from: NOW - 30 * DAY, to: NOW + DAY, interval: 'day', tz: 'UTC' },
  { from: NOW - 40 * DAY, to: NOW + DAY, interval: 'week', tz: 'Europe/Berlin' },
];
const QUERIES = ['', 'buildOutcome:failed', 'project:inventory', 'buildDuration>1m'];

/** A build with tasks the demo data has not: an unknown outcome, no cacheable flag, one path run twice, a NO-SOURCE task. */
function oddBuild(path: string): string {
  const start = NOW - 2 * DAY + Math.floor(Math.random() * 1000);
  return line({
    buildId: id(),
    events: [
      ev('BuildStarted', {}, start),
      ev('ProjectStructure', { rootProjectName: 'inventory' }, start + 1),
      ev('TaskStarted', { id: 1, path }, start + 2),
      ev('TaskFinished', { id: 1, path, outcome: 'WHATEVER' }, start + 40),
      ev('TaskStarted', { id: 2, path }, start + 41),
      ev('TaskFinished', { id: 2, path, outcome: 'FAILED', cacheable: false }, start + 90),
      ev('TaskFinished', { id: 3, path: ':z:only-finished', outcome: 'FROM-CACHE', cacheable: true }, start + 95),
      ev('TaskStarted', { id: 4, path: ':z:nothing-to-do' }, start + 96),
      ev('TaskFinished', { id: 4, path: ':z:nothing-to-do', outcome: 'NO-SOURCE', cacheable: false }, start + 96),
      ev('BuildFinished', { outcome: 'failed', failures: [] }, start + 100),
    ],
  });
}

/** The task rows in their order, each with its path text and its outcome (as a code). */
async function taskRows(handle: DatabaseHandle) {
  return (
    await sql<Record<string, unknown>>`SELECT t.seq, t.ord, p.path, t.outcome, t.start_ms, t.duration_ms, t.cacheable
      FROM build_tasks AS t JOIN task_paths AS p ON p.id = t.path_id ORDER BY t.seq, t.ord`.execute(handle.db)
  ).rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === null ? null : k === 'path' ? v : Number(v)])));
}

const rollupTables = rollupRowsByKeyText;

/** Every trend of QUERIES x OPTIONS, from the rollups (where they answer) and from the builds. */
async function trends(handle: DatabaseHandle) {
  const out: unknown[] = [];
  for (const q of QUERIES) {
    const expr = parseQuery(q, { now: NOW }).expr;
    const scope = { visibility: SEE_EVERYTHING, ...(expr ? { query: expr } : {}) };
    for (const o of OPTIONS) {
      const fromRollups = await buildTrends(handle, scope, o);
      expect(await buildTrends(handle, scope, o, { rollups: false })).toEqual(fromRollups);
      out.push(fromRollups);
    }
  }
  return out;
}

describe.each(dialects)('compact task rows on $name', ({ name, skip }) => {
  it.skipIf(skip)('converts task rows written before 0012, and every reader answers as before', async () => {
    const t = await openTestStore(name, { ingestWorker: false });
    try {
      const lines = [...demoBuilds({ builds: 150, seed: 8, now: NOW }), oddBuild(':odd:twice'), oddBuild(':odd:twice')];
      expect((await t.store.ingestNdjson(lines.join('\n'))).every((r) => r.status === 'stored')).toBe(true);
      const rows = await taskRows(t.handle);
      // Every outcome, a repeated path within a build, and both cacheable flags and none.
      expect(new Set(rows.map((r) => r['outcome']))).toEqual(new Set(Object.values(TASK_OUTCOME_CODES)));
      expect(new Set(rows.map((r) => r['cacheable']))).toEqual(new Set([0, 1, null]));
      expect(rows.filter((r) => r['path'] === ':odd:twice').map((r) => r['ord'])).toEqual([0, 1, 0, 1]);
      const before = { rows, rollups: await rollupTables(t.handle), trends: await trends(t.handle) };
      const trendTasks = (before.trends[0] as { slowestTasks: unknown[]; failingTasks: unknown[] });
      expect(trendTasks.slowestTasks.length).toBe(10);
      expect(trendTasks.failingTasks.length).toBeGreaterThan(0);

      // Back to the layout before 0012, the rows kept (as a store before it wrote them).
      // (0014 and 0013 undone first: kysely runs migrations in order only.)
      await undoEventsKey(t.handle.db, name);
      await rollupKeysBefore0013(t.handle, 'coded');
      await tasksBefore0012(t.handle.db);
      await sql`DELETE FROM store_migration WHERE name >= '0012'`.execute(t.handle.db);
      const old = (await sql<{ path: string; outcome: string }>`SELECT path, outcome FROM build_tasks WHERE path = ':odd:twice'`.execute(t.handle.db)).rows;
      expect(old.map((r) => r.outcome).sort()).toEqual(['executed', 'executed', 'failed', 'failed']);

      const store = await openBuildStore(t.handle, { ingestWorker: false });
      try {
        expect({ rows: await taskRows(t.handle), rollups: await rollupTables(t.handle), trends: await trends(t.handle) }).toEqual(before);
        const paths = (await sql<{ n: number | string; d: number | string }>`SELECT count(*) AS n, count(DISTINCT path) AS d FROM task_paths`.execute(t.handle.db)).rows[0]!;
        expect(Number(paths.n)).toBe(new Set(rows.map((r) => r['path'])).size);
        expect(Number(paths.d)).toBe(Number(paths.n));

        // A re-send is recognised; no task row is added.
        expect((await store.ingestNdjson(lines.slice(0, 30).join('\n'))).every((r) => r.status === 'unchanged')).toBe(true);
        expect((await taskRows(t.handle)).length).toBe(rows.length);
        // New builds: their new path enters the dictionary once, known paths keep their ids.
        const more = [...demoBuilds({ builds: 40, seed: 9, now: NOW }), oddBuild(':new:path'), oddBuild(':new:path')];
        expect((await store.ingestNdjson(more.join('\n'))).every((r) => r.status === 'stored')).toBe(true);
        const after = await taskRows(t.handle);
        expect(after.slice(0, rows.length)).toEqual(rows);
        expect(after.filter((r) => r['path'] === ':new:path')).toHaveLength(4);
        expect(Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM task_paths WHERE path = ':new:path'`.execute(t.handle.db)).rows[0]!.n)).toBe(1);

        // Deletions subtract from the rollups on the new layout: what remains is what a fresh
        // fill from the remaining builds makes (longest runs recomputed included).
        const victims = (await sql<{ id: string; seq: number | string; project_name: string | null }>`SELECT id, seq, project_name FROM builds WHERE seq % 3 = 0`.execute(t.handle.db)).rows;
        expect(victims.length).toBeGreaterThan(40);
        await deleteBuilds(t.handle, victims.map((v) => ({ id: v.id, seq: Number(v.seq), project: v.project_name })), NOW);
        expect((await taskRows(t.handle)).some((r) => Number(r['seq']) % 3 === 0)).toBe(false);
        const kept = await rollupTables(t.handle);
        for (const table of [BUILD_ROLLUPS, DURATION_ROLLUPS, TASK_ROLLUPS, FACET_ROLLUPS]) await sql`DELETE FROM ${sql.raw(table)}`.execute(t.handle.db);
        await backfillRollups(t.handle.db, t.handle.dialect, () => {}, rollupStatements);
        await backfillRollups(t.handle.db, t.handle.dialect, () => {}, facetRollupStatements);
        expect(await rollupTables(t.handle)).toEqual(kept);
        await trends(t.handle);
      } finally {
        await store.close();
      }
    } finally {
      await t.close();
    }
  }, 180_000);

  it.skipIf(skip)('converts in batches of seqs, reporting the rows done after each', async () => {
    const t = await openTestStore(name, { ingestWorker: false });
    try {
      await t.store.ingestNdjson([...demoBuilds({ builds: 120, seed: 12, now: NOW })].join('\n'));
      const rows = await taskRows(t.handle);
      await tasksBefore0012(t.handle.db);
      const progress: [number, number][] = [];
      await compactTasks(t.handle.db, name, (done, total) => progress.push([done, total]), 50);
      // Seqs 1-120 in batches of 50: three batches, the last one the rest.
      expect(progress.map(([, total]) => total)).toEqual([rows.length, rows.length, rows.length]);
      expect(progress.map(([done]) => done)).toEqual([
        rows.filter((r) => Number(r['seq']) <= 50).length,
        rows.filter((r) => Number(r['seq']) <= 100).length,
        rows.length,
      ]);
      expect(await taskRows(t.handle)).toEqual(rows);
    } finally {
      await t.close();
    }
  }, 120_000);

  it.skipIf(skip)('a long input in many transactions: every task row is its own task, path included', async () => {
    const t = await openTestStore(name, { ingestWorker: false });
    try {
      // Transactions of 7 builds: the paths a transaction added are known to the later ones.
      const lines = [...demoBuilds({ builds: 70, seed: 11, now: NOW }), oddBuild(':late:path')];
      const results = await t.store.ingestNdjson(lines.join('\n'), { bulk: true, batchSize: 7 });
      expect(results.every((r) => r.status === 'stored')).toBe(true);
      const rows = await taskRows(t.handle);
      const expected: Record<string, unknown>[] = [];
      for (const b of await t.store.listBuilds({ visibility: SEE_EVERYTHING })) {
        const events: BuildEvent[] = [];
        for await (const e of t.store.streamEvents(b.id)) events.push(e);
        const seq = Number((await sql<{ seq: number | string }>`SELECT seq FROM builds WHERE id = ${b.id}`.execute(t.handle.db)).rows[0]!.seq);
        tasksOf(events).forEach((task, ord) =>
          expected.push({ seq, ord, path: task.path, outcome: TASK_OUTCOME_CODES[task.outcome], start_ms: task.start, duration_ms: task.duration, cacheable: task.cacheable === null ? null : Number(task.cacheable) }),
        );
      }
      expected.sort((a, b) => Number(a['seq']) - Number(b['seq']) || Number(a['ord']) - Number(b['ord']));
      expect(rows).toEqual(expected);
      expect(rows.length).toBeGreaterThan(70 * 5);
    } finally {
      await t.close();
    }
  }, 120_000);

  it.skipIf(skip)('two servers ingesting builds with the same new paths at once store each path once', async () => {
    const t = await openTestStore(name, { ingestWorker: false });
    const other = await openDatabase(t.location);
    const second = await openBuildStore(other, { ingestWorker: false });
    try {
      const a = Array.from({ length: 6 }, () => oddBuild(':shared:new'));
      const b = Array.from({ length: 6 }, () => oddBuild(':shared:new'));
      const results = await Promise.all([t.store.ingestNdjson(a.join('\n')), second.ingestNdjson(b.join('\n')), t.store.ingestNdjson(a.join('\n'))]);
      expect(results[0]!.concat(results[1]!).every((r) => r.status === 'stored')).toBe(true);
      // The re-send of `a`: stored by whichever ran first, unchanged for the other.
      expect(results[0]!.concat(results[2]!).filter((r) => r.status === 'stored')).toHaveLength(6);
      const rows = await taskRows(t.handle);
      expect(rows.filter((r) => r['path'] === ':shared:new')).toHaveLength(24);
      expect(rows.filter((r) => r['path'] === ':z:only-finished')).toHaveLength(12);
      const dictionary = (await sql<{ path: string }>`SELECT path FROM task_paths ORDER BY path`.execute(t.handle.db)).rows.map((r) => r.path);
      expect(dictionary).toEqual([':shared:new', ':z:nothing-to-do', ':z:only-finished']);
      expect(Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM build_tasks`.execute(t.handle.db)).rows[0]!.n)).toBe(rows.length);
    } finally {
      await second.close();
      await other.close();
      await t.close();
    }
  }, 120_000);
});
