// Search migration 0005 on a SQLite database that already holds builds: the trigram tables of
// `builds` and of the custom values are recreated without positions and refilled in batches of
// key ranges (here spread over several batches, with empty ones between), and every infix search
// answers as it did on the old tables; the triggers keep the new tables in sync afterwards.

import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/query/index.js';
import { migrateSearchIndexes, NO_PROGRESS_LOG } from '../../src/sql/indexes.js';
import { searchDatabaseUpTo } from './support/old-search-db.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { searchIds } from './support/search-db.js';

// Seqs and custom value rowids far apart: the refill runs 20,000 keys a statement.
const BUILDS: readonly { seq: number; user: string; hostname: string; project: string; custom: readonly (readonly [number, string, string])[] }[] = [
  { seq: 1, user: 'alice', hostname: 'ci-runner-1.example.com', project: 'my-app', custom: [[1, 'git commit id', '3f2a9c01fd9f'], [2, 'ci provider', 'github actions']] },
  { seq: 20_001, user: 'bob', hostname: 'laptop-bob', project: 'ci-r-tools', custom: [[20_001, 'branch', 'main'], [20_002, 'git commit id', 'fd9f00']] },
  { seq: 45_000, user: 'carol-ci-r', hostname: 'ci-runner-2.example.com', project: 'lib', custom: [[61_000, 'fd9', 'f00']] },
  { seq: 90_000, user: 'dan"q*r:s^', hostname: 'h', project: 'p', custom: [[90_000, 'x', 'a"b*c:d^e']] },
];

const QUERIES = [
  'hostname:*ci-r*',
  'hostname:*runner*',
  'user:*ci-r*',
  'project:*ci-r*',
  'user:*aro*',
  'user:*an*',
  'value:*=*fd9f*',
  'value:*commit*=*',
  'value:"*=*a\\"b*"',
  'user:"*\\"q*"',
  'user:*s^*',
  'value:*=*9c01fd*',
  'hostname:*example.com',
];

async function oldDatabase(): Promise<{ handle: DatabaseHandle; drop: () => Promise<void> }> {
  const { handle, drop } = await searchDatabaseUpTo('sqlite', '0004_custom_values_one_index');
  for (const b of BUILDS) await insert(handle, b);
  // An incomplete build (no seq) is never indexed.
  await sql`INSERT INTO builds (id, user, tool_type, tool_version, agent_version, content_hash, attributes, received_at)
    VALUES ('incomplete', 'carol-ci-r', 'native', '8.10', '3.19', 'h0', '{}', 1000)`.execute(handle.db);
  return { handle, drop };
}

async function insert(handle: DatabaseHandle, b: (typeof BUILDS)[number]): Promise<void> {
  await sql`INSERT INTO builds (id, seq, available_at, user, hostname, project, tool_type, tool_version, agent_version, content_hash, attributes, received_at)
    VALUES (${`build${String(b.seq).padStart(8, '0')}`}, ${b.seq}, ${1000 + b.seq}, ${b.user}, ${b.hostname}, ${b.project}, 'native', '8.10', '3.19', ${`h${b.seq}`}, '{}', 1000)`.execute(handle.db);
  for (const [rowid, name, value] of b.custom) await sql`INSERT INTO build_custom_values (rowid, seq, name, value) VALUES (${rowid}, ${b.seq}, ${name}, ${value})`.execute(handle.db);
}

async function answers(handle: DatabaseHandle): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const q of QUERIES) out[q] = await searchIds(handle, parseQuery(q).expr!);
  return out;
}

const tableSql = (handle: DatabaseHandle, name: string): string => String(handle.sqlite!.prepare('SELECT sql FROM sqlite_master WHERE name = ?').pluck().get(name));
/**
 * FTS5's own check of each table against its content. The builds table's content includes
 * incomplete builds (never indexed), so the check runs with the incomplete build set aside.
 */
const integrity = (handle: DatabaseHandle): void => {
  try {
    handle.sqlite!.transaction(() => {
      handle.sqlite!.exec('DELETE FROM builds WHERE seq IS NULL');
      for (const t of ['builds_trigram', 'build_custom_values_trigram']) handle.sqlite!.exec(`INSERT INTO ${t}(${t}, rank) VALUES ('integrity-check', 1)`);
      throw new Rollback();
    })();
  } catch (e) {
    if (!(e instanceof Rollback)) throw e;
  }
};
class Rollback extends Error {}
/** The rowids the trigram table names for a trigram, so the test sees what was indexed (not only what the LIKE then keeps). */
const indexed = (handle: DatabaseHandle, table: string, trigram: string): number[] =>
  handle.sqlite!.prepare(`SELECT rowid FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid`).pluck().all(`"${trigram}"`) as number[];

describe('search migration 0005 on SQLite', () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  it('recreates both trigram tables without positions, fills every key range, and every infix search answers as before', async () => {
    const { handle, drop } = await oldDatabase();
    cleanup = async () => {
      await handle.close();
      await drop();
    };
    expect(tableSql(handle, 'builds_trigram')).not.toMatch(/detail=none/);
    const before = await answers(handle);
    // The data really exercises the queries.
    expect(before['hostname:*ci-r*']).toEqual(['build00000001', 'build00045000']);
    expect(before['value:*=*fd9f*']).toEqual(['build00000001', 'build00020001']);
    expect(before['user:"*\\"q*"']).toEqual(['build00090000']);
    expect(before['value:"*=*a\\"b*"']).toEqual(['build00090000']);

    await migrateSearchIndexes(handle, NO_PROGRESS_LOG);

    expect(tableSql(handle, 'builds_trigram')).toMatch(/detail=none/);
    expect(tableSql(handle, 'build_custom_values_trigram')).toMatch(/detail=none/);
    integrity(handle);
    // Every batch's rows are there (seqs 1 .. 90,000; rowids 1 .. 90,000), the incomplete build is not.
    expect(indexed(handle, 'builds_trigram', 'ci-')).toEqual([1, 20_001, 45_000]);
    expect(indexed(handle, 'build_custom_values_trigram', 'fd9')).toEqual([1, 20_002, 61_000]);
    expect(await answers(handle)).toEqual(before);

    // The triggers of the new tables: a new build, a changed build and a deleted custom value.
    await insert(handle, { seq: 90_001, user: 'erin', hostname: 'ci-runner-9', project: 'x', custom: [[90_001, 'git commit id', '77fd9f77']] });
    await sql`UPDATE builds SET hostname = 'laptop' WHERE seq = 1`.execute(handle.db);
    await sql`DELETE FROM build_custom_values WHERE rowid = 20002`.execute(handle.db);
    integrity(handle);
    expect(await searchIds(handle, parseQuery('hostname:*ci-r*').expr!)).toEqual(['build00045000', 'build00090001']);
    expect(await searchIds(handle, parseQuery('value:*=*fd9f*').expr!)).toEqual(['build00000001', 'build00090001']);
  });

  it('on an empty database only recreates the tables', async () => {
    const { handle, drop } = await oldDatabase();
    cleanup = async () => {
      await handle.close();
      await drop();
    };
    await sql`DELETE FROM build_custom_values`.execute(handle.db);
    await sql`DELETE FROM builds`.execute(handle.db);
    await migrateSearchIndexes(handle, NO_PROGRESS_LOG);
    expect(tableSql(handle, 'builds_trigram')).toMatch(/detail=none/);
    integrity(handle);
    await insert(handle, BUILDS[0]!);
    expect(await searchIds(handle, parseQuery('hostname:*ci-r*').expr!)).toEqual(['build00000001']);
  });
});
