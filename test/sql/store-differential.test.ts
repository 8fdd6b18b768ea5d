// End to end through the build store: builds ingested as NDJSON (realistic demo builds of all six
// tools plus builds with tricky values: Unicode case, `%`, `_`, `\`, `*`, quotes) are searched with
// random queries drawn from their own values; SQLite, PostgreSQL and the reference evaluator over
// the stored attributes select the same builds.

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_TYPES } from '../../src/query/catalog.js';
import type { CheckedExpr } from '../../src/query/checked.js';
import { evaluate } from '../../src/query/evaluate.js';
import { explainSql } from '../../src/sql/index.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { SEE_EVERYTHING, type BuildStore, type BuildWithAttributes } from '../../src/store/types.js';
import { createTestDatabase, pgAvailable, type TestDatabase } from '../support/postgres.js';
import { text } from './support/arbitraries.js';
import { dataQueries } from './support/data-queries.js';
import { checkedExpr, validQuery } from '../../src/testing/index.js';
import { parseQuery } from '../../src/query/index.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const NOW = Date.UTC(2026, 0, 15);

function trickyBuilds(n: number): string[] {
  const words = fc.sample(text.filter((s) => s.length > 0), { numRuns: n * 12, seed: 42 });
  let w = 0;
  const next = () => words[w++ % words.length]!;
  return Array.from({ length: n }, (_, i) => {
    const start = NOW - (i + 1) * 3_600_000;
    const ev = (offset: number, eventType: string, data: Record<string, unknown>) => ({
      timestamp: start + offset,
      type: { majorVersion: 1, minorVersion: 0, eventType },
      data,
    });
    const events = [
      ev(0, 'BuildStarted', {}),
      ev(1, 'BuildAgent', { username: next(), publicHostname: next(), localHostname: next(), localIpAddresses: [next(), next()] }),
      ev(2, 'ProjectStructure', { rootProjectName: next() }),
      ev(3, 'BuildRequestedTasks', { requested: [next(), next()], excluded: [] }),
      ev(4, 'UserTag', { tag: next() }),
      ev(5, 'UserTag', { tag: next() }),
      ev(6, 'UserNamedValue', { key: next(), value: next() }),
      ev(7, 'Environment', { operatingSystem: next() }),
      // Tests (failedTest, flakyTest, hasFailedTest): one paired by id, one that names itself when
      // it ends, one retried after a failure (flaky when the retry passed).
      ev(8, 'TestStarted', { id: 1, suite: next(), name: next() }),
      ev(9, 'TestFinished', { id: 1, outcome: i % 3 === 0 ? 'passed' : 'failed' }),
      ev(10, 'TestFinished', { id: 2, suite: next(), name: next(), outcome: i % 4 === 0 ? 'failed' : 'skipped' }),
      ev(11, 'TestStarted', { id: 3, suite: 'acme.Retried', name: `t${i % 3}` }),
      ev(12, 'TestFinished', { id: 3, outcome: 'failed' }),
      ev(13, 'TestStarted', { id: 4, suite: 'acme.Retried', name: `t${i % 3}` }),
      ev(14, 'TestFinished', { id: 4, outcome: i % 2 === 0 ? 'passed' : 'failed', attempt: 2 }),
      ev(1000 * (i + 1), 'BuildFinished', { outcome: i % 2 ? 'succeeded' : 'failed', failures: [] }),
    ];
    return JSON.stringify({
      buildId: `x${String(i).padStart(12, '0')}`,
      toolType: TOOL_TYPES[i % TOOL_TYPES.length],
      toolVersion: next(),
      agentVersion: next(),
      events,
    });
  });
}

const NDJSON = [...demoBuilds({ builds: 150, seed: 5, now: NOW }), ...trickyBuilds(24)].join('\n');

interface Opened {
  readonly handle: DatabaseHandle;
  readonly store: BuildStore;
  close(): Promise<void>;
}

async function open(dialect: 'sqlite' | 'postgres'): Promise<Opened> {
  let pg: TestDatabase | undefined;
  let dir: string | undefined;
  if (dialect === 'postgres') pg = await createTestDatabase();
  else dir = mkdtempSync(join(tmpdir(), 'search-store-'));
  const handle = await openDatabase(pg ? { url: pg.url } : { data: dir! });
  const store = await openBuildStore(handle, { clock: () => NOW });
  const results = await store.ingestNdjson(NDJSON);
  const rejected = results.filter((r) => r.status === 'rejected');
  if (rejected.length > 0) throw new Error(`ingest rejected lines: ${JSON.stringify(rejected.slice(0, 3))}`);
  return {
    handle,
    store,
    async close() {
      await store.close();
      await handle.close();
      await pg?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

const search = async (s: BuildStore, query: CheckedExpr): Promise<string[]> =>
  (await s.listBuilds({ query, visibility: SEE_EVERYTHING })).map((b) => b.id).sort();

const dialects = pgAvailable() ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

describe('searching the build store', () => {
  const opened = new Map<string, Opened>();
  let builds: BuildWithAttributes[] = [];
  beforeAll(async () => {
    for (const d of dialects) opened.set(d, await open(d));
    builds = (await opened.get('sqlite')!.store.listBuilds({ visibility: SEE_EVERYTHING, withAttributes: true })) as BuildWithAttributes[];
  }, 120_000);
  afterAll(async () => {
    for (const o of opened.values()) await o.close();
  });

  it('stores every ingested build', () => {
    expect(builds).toHaveLength(174);
  });

  it(`agrees with the reference evaluator (${dialects.join(', ')})`, async () => {
    await fc.assert(
      fc.asyncProperty(dataQueries(builds), async (q) => {
        const want = builds.filter((b) => evaluate(q, b)).map((b) => b.id).sort();
        for (const d of dialects) {
          expect(await search(opened.get(d)!.store, q), `${d}: ${explainSql(q, d).sql}`).toEqual(want);
        }
      }),
      { numRuns: 300 },
    );
  }, 180_000);

  it('agrees on the checker\'s own arbitraries (checked ASTs and parsed query texts)', async () => {
    const parsed = validQuery({ now: NOW }).map((t) => parseQuery(t, { now: NOW }).expr!);
    await fc.assert(
      fc.asyncProperty(fc.oneof(checkedExpr({ now: NOW }), parsed), async (q) => {
        const want = builds.filter((b) => evaluate(q, b)).map((b) => b.id).sort();
        for (const d of dialects) {
          expect(await search(opened.get(d)!.store, q), `${d}: ${explainSql(q, d).sql}`).toEqual(want);
        }
      }),
      { numRuns: 150 },
    );
  }, 180_000);
});
