// The plans of the rollup statements keyed by key ID (store migration 0013, src/store/analytics/rollups.ts):
// readers (trends, counts, facets from the rollups) read each rollup table by a range of its
// primary key and each row's key by the dictionary's primary key, with the join flattened into
// the query (so the visibility and query conditions apply to the rollup rows as they are read);
// writers look each new key up by the dictionary's unique key text. Checked by the plans of the
// statements the readers really run, without statistics (as the databases the store makes), not
// by a time. PostgreSQL: the join is pulled up into the query, never a subquery scan.

import { sql, type KyselyPlugin, type RootOperationNode, type QueryId, type SqlBool } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/database.js';
import { parseQuery } from '../../src/query/index.js';
import { buildFacets, buildTrends } from '../../src/store/analytics/analytics.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { facetRollupStatements, rollupStatements, ROLLUP_KEYS } from '../../src/store/analytics/rollups.js';
import { SEE_EVERYTHING, type Visibility } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';
import { openTestStore } from './support.js';

const NOW = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;
const ROLLUP_TABLE = /\b(build_rollups|build_duration_rollups|build_task_rollups|build_facet_rollups)\b/;

/** The statements the readers run through `handle`, compiled, captured as they run. */
async function readerStatements(handle: DatabaseHandle, visibility: Visibility): Promise<{ sql: string; parameters: readonly unknown[] }[]> {
  const seen: { node: RootOperationNode; queryId: QueryId }[] = [];
  const capture: KyselyPlugin = {
    transformQuery: (args) => (seen.push({ node: args.node, queryId: args.queryId }), args.node),
    transformResult: async (args) => args.result,
  };
  const db = handle.db.withPlugin(capture);
  const captured: DatabaseHandle = { ...handle, db, close: handle.close };
  const scope = { query: parseQuery('project:inventory buildOutcome:failed', { now: NOW }).expr!, visibility };
  await buildTrends(captured, scope, { from: NOW - 30 * DAY, to: NOW, interval: 'day', tz: 'Asia/Kathmandu' });
  await buildFacets(captured, scope, 8);
  return seen.map((s) => db.getExecutor().compileQuery(s.node, s.queryId)).filter((q) => ROLLUP_TABLE.test(q.sql));
}

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];

describe.each(dialects)('rollup key plans on $name', ({ name, skip }) => {
  it.skipIf(skip)('readers range-scan the rollups and join each key by its ID; writers look keys up by their text', async () => {
    const t = await openTestStore(name);
    try {
      await t.store.ingestNdjson([...demoBuilds({ builds: 300, seed: 5, now: NOW })].join('\n'));
      const visibility: Visibility = { projects: ['Inventory', 'billing'], withoutProject: true };
      const readers = await readerStatements(t.handle, visibility);
      // Trends: three tables per level range (Kathmandu days: days, hours and slots); facets: two
      // from the all-time rows and three facet rows.
      expect(readers.length).toBeGreaterThanOrEqual(3 * 3 + 5);
      for (const q of readers) {
        if (name === 'sqlite') {
          const plan = (t.handle.sqlite!.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...(q.parameters as unknown[])) as { detail: string }[]).map((r) => r.detail);
          // Flattened: no subquery materialised or run as a co-routine.
          expect(plan.join('\n'), q.sql).not.toMatch(/CO-ROUTINE|MATERIALIZE/);
          expect(plan[0], q.sql).toMatch(/^SEARCH r USING PRIMARY KEY \((lvl=\? AND t[>=]\?( AND t<\?)?|field=\?)\)/);
          expect(plan[1], q.sql).toMatch(/^SEARCH rk USING INTEGER PRIMARY KEY \(rowid=\?\)/);
        } else {
          const plan = (await t.handle.pool!.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${q.sql}`, q.parameters as unknown[])).rows.map((r) => r['QUERY PLAN']).join('\n');
          expect(plan, q.sql).not.toMatch(/Subquery Scan|SubPlan/);
          expect(plan, q.sql).toMatch(/rollup_keys rk/);
        }
      }
      if (name === 'sqlite') {
        // Writers: the new keys of a batch by seq, each checked against the dictionary's unique
        // key text; every rollup statement finds a group's key ID by the same index.
        const statements = [...rollupStatements(t.handle.db, 'sqlite', sql<SqlBool>`b.seq > ${100} AND b.seq <= ${200}`, 1), ...facetRollupStatements(t.handle.db, 'sqlite', sql<SqlBool>`b.seq > ${100} AND b.seq <= ${200}`, 1)];
        const keyIndex = /SEARCH rk USING COVERING INDEX sqlite_autoindex_rollup_keys_1 \(k=\?\)/;
        for (const q of statements) {
          const plan = (t.handle.sqlite!.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...(q.parameters as unknown[])) as { detail: string }[]).map((r) => r.detail).join('\n');
          expect(plan, q.sql).toMatch(keyIndex);
          expect(plan, q.sql).not.toMatch(/SCAN rk/);
          if (q.sql.startsWith(`INSERT INTO ${ROLLUP_KEYS}`)) expect(plan).toMatch(/SEARCH b USING .*\(seq>\? AND seq<\?\)/);
        }
      }
      // The answers are the direct path's (the plans above are of statements that answer right).
      const scope = { query: parseQuery('project:inventory', { now: NOW }).expr!, visibility: SEE_EVERYTHING };
      expect(await buildFacets(t.handle, scope, 8)).toEqual(await buildFacets(t.handle, scope, 8, { rollups: false }));
    } finally {
      await t.close();
    }
  }, 120_000);
});
