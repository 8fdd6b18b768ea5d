// Search migration 0004 on a database that already holds builds: the custom values' (value, seq)
// index is dropped, and every key-value search answers as it did on the old layout (where that
// index served the terms whose name is a pattern): the same builds from the search statement
// before the migration and from the store's listing and count after it.

import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/query/index.js';
import { compileQuery } from '../../src/sql/index.js';
import { migrateSearchIndexes, NO_PROGRESS_LOG } from '../../src/sql/indexes.js';
import { searchDatabaseUpTo } from './support/old-search-db.js';
import { openBuildStore } from '../../src/store/build-store.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { SEE_EVERYTHING, type BuildStore } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';

const BUILDS: readonly { seq: number; custom: readonly (readonly [string, string])[] }[] = [
  { seq: 1, custom: [['git commit id', '3f2a9c01bb7e'], ['ci provider', 'github actions'], ['branch', 'main']] },
  { seq: 2, custom: [['git commit id', '3f2a0000aaaa'], ['ci provider', 'jenkins']] },
  { seq: 3, custom: [['git commit', '3f2a9c01bb7e'], ['branch', 'feature/3f2a']] },
  { seq: 4, custom: [['gitlab pipeline', 'main'], ['ci provider', 'gitlab']] },
  { seq: 5, custom: [] },
  { seq: 6, custom: [['branch', 'main'], ['git commit id', 'ffff0000']] },
];

const QUERIES = [
  'value:*=3f2a9c01bb7e',
  'value:*=3f2a*',
  'value:*=main',
  'value:git*=3f2a9c01bb7e',
  'value:git*=main',
  'value:*commit*=3f2a*',
  'value:*provider=git*',
  '-value:*=main',
  'value:*=main or value:"ci provider=jenkins"',
  'value:"git commit id=3f2a9c01bb7e"',
  'value:branch=*',
  'value:*=*3f2a*',
  'value:*',
];

/** What each query selects, by seq, on the data above (both layouts must give these). */
const ANSWERS: Record<string, number[]> = {
  'value:*=3f2a9c01bb7e': [1, 3],
  'value:*=3f2a*': [1, 2, 3],
  'value:*=main': [1, 4, 6],
  'value:git*=3f2a9c01bb7e': [1, 3],
  'value:git*=main': [4],
  'value:*commit*=3f2a*': [1, 2, 3],
  'value:*provider=git*': [1, 4],
  '-value:*=main': [2, 3, 5],
  'value:*=main or value:"ci provider=jenkins"': [1, 2, 4, 6],
  'value:"git commit id=3f2a9c01bb7e"': [1],
  'value:branch=*': [1, 3, 6],
  'value:*=*3f2a*': [1, 2, 3],
  'value:*': [1, 2, 3, 4, 6],
};

async function oldDatabase(dialect: 'sqlite' | 'postgres'): Promise<{ handle: DatabaseHandle; drop: () => Promise<void> }> {
  const { handle, drop } = await searchDatabaseUpTo(dialect, '0003_value_terms');
  for (const b of BUILDS) {
    await sql`INSERT INTO builds (id, seq, available_at, tool_type, tool_version, agent_version, content_hash, attributes, received_at)
      VALUES (${`build${String(b.seq).padStart(8, '0')}`}, ${b.seq}, ${1000 + b.seq}, 'native', '8.10', '3.19', ${`h${b.seq}`}, '{}', 1000)`.execute(handle.db);
    for (const [name, value] of b.custom) await sql`INSERT INTO build_custom_values (seq, name, value) VALUES (${b.seq}, ${name}, ${value})`.execute(handle.db);
  }
  return { handle, drop };
}

const valueIndex = (handle: DatabaseHandle) =>
  handle.dialect === 'sqlite'
    ? sql`SELECT name FROM sqlite_master WHERE name = 'build_custom_values_value_idx'`.execute(handle.db)
    : sql`SELECT indexname FROM pg_indexes WHERE indexname = 'build_custom_values_value_idx'`.execute(handle.db);

async function answers(store: BuildStore): Promise<Record<string, { seqs: number[]; count: number }>> {
  const out: Record<string, { seqs: number[]; count: number }> = {};
  for (const q of QUERIES) {
    const query = parseQuery(q).expr!;
    const seqs = (await store.listBuilds({ visibility: SEE_EVERYTHING, query })).map((b) => b.seq).sort((a, b) => a - b);
    const count = await store.countBuilds({ visibility: SEE_EVERYTHING, query });
    out[q] = { seqs, count };
  }
  return out;
}

describe.each([
  { dialect: 'sqlite' as const, skip: false },
  { dialect: 'postgres' as const, skip: !pgAvailable() },
])('search migration 0004 on $dialect', ({ dialect, skip }) => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  it.skipIf(skip)('drops the (value, seq) index, and every key-value search answers as on the old layout', async () => {
    const { handle, drop } = await oldDatabase(dialect);
    cleanup = async () => {
      await handle.close();
      await drop();
    };
    expect((await valueIndex(handle)).rows).toHaveLength(1);
    // On the old layout: the search statement (what the store's listing runs) finds the answers.
    const old: Record<string, number[]> = {};
    for (const q of QUERIES) {
      const rows = await handle.db.selectFrom('builds').select('builds.seq').where('builds.seq', 'is not', null).where(compileQuery(parseQuery(q).expr!, handle.dialect)).execute();
      old[q] = rows.map((r) => Number(r.seq)).sort((a, b) => a - b);
    }
    expect(old).toEqual(ANSWERS);

    await migrateSearchIndexes(handle, NO_PROGRESS_LOG);
    expect((await valueIndex(handle)).rows).toEqual([]);
    const store = await openBuildStore(handle, { ingestWorker: false });
    expect(await answers(store)).toEqual(Object.fromEntries(QUERIES.map((q) => [q, { seqs: ANSWERS[q], count: ANSWERS[q]!.length }])));
    await store.close();
  });
});
