// Search migration 0003 on a database that already holds builds: the value terms are filled from
// the stored child rows, the per-row trigram index they replace is gone, and wildcard searches
// over multi-valued fields find the stored builds (nothing stored before is lost to search).

import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/query/index.js';
import { migrateSearchIndexes, NO_PROGRESS_LOG } from '../../src/sql/indexes.js';
import { searchDatabaseUpTo } from './support/old-search-db.js';
import { openBuildStore } from '../../src/store/build-store.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { SEE_EVERYTHING } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';

const BUILDS = [
  { seq: 1, values: [['requested', ':app:bundlerelease'], ['tag', 'ci']] },
  { seq: 2, values: [['requested', ':app:test'], ['tag', 'ci'], ['tag', 'flaky-retry']] },
  { seq: 3, values: [['requested', ':lib:bundle']] },
] as const;

async function oldDatabase(dialect: 'sqlite' | 'postgres'): Promise<{ handle: DatabaseHandle; drop: () => Promise<void> }> {
  const { handle, drop } = await searchDatabaseUpTo(dialect, '0002_bulk_trigram');
  for (const b of BUILDS) {
    await sql`INSERT INTO builds (id, seq, available_at, tool_type, tool_version, agent_version, content_hash, attributes, received_at)
      VALUES (${`build${String(b.seq).padStart(8, '0')}`}, ${b.seq}, ${1000 + b.seq}, 'native', '8.10', '3.19', ${`h${b.seq}`}, '{}', 1000)`.execute(handle.db);
    for (const [field, value] of b.values) await sql`INSERT INTO build_values (seq, field, value) VALUES (${b.seq}, ${field}, ${value})`.execute(handle.db);
  }
  return { handle, drop };
}

describe.each([
  { dialect: 'sqlite' as const, skip: false },
  { dialect: 'postgres' as const, skip: !pgAvailable() },
])('search migration 0003 on $dialect', ({ dialect, skip }) => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  it.skipIf(skip)('fills the value terms from stored builds, drops the per-row trigram index, and finds the builds', async () => {
    const { handle, drop } = await oldDatabase(dialect);
    cleanup = async () => {
      await handle.close();
      await drop();
    };
    await migrateSearchIndexes(handle, NO_PROGRESS_LOG);

    const terms = await sql<{ field: string; value: string }>`SELECT field, value FROM build_value_terms ORDER BY field, value`.execute(handle.db);
    const distinct = [...new Set(BUILDS.flatMap((b) => b.values.map(([f, v]) => `${f}=${v}`)))].sort();
    expect(terms.rows.map((r) => `${r.field}=${r.value}`)).toEqual(distinct);
    const old =
      dialect === 'sqlite'
        ? await sql`SELECT name FROM sqlite_master WHERE name LIKE 'build_values_trigram%'`.execute(handle.db)
        : await sql`SELECT indexname FROM pg_indexes WHERE indexname = 'build_values_value_trgm'`.execute(handle.db);
    expect(old.rows).toEqual([]);

    const store = await openBuildStore(handle, { ingestWorker: false });
    const seqs = async (q: string) =>
      (await store.listBuilds({ visibility: SEE_EVERYTHING, query: parseQuery(q).expr! })).map((b) => b.seq);
    expect(await seqs('requested:*bundle*')).toEqual([1, 3]);
    expect(await seqs('tag:*retry')).toEqual([2]);
    expect(await seqs('requested:*a*')).toEqual([1, 2]);
    expect(await seqs('-requested:*bundle*')).toEqual([2]);
    await store.close();
  });
});
