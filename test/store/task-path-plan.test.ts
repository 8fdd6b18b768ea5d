// The trends' task statistics computed from the builds (analytics.ts directTrendRows) group the
// task rows by path. When the periods hold a good part of the builds, SQLite reads every task in
// the order of build_tasks_path (path_id, seq, outcome, duration_ms), so the grouping needs no sort
// and the rows never leave the index (measured 5.6 s -> 0.7 s for 880k task rows with the text
// path); for a few builds it looks their tasks up by the primary key (seq, ord) of store
// migration 0012. Checked by the plan of the statement the trends run, not by a time.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTrends } from '../../src/store/analytics/analytics.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { parseQuery } from '../../src/query/index.js';
import { SEE_EVERYTHING, type BuildStore } from '../../src/store/types.js';

const NOW = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), 'buildscope-task-plan-'));
let handle: DatabaseHandle;
let store: BuildStore;

beforeAll(async () => {
  handle = await openDatabase({ data: dir });
  store = await openBuildStore(handle, { ingestWorker: false });
  await store.ingestNdjson([...demoBuilds({ builds: 300, seed: 4, now: NOW })].join('\n'));
}, 120_000);
afterAll(async () => {
  await store?.close();
  await handle?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The plan of the task-path statement a direct trend over [from, to) runs. */
async function taskPathPlan(query: string, from: number, to: number): Promise<string[]> {
  const sqlite = handle.sqlite!;
  const seen: { source: string; params: unknown[] }[] = [];
  const prepare = sqlite.prepare.bind(sqlite);
  // Records what kysely runs on this connection: each statement as it is prepared, with the
  // parameters it is then run with.
  sqlite.prepare = ((source: string) => {
    const statement = prepare(source);
    const all = statement.all.bind(statement);
    statement.all = ((...params: unknown[]) => {
      seen.push({ source, params });
      return all(...params);
    }) as typeof statement.all;
    return statement;
  }) as typeof sqlite.prepare;
  try {
    const parsed = parseQuery(query, { now: NOW });
    await buildTrends(handle, { visibility: SEE_EVERYTHING, ...(parsed.expr ? { query: parsed.expr } : {}) }, { from, to, interval: 'day', tz: 'UTC' }, { rollups: false });
  } finally {
    sqlite.prepare = prepare;
  }
  const statement = seen.filter((s) => s.source.includes('FROM build_tasks AS t'));
  expect(statement).toHaveLength(1);
  return (sqlite.prepare(`EXPLAIN QUERY PLAN ${statement[0]!.source}`).all(...statement[0]!.params) as { detail: string }[]).map((r) => r.detail);
}

it('reads the tasks of most builds in path order from the path index, without a sort for the grouping', async () => {
  const plan = await taskPathPlan('', NOW - 60 * DAY, NOW + DAY);
  expect(plan).toContainEqual(expect.stringMatching(/^SCAN t USING COVERING INDEX build_tasks_path$/));
  expect(plan.some((d) => d.includes('TEMP B-TREE FOR GROUP BY'))).toBe(false);
  // The path text is read once per group, by the dictionary's key.
  expect(plan).toContainEqual(expect.stringMatching(/^SEARCH p USING INTEGER PRIMARY KEY \(rowid=\?\)$/));
});

it('looks the tasks of a few builds up by the primary key', async () => {
  const plan = await taskPathPlan('', NOW - 2 * DAY, NOW - DAY);
  expect(plan).toContainEqual(expect.stringMatching(/^SEARCH t USING PRIMARY KEY \(seq=\?\)$/));
  expect(plan.some((d) => d.includes('build_tasks_path'))).toBe(false);
});
