// Content hashes as bytes (store migration 0017) on both databases: a store whose hashes are held
// as base64url text, as the ingest wrote them before 0017 (finished builds, compressed and text
// chunks, a build still being streamed), migrates; the export sends the same bytes, re-sends of
// the same content answer `unchanged`, new content `stored`, other content for a finished build
// is refused as before; the rows then hold 32 bytes. Also a store rewound to before 0014 migrating
// through 0014, 0015 and 0017, and (SQLite) a conversion interrupted after a batch that resumes.

import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openBuildStore } from '../../src/store/build-store.js';
import { contentHash } from '../../src/store/events/canonical.js';
import { hashBytes, hashText, migrateHashBytes } from '../../src/store/schema/hash-bytes.js';
import type { BuildStore } from '../../src/store/types.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { pgAvailable } from '../support/postgres.js';
import { undoHashBytes } from './hash-bytes-rewind.js';
import { migrateEventsRowid } from '../../src/store/schema/events-rowid.js';
import { undoEventsKey } from './events-key-rewind.js';
import { completeBuild, ev, id, openTestStore } from './support.js';
import { exported, storeCorpus, type Corpus } from './chunk-corpus.js';

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];

/** The distinct storage forms of a hash column: [type, length in bytes]. */
async function forms(handle: DatabaseHandle, table: string, column: string): Promise<[string, number][]> {
  const q =
    handle.dialect === 'sqlite'
      ? `SELECT DISTINCT typeof(${column}) AS t, length(${column}) AS n FROM ${table} ORDER BY 1, 2`
      : `SELECT DISTINCT pg_typeof(${column})::text AS t, octet_length(${column}) AS n FROM ${table} ORDER BY 1, 2`;
  return (await sql.raw<{ t: string; n: number | string }>(q).execute(handle.db)).rows.map((r) => [r.t, Number(r.n)]);
}

const TEXT = { sqlite: 'text', postgres: 'text' } as const;
const BYTES = { sqlite: 'blob', postgres: 'bytea' } as const;

/** The stored content hash of a build, in its text form. */
async function storedHash(handle: DatabaseHandle, buildId: string): Promise<string> {
  const r = await handle.db.selectFrom('builds').select('content_hash').where('id', '=', buildId).executeTakeFirstOrThrow();
  return hashText(r.content_hash);
}

/** What every reader of the hashes answers after the migration, checked against `before`. */
async function checkReaders(handle: DatabaseHandle, store: BuildStore, c: Corpus, before: Map<string, string>, hashes: Map<string, string>): Promise<void> {
  const dialect = handle.dialect;
  expect(await forms(handle, 'builds', 'content_hash')).toEqual([[BYTES[dialect], 32]]);
  // SQLite stores no chunk hash since store migration 0018 (it is computed from the events).
  if (dialect === 'postgres') expect(await forms(handle, 'build_events', 'hash')).toEqual([[BYTES[dialect], 32]]);
  else expect((await sql`SELECT 1 FROM pragma_table_xinfo('build_events') WHERE name = 'hash'`.execute(handle.db)).rows).toEqual([]);
  expect(await exported(store, c.ids)).toEqual(before);
  for (const [buildId, text] of hashes) expect(await storedHash(handle, buildId)).toBe(text);

  // Re-sends of the same content: every finished build, and each stored part of the streamed one.
  const resent = await store.ingestNdjson([...c.packedLines, ...c.textLines, c.parts[0]!, c.parts[1]!].join('\n'));
  expect(resent.map((r) => r.status)).toEqual(resent.map(() => 'unchanged'));
  // New content for the streamed build is stored (and finishes it)...
  expect((await store.ingestNdjson(c.parts[2]!)).map((r) => [r.status, r.status === 'stored' && r.complete])).toEqual([['stored', true]]);
  // ...once finished, its last part again is unchanged, and other content for it is refused as before.
  expect((await store.ingestNdjson([c.parts[2]!, c.parts[1]!].join('\n'))).map((r) => r.status)).toEqual(['unchanged', 'unchanged']);
  const other = await store.ingestNdjson(completeBuild(c.streamed, 'alpha', [ev('UserTag', { tag: 'other' })]));
  expect(other.map((r) => r.status)).toEqual(['rejected']);
  expect(other[0]!.status === 'rejected' ? other[0]!.error : '').toMatch(/already stored and finished with other content/);
  expect(await forms(handle, 'builds', 'content_hash')).toEqual([[BYTES[dialect], 32]]);
  // SQLite stores no chunk hash since store migration 0018 (it is computed from the events).
  if (dialect === 'postgres') expect(await forms(handle, 'build_events', 'hash')).toEqual([[BYTES[dialect], 32]]);
  else expect((await sql`SELECT 1 FROM pragma_table_xinfo('build_events') WHERE name = 'hash'`.execute(handle.db)).rows).toEqual([]);
}

describe('content hash bytes', () => {
  it('are the base64url text of the hash, both ways', () => {
    const text = contentHash({ toolType: 'gradle', toolVersion: '8', agentVersion: '1' }, '[]');
    expect(text).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const bytes = hashBytes(text);
    expect(bytes.length).toBe(32);
    expect(bytes).toEqual(createHash('sha256').update('gradle\u00008\u00001\u0000[]').digest());
    expect(hashText(bytes)).toBe(text);
    expect(hashText(new Uint8Array(bytes))).toBe(text);
    // A row the migration left as text (not a hash's text) reads as it is.
    expect(hashText('not-a-hash')).toBe('not-a-hash');
  });
});

describe.each(dialects)('content hashes as bytes on $name', ({ name, skip }) => {
  it.skipIf(skip)('migrates hashes stored as text; export, re-sends and refusals answer as before', async () => {
    const t = await openTestStore(name);
    try {
      const c = await storeCorpus(t.handle, t.store, { packed: 60, text: 40, seed: 17 });
      expect(await forms(t.handle, 'builds', 'content_hash')).toEqual([[BYTES[name], 32]]);
      const before = await exported(t.store, c.ids);
      const hashes = new Map<string, string>();
      for (const buildId of c.ids) hashes.set(buildId, await storedHash(t.handle, buildId));

      // Back to the layout before 0017: the hashes' text, as the ingest wrote it.
      await undoHashBytes(t.handle.db, name);
      expect(await forms(t.handle, 'builds', 'content_hash')).toEqual([[TEXT[name], 43]]);
      expect(await forms(t.handle, 'build_events', 'hash')).toEqual([[TEXT[name], 43]]);
      for (const [buildId, text] of hashes) expect(await storedHash(t.handle, buildId)).toBe(text);

      const opened = await openBuildStore(t.handle, {});
      try {
        await checkReaders(t.handle, opened, c, before, hashes);
      } finally {
        await opened.close();
      }
    } finally {
      await t.close();
    }
  }, 180_000);

  it.skipIf(skip)('a store from before 0014 migrates through 0014, 0015 and 0017', async () => {
    const t = await openTestStore(name);
    try {
      const c = await storeCorpus(t.handle, t.store, { packed: 60, text: 40, seed: 17 });
      const before = await exported(t.store, c.ids);
      const hashes = new Map<string, string>();
      for (const buildId of c.ids) hashes.set(buildId, await storedHash(t.handle, buildId));
      // Undoes 0017, 0015 and 0014: events keyed by build ID, hashes as text.
      await undoEventsKey(t.handle.db, name);
      expect(await forms(t.handle, 'build_events', 'hash')).toEqual([[TEXT[name], 43]]);
      const opened = await openBuildStore(t.handle, {});
      try {
        const ran = (await sql<{ name: string }>`SELECT name FROM store_migration WHERE name IN ('0014_events_key', '0015_values_key', '0017_hash_bytes') ORDER BY name`.execute(t.handle.db)).rows;
        expect(ran.map((r) => r.name)).toEqual(['0014_events_key', '0015_values_key', '0017_hash_bytes']);
        await checkReaders(t.handle, opened, c, before, hashes);
      } finally {
        await opened.close();
      }
    } finally {
      await t.close();
    }
  }, 180_000);

  // SQLite commits each batch by itself (PostgreSQL runs the migration in one transaction).
  it.skipIf(skip || name !== 'sqlite')('converts in batches with progress; a run stopped after a batch resumes', async () => {
    const t = await openTestStore(name);
    try {
      const c = await storeCorpus(t.handle, t.store, { packed: 60, text: 40, seed: 17 });
      const before = await exported(t.store, c.ids);
      const hashes = new Map<string, string>();
      for (const buildId of c.ids) hashes.set(buildId, await storedHash(t.handle, buildId));
      await undoHashBytes(t.handle.db, name);
      const chunks = Number((await sql<{ n: number }>`SELECT count(*) AS n FROM build_events`.execute(t.handle.db)).rows[0]!.n);

      // A run stopped after its first batch of builds: those rows are bytes, the others text.
      const stop = new Error('stopped');
      await expect(
        migrateHashBytes(
          t.handle.db,
          name,
          () => {
            throw stop;
          },
          25,
        ),
      ).rejects.toBe(stop);
      expect(await forms(t.handle, 'builds', 'content_hash')).toEqual([
        ['blob', 32],
        ['text', 43],
      ]);
      const converted = Number((await sql<{ n: number }>`SELECT count(*) AS n FROM builds WHERE typeof(content_hash) = 'blob'`.execute(t.handle.db)).rows[0]!.n);
      expect(converted).toBe(25);

      const progress: [string, number, number][] = [];
      await migrateHashBytes(t.handle.db, name, (table, done, total) => progress.push([table, done, total]), 25);
      const builds = progress.filter((p) => p[0] === 'builds');
      const events = progress.filter((p) => p[0] === 'build_events');
      expect(builds.map((p) => p[1])).toEqual([25, 50, 75, 100, 101]);
      expect(builds.every((p) => p[2] === 101)).toBe(true);
      expect(events.length).toBe(Math.ceil(chunks / 25));
      expect(events.at(-1)).toEqual(['build_events', chunks, chunks]);
      // Run again: nothing left to convert, the bytes stay as they are.
      await migrateHashBytes(t.handle.db, name, () => {}, 25);
      // The readers read the layout of the migrations after 0017 (0018: build_events by rowid).
      await migrateEventsRowid(t.handle.db, name, () => {});
      await checkReaders(t.handle, t.store, c, before, hashes);
    } finally {
      await t.close();
    }
  }, 180_000);
});
