// Store migration 0013 (src/store/schema/rollup-keys.ts) on both databases: rollups in the layout of
// migrations 0009 and 0011 (every row keyed by the JSON text of its dimension values, the values
// stored again) are converted to rows keyed by an integer key ID, in batches with progress, and
// every reader answers as before (then 0025, the task rollups by path ID): trends, facets and counts from the rollups, for queries the
// rollups answer under several visibilities, equal to the answers before the conversion and to
// the direct path's.

import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/query/index.js';
import { buildFacets, buildTrends, type TrendOptions } from '../../src/store/analytics/analytics.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { deleteBuilds } from '../../src/store/prune.js';
import { migrateRollupKeys } from '../../src/store/schema/rollup-keys.js';
import { migrateTaskRollupPaths } from '../../src/store/schema/task-rollup-paths.js';
import {
  BUILD_ROLLUPS,
  createFacetRollupTable,
  createRollupTables,
  backfillRollups,
  DURATION_ROLLUPS,
  FACET_ROLLUPS,
  ROLLUP_KEYS,
  TASK_ROLLUPS,
  textKeyedFacetRollupStatements,
  textKeyedRollupStatements,
} from '../../src/store/analytics/rollups.js';
import { SEE_EVERYTHING, type BuildStore, type Visibility } from '../../src/store/types.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { pgAvailable } from '../support/postgres.js';
import { completeBuild, id, openTestStore } from './support.js';
import { undoEventsKey } from './events-key-rewind.js';
import { rollupKeysBefore0013, rollupRowsByKeyText } from './rollup-keys-rewind.js';

const NOW = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;
const TABLES = [BUILD_ROLLUPS, DURATION_ROLLUPS, TASK_ROLLUPS, FACET_ROLLUPS];
const QUERIES = ['', 'project:inventory', 'buildOutcome:failed', 'project:inventory buildOutcome:failed', 'project:nothing'];
const VISIBILITIES: readonly Visibility[] = [SEE_EVERYTHING, { projects: ['Inventory', 'Billing'], withoutProject: false }, { projects: [], withoutProject: true }];
const OPTIONS: readonly TrendOptions[] = [
  { from: NOW - 30 * DAY, to: NOW, interval: 'day', tz: 'UTC' },
  { from: NOW - 28 * DAY, to: NOW, interval: 'week', tz: 'Asia/Kathmandu' },
];

/** What the readers answer from the rollups. */
async function answers(handle: DatabaseHandle, store: BuildStore): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const text of QUERIES) {
    const query = parseQuery(text, { now: NOW }).expr!;
    for (const visibility of VISIBILITIES) {
      const scope = { query, visibility };
      out.push(await store.countBuilds(scope), await buildFacets(handle, scope, 5));
      for (const o of OPTIONS) out.push(await buildTrends(handle, scope, o));
    }
  }
  return out;
}


async function columns(handle: DatabaseHandle, table: string): Promise<string[]> {
  const q =
    handle.dialect === 'sqlite'
      ? sql<{ name: string }>`SELECT name FROM pragma_table_info(${table})`
      : sql<{ name: string }>`SELECT column_name AS name FROM information_schema.columns WHERE table_name = ${table} AND table_schema = current_schema()`;
  return (await q.execute(handle.db)).rows.map((r) => r.name).sort();
}

/** Back to the layout before 0013 (0014 undone first: kysely runs migrations in order only). */
async function rewind(handle: DatabaseHandle): Promise<void> {
  await undoEventsKey(handle.db, handle.dialect);
  await rollupKeysBefore0013(handle, 'coded');
}

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];

describe.each(dialects)('rollup keys migration on $name', ({ name, skip }) => {
  it.skipIf(skip)('converts rollups keyed by text to key IDs in batches, and every reader answers the same', async () => {
    const t = await openTestStore(name);
    try {
      await t.store.ingestNdjson([...demoBuilds({ builds: 400, seed: 11, now: NOW })].join('\n'));
      // Some deletions, so the rollups are what ingest and prune left.
      const listed = (await t.store.listBuilds({ visibility: SEE_EVERYTHING, maxBuilds: 40 })) as { id: string; seq: number | null; project: string | null }[];
      await deleteBuilds(t.handle, listed.filter((_, i) => i % 3 === 0).map((b) => ({ id: b.id, seq: b.seq, project: b.project })), NOW);
      const before = await answers(t.handle, t.store);
      let rows = await rollupRowsByKeyText(t.handle);
      expect(rows.tasks.length).toBeGreaterThan(1000);
      // The answers are the direct path's too (so a wrong conversion cannot match by accident).
      const scope = { query: parseQuery('project:inventory', { now: NOW }).expr!, visibility: SEE_EVERYTHING };
      expect(await buildTrends(t.handle, scope, OPTIONS[0]!)).toEqual(await buildTrends(t.handle, scope, OPTIONS[0]!, { rollups: false }));

      // Through the store's migrations, as a database of the old layout opens.
      await rewind(t.handle);
      expect(await columns(t.handle, BUILD_ROLLUPS)).toContain('k');
      const reopened = await openBuildStore(t.handle, { ingestWorker: false });
      try {
        for (const table of TABLES) {
          const cols = await columns(t.handle, table);
          expect(cols).toContain('kid');
          expect(cols.filter((c) => ['k', 'project_name', 'project', 'buildoutcome'].includes(c))).toEqual([]);
        }
        expect(await rollupRowsByKeyText(t.handle)).toEqual(rows);
        expect(await answers(t.handle, reopened)).toEqual(before);
        // New builds after the conversion go to the converted tables, new keys to the dictionary.
        const keyCount = async () => Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM rollup_keys`.execute(t.handle.db)).rows[0]!.n);
        const keys = await keyCount();
        await reopened.ingestNdjson([completeBuild(id(), 'Fresh-Project'), completeBuild(id(), 'Fresh-Project')].join('\n'));
        expect(await keyCount()).toBe(keys + 1);
        const fresh = { query: parseQuery('project:fresh-project', { now: NOW }).expr!, visibility: SEE_EVERYTHING };
        expect(await reopened.countBuilds(fresh)).toBe(2);
        expect(await buildFacets(t.handle, fresh, 5)).toEqual(await buildFacets(t.handle, fresh, 5, { rollups: false }));
        rows = await rollupRowsByKeyText(t.handle);
      } finally {
        await reopened.close();
      }

      // Directly, in batches of 7 rows (ranges of t or value that end inside a batch), with progress.
      await rewind(t.handle);
      const progress: string[] = [];
      await migrateRollupKeys(t.handle.db, t.handle.dialect, (table, done, total) => progress.push(`${table} ${done}/${total}`), 7);
      for (const table of TABLES) {
        const lines = progress.filter((p) => p.startsWith(`${table} `));
        expect(lines.length).toBeGreaterThan(2);
        const last = lines.at(-1)!.split(' ')[1]!.split('/');
        expect(last[0]).toBe(last[1]);
      }
      // Then 0025 (store/schema/task-rollup-paths.ts): the task rollups by path ID, in batches of 7.
      const pathProgress: [number, number][] = [];
      await migrateTaskRollupPaths(t.handle.db, t.handle.dialect, (done, total) => pathProgress.push([done, total]), 7);
      expect(pathProgress.length).toBeGreaterThan(2);
      expect(pathProgress.at(-1)![0]).toBe(pathProgress.at(-1)![1]);
      expect(await columns(t.handle, TASK_ROLLUPS)).toContain('path_id');
      expect(await columns(t.handle, TASK_ROLLUPS)).not.toContain('path');
      expect(await rollupRowsByKeyText(t.handle)).toEqual(rows);
    } finally {
      await t.close();
    }
  }, 180_000);
});
