// Search migration 0007 on both databases: the start time's own (buildstarttime, seq) index is
// dropped, builds_trend (which leads with the same column) serves its ranges, every start-time
// search lists and counts the same builds as with the old index, and opening the store again
// (the catalog's reconciliation) does not bring the index back.

import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openBuildStore } from '../../src/store/build-store.js';
import { demoBuilds } from '../../src/store/demo-data.js';
import { parseQuery } from '../../src/query/index.js';
import { explainPlan } from '../../src/sql/index.js';
import { SEE_EVERYTHING, type BuildStore } from '../../src/store/types.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { pgAvailable } from '../support/postgres.js';
import { openTestStore } from '../store/support.js';

const NOW = Date.UTC(2026, 0, 10);
const QUERIES = [
  'buildStartTime:2026-01-05',
  'buildStartTime>-3d',
  'buildStartTime<=2026-01-04T12:00',
  'buildStartTime:[2026-01-03 to 2026-01-06T06:00]',
  'buildStartTime>-8d buildOutcome:failed',
  'not buildStartTime:[2026-01-03 to 2026-01-04]',
  'buildStartTime:[-5d to -2d] or user:*a*',
];

async function answers(store: BuildStore): Promise<Record<string, { ids: string[]; count: number }>> {
  const out: Record<string, { ids: string[]; count: number }> = {};
  for (const q of QUERIES) {
    const query = parseQuery(q, { now: NOW }).expr!;
    const ids = (await store.listBuilds({ visibility: SEE_EVERYTHING, query, maxBuilds: 1000 })).map((b) => b.id);
    out[q] = { ids, count: await store.countBuilds({ visibility: SEE_EVERYTHING, query }) };
  }
  return out;
}

async function startTimeIndex(handle: DatabaseHandle): Promise<string[]> {
  const r =
    handle.dialect === 'sqlite'
      ? await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE name = 'builds_buildstarttime_idx'`.execute(handle.db)
      : await sql<{ name: string }>`SELECT indexname AS name FROM pg_indexes WHERE indexname = 'builds_buildstarttime_idx'`.execute(handle.db);
  return r.rows.map((x) => x.name);
}

describe.each([
  { dialect: 'sqlite' as const, skip: false },
  { dialect: 'postgres' as const, skip: !pgAvailable() },
])('search migration 0007 on $dialect', ({ dialect, skip }) => {
  it.skipIf(skip)('drops the start time index; start-time searches answer as with it, through builds_trend', async () => {
    const t = await openTestStore(dialect, { ingestWorker: false });
    try {
      expect(await startTimeIndex(t.handle)).toEqual([]);
      await t.store.ingestNdjson([...demoBuilds({ builds: 300, seed: 7, now: NOW })].join('\n'));
      const without = await answers(t.store);
      expect(Object.values(without).every((a) => a.count === a.ids.length)).toBe(true);
      expect(without['buildStartTime>-3d']!.count).toBeGreaterThan(0);
      expect(without['buildStartTime<=2026-01-04T12:00']!.count).toBeGreaterThan(0);

      // Back to the layout before 0007: the index as search migration 0001 made it.
      await sql`CREATE INDEX builds_buildstarttime_idx ON builds ("buildstarttime", seq)`.execute(t.handle.db);
      await sql`DELETE FROM search_migration WHERE name = '0007_start_time_in_trend_index'`.execute(t.handle.db);
      if (dialect === 'sqlite') t.handle.sqlite!.exec('ANALYZE');
      else await sql`ANALYZE builds`.execute(t.handle.db);
      expect(await startTimeIndex(t.handle)).toEqual(['builds_buildstarttime_idx']);
      expect(await answers(t.store)).toEqual(without);

      for (let open = 0; open < 2; open++) {
        const store = await openBuildStore(t.handle, { ingestWorker: false });
        try {
          expect(await startTimeIndex(t.handle)).toEqual([]);
          expect(await answers(store)).toEqual(without);
        } finally {
          await store.close();
        }
      }
      if (dialect === 'sqlite') {
        t.handle.sqlite!.exec('ANALYZE');
        const range = parseQuery('buildStartTime:[2026-01-05T01:00 to 2026-01-05T02:00]', { now: NOW }).expr!;
        expect(await explainPlan(t.handle, range)).toMatch(/SEARCH builds USING (COVERING )?INDEX builds_trend \(buildstarttime>\? AND buildstarttime<\?\)/);
      }
    } finally {
      await t.close();
    }
  }, 120_000);
});
