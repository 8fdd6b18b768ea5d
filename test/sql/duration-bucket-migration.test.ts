// Search migration 0006 on a SQLite database that already holds builds: the duration's
// `(buildduration, seq)` index gives way to the bucketed `(bucket, seq, buildduration)` one, and
// every duration search answers as it did on the old layout, where it now seeks the new index.

import { afterEach, describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/query/index.js';
import { explainPlan } from '../../src/sql/index.js';
import { migrateSearchIndexes, NO_PROGRESS_LOG } from '../../src/sql/indexes.js';
import { searchDatabaseUpTo } from './support/old-search-db.js';
import { insertBuilds, searchIds, type TestBuild } from './support/search-db.js';
import type { DatabaseHandle } from '../../src/db/database.js';

// Durations at and around bucket edges (ms), fractions, a negative one and unknown ones.
const DURATIONS = [undefined, -5, 0, 0.5, 9, 10, 99, 100, 109, 110, 999.9, 1000, 59_999, 60_000, 60_001, 299_999, 300_000, 330_000, 3_600_000, 1e13, undefined];
const BUILDS: TestBuild[] = DURATIONS.map((d, i) => ({ id: `b${String(i).padStart(2, '0')}`, toolType: 'native', attributes: d === undefined ? {} : { buildDuration: d } }));

const QUERIES = [
  'buildDuration>5m',
  'buildDuration>=5m',
  'buildDuration<1m',
  'buildDuration<=1m',
  'buildDuration:1m',
  'buildDuration:[100ms to 1s]',
  'buildDuration:[1m to 5m30s]',
  'buildDuration:0s',
  '-buildDuration>1m',
  'buildDuration>1m or buildDuration<10ms',
];

const indexes = async (handle: DatabaseHandle): Promise<string[]> =>
  (handle.sqlite!.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'builds_buildduration%' ORDER BY name").all() as { name: string }[]).map((r) => r.name);

describe('search migration 0006 on SQLite', () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  it('replaces the (value, seq) index by the bucketed one, and every duration search answers as before', async () => {
    const { handle, drop } = await searchDatabaseUpTo('sqlite', '0005_trigram_without_positions');
    cleanup = async () => {
      await handle.close();
      await drop();
    };
    await insertBuilds(handle, BUILDS);
    expect(await indexes(handle)).toEqual(['builds_buildduration_idx']);
    const parse = (q: string) => parseQuery(q, { now: Date.UTC(2024, 2, 10) }).expr!;
    const before: Record<string, string[]> = {};
    for (const q of QUERIES) before[q] = await searchIds(handle, parse(q));
    expect(before['buildDuration>5m']).toEqual(['b17', 'b18', 'b19']);
    expect(before['buildDuration:1m']).toEqual(['b13']);

    await migrateSearchIndexes(handle, NO_PROGRESS_LOG);
    expect(await indexes(handle)).toEqual(['builds_buildduration_bucket_idx']);
    for (const q of QUERIES) expect(await searchIds(handle, parse(q)), q).toEqual(before[q]);
    expect(await explainPlan(handle, parse('buildDuration:[1m to 5m30s]'))).toMatch(/USING INDEX builds_buildduration_bucket_idx/);
  });
});
