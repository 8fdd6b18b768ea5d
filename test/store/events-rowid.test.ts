// Event chunks by rowid (store migration 0018): SQLite's build_events becomes a rowid table whose
// rowid packs (events_key, chunk); PostgreSQL is left as it is. A store taken back to the layout
// before 0018 (finished builds with compressed and with text chunks, a build of which two of three
// parts are stored) migrates; the export sends the same bytes, the events API answers the same,
// re-sends answer `unchanged`, the missing part `stored`, and a prune removes the build's chunks.
// Also a store rewound to before 0014 migrating through 0014-0018, a conversion interrupted after
// a batch that starts over, and the bound on a build's parts.

import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openBuildStore } from '../../src/store/build-store.js';
import { STORED_BUILD_COLUMNS, storedBuilds, type StoredBuildRow, type StoredChunkRow } from '../../src/store/ingest/stored-build.js';
import { CHUNK_SPAN, eventsId, eventsRange, MAX_BUILD_PARTS, MAX_EVENTS_KEY, migrateEventsRowid } from '../../src/store/schema/events-rowid.js';
import { planBatch, tooManyParts, type StoredBuild } from '../../src/store/ingest/plan.js';
import { prepareLine } from '../../src/store/ingest/prepare.js';
import { contentHash } from '../../src/store/events/canonical.js';
import { storedEvents } from '../../src/store/events/event-codec.js';
import { hashText } from '../../src/store/schema/hash-bytes.js';
import type { ToolType } from '../../src/query/catalog.js';
import type { BuildEvent, BuildStore } from '../../src/store/types.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { pgAvailable } from '../support/postgres.js';
import { undoEventsRowid } from './events-rowid-rewind.js';
import { undoEventsKey } from './events-key-rewind.js';
import { completeBuild, ev, id, line, openTestStore } from './support.js';
import { exported, NOW, storeCorpus, type Corpus } from './chunk-corpus.js';

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];

/** The events API's answer for each build: its events of two types, as parsed events. */
async function typed(store: BuildStore, ids: readonly string[]): Promise<Map<string, BuildEvent[]>> {
  const out = new Map<string, BuildEvent[]>();
  for (const buildId of ids) {
    const list: BuildEvent[] = [];
    for await (const e of store.streamEvents(buildId, { eventTypes: ['BuildStarted', 'UserTag'] })) list.push(e);
    out.set(buildId, list);
  }
  return out;
}

async function ddl(handle: DatabaseHandle): Promise<string> {
  return (await sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'build_events'`.execute(handle.db)).rows[0]!.sql;
}

async function chunkCount(handle: DatabaseHandle, buildId?: string): Promise<number> {
  const where = buildId === undefined ? sql`` : sql`WHERE events_key = (SELECT events_key FROM builds WHERE id = ${buildId})`;
  return Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM build_events ${where}`.execute(handle.db)).rows[0]!.n);
}

/** What every reader of build_events answers after the migration, checked against the answers before. */
async function checkReaders(handle: DatabaseHandle, store: BuildStore, c: Corpus, before: Map<string, string>, beforeTyped: Map<string, BuildEvent[]>): Promise<void> {
  expect(await exported(store, c.ids)).toEqual(before);
  expect(await typed(store, c.ids)).toEqual(beforeTyped);
  // Re-sends of the same content: every finished build, and each stored part of the streamed one.
  const resent = await store.ingestNdjson([...c.packedLines, ...c.textLines, c.parts[0]!, c.parts[1]!].join('\n'));
  expect(resent.map((r) => r.status)).toEqual(resent.map(() => 'unchanged'));
  // The missing part is stored (and finishes the build), as the third chunk of its key.
  expect((await store.ingestNdjson(c.parts[2]!)).map((r) => [r.status, r.status === 'stored' && r.complete])).toEqual([['stored', true]]);
  expect(await chunkCount(handle, c.streamed)).toBe(3);
  expect((await store.ingestNdjson(c.parts.join('\n'))).map((r) => r.status)).toEqual(['unchanged', 'unchanged', 'unchanged']);
  const streamedText = (await exported(store, [c.streamed])).get(c.streamed)!;
  for (const e of JSON.parse(c.parts[2]!).events as BuildEvent[]) expect(streamedText).toContain(e.type.eventType);
  // A prune removes the chunks of the builds it deletes, and only theirs.
  const total = await chunkCount(handle);
  const victim = c.ids[0]!;
  const victimChunks = await chunkCount(handle, victim);
  expect(victimChunks).toBeGreaterThan(0);
  expect((await store.deleteBuilds({ kind: 'oldest' }, 1)).map((g) => g.id)).toEqual([victim]);
  expect(await chunkCount(handle)).toBe(total - victimChunks);
  expect((await exported(store, [victim])).get(victim)).toBe('');
  const rest = c.ids.slice(1, -1);
  expect(await exported(store, rest)).toEqual(new Map(rest.map((i) => [i, before.get(i)!])));
}

describe('the rowid of an event chunk', () => {
  it('packs the events key and the chunk number; out of range is an error', () => {
    expect(eventsId(0, 0)).toBe(0);
    expect(eventsId(3, 5)).toBe(3 * 2 ** 20 + 5);
    expect(eventsId(7, CHUNK_SPAN - 1)).toBe(8 * CHUNK_SPAN - 1);
    expect(eventsId(MAX_EVENTS_KEY, CHUNK_SPAN - 1)).toBeLessThanOrEqual(Number.MAX_SAFE_INTEGER);
    expect(() => eventsId(7, CHUNK_SPAN)).toThrow(RangeError);
    expect(() => eventsId(7, -1)).toThrow(RangeError);
    expect(() => eventsId(MAX_EVENTS_KEY + 1, 0)).toThrow(RangeError);
  });

  it('a build takes parts up to MAX_BUILD_PARTS; the next one is refused with a clear error', () => {
    const buildId = id();
    const stored = (parts: number): StoredBuild => ({
      id: buildId,
      toolType: 'native',
      toolVersion: '8.10.2',
      agentVersion: '3.19',
      seq: null,
      eventsKey: 9,
      contentHash: 'x'.repeat(43),
      chunkHashes: Array.from({ length: parts }, (_, i) => `h${i}`),
      chunkEvents: Array.from({ length: parts }, () => '[]'),
      receivedAt: NOW,
      project: null,
    });
    const text = line({ buildId, events: [ev('UserTag', { tag: 'late' })] });
    const ctx = (parts: number) => ({ load: () => stored(parts), now: () => NOW, newId: id, maxSeq: 0, lastEventsKey: 9 });
    const lines = [{ line: 1, prepared: prepareLine(text) }];
    // The last part a build may have: chunk MAX_BUILD_PARTS - 1, the highest rowid of its key.
    const last = planBatch(lines, ctx(MAX_BUILD_PARTS - 1));
    expect(last.results.map((r) => r.status)).toEqual(['stored']);
    expect(last.writes.chunks.map((c) => [c.events_key, c.chunk])).toEqual([[9, MAX_BUILD_PARTS - 1]]);
    expect(eventsId(9, MAX_BUILD_PARTS - 1)).toBe(10 * CHUNK_SPAN - 1);
    // One more is refused, and nothing is written.
    const over = planBatch(lines, ctx(MAX_BUILD_PARTS));
    expect(over.results).toEqual([{ line: 1, status: 'rejected', buildId, path: '$.events', error: tooManyParts(buildId) }]);
    expect(tooManyParts(buildId)).toMatch(/1048576 parts already/);
    expect(over.writes.chunks).toEqual([]);
  });
});

describe.each(dialects)('event chunks by rowid on $name', ({ name, skip }) => {
  // The law that lets SQLite drop the column: a chunk's hash is the content hash of the build's
  // header and the chunk's encoded events as stored. PostgreSQL stores the hash the ingest computed
  // from the line; SQLite (before 0018) as well, checked through the answers below.
  it.skipIf(skip || name !== 'postgres')('a stored chunk hash is the content hash of the header and the stored events', async () => {
    const t = await openTestStore(name);
    try {
      await storeCorpus(t.handle, t.store, { packed: 40, text: 30, seed: 27 });
      const rows = (
        await sql<{ h: Uint8Array; e: string; p: Uint8Array | null; t: string; v: string; a: string }>`SELECT e.hash AS h, e.events AS e, e.events_packed AS p,
          b.tool_type AS t, b.tool_version AS v, b.agent_version AS a FROM build_events AS e JOIN builds AS b ON b.events_key = e.events_key`.execute(t.handle.db)
      ).rows;
      expect(rows.length).toBeGreaterThan(70);
      for (const r of rows) expect(hashText(r.h)).toBe(contentHash({ toolType: r.t as ToolType, toolVersion: r.v, agentVersion: r.a }, storedEvents(r.e, r.p)));
    } finally {
      await t.close();
    }
  }, 180_000);

  it.skipIf(skip || name !== 'sqlite')('stores no chunk hash; a re-sent part is still recognised by the hash computed from its events', async () => {
    const t = await openTestStore(name);
    try {
      const columns = (await sql<{ name: string }>`SELECT name FROM pragma_table_xinfo('build_events') ORDER BY cid`.execute(t.handle.db)).rows.map((r) => r.name);
      expect(columns).toEqual(['id', 'event_count', 'events', 'events_packed', 'events_key', 'chunk']);
      const buildId = id();
      const whole = (JSON.parse(completeBuild(buildId, 'alpha')) as { events: BuildEvent[] }).events;
      // A first part, sent again with other JSON spacing (the same events): the hash, computed from
      // the stored events, matches the re-sent line's.
      const first = line({ buildId, events: whole.slice(0, 1) });
      expect((await t.store.ingestNdjson(first)).map((r) => r.status)).toEqual(['stored']);
      expect((await t.store.ingestNdjson(JSON.stringify(JSON.parse(first), null, 0))).map((r) => r.status)).toEqual(['unchanged']);
      expect((await t.store.ingestNdjson(line({ buildId, events: whole.slice(1) }))).map((r) => [r.status, r.status === 'stored' && r.complete])).toEqual([['stored', true]]);
      expect((await t.store.ingestNdjson(first)).map((r) => r.status)).toEqual(['unchanged']);
      // The hashes the ingest's plan gets for the stored build are those of the lines as sent.
      const second = line({ buildId, events: whole.slice(1) });
      const builds = (await sql<StoredBuildRow>`SELECT ${sql.raw(STORED_BUILD_COLUMNS.join(', '))} FROM builds WHERE id = ${buildId}`.execute(t.handle.db)).rows;
      const chunks = (await sql<StoredChunkRow>`SELECT events_key, events, events_packed FROM build_events WHERE ${eventsRange(sql`${Number(builds[0]!.events_key)}`)} ORDER BY id`.execute(t.handle.db)).rows;
      const lineHash = (text: string): string => {
        const p = prepareLine(text);
        if (!p.ok) throw new Error(p.error);
        return p.hash;
      };
      expect(storedBuilds(builds, chunks).get(buildId)!.chunkHashes).toEqual([lineHash(first), lineHash(second)]);
    } finally {
      await t.close();
    }
  }, 180_000);

  it.skipIf(skip)('migrates a store from before 0018; export, events, re-sends and prune answer as before', async () => {
    const t = await openTestStore(name);
    try {
      const c = await storeCorpus(t.handle, t.store, { packed: 40, text: 30, seed: 27 });
      // The answers before: read from the same rows before the rewind.
      const before = await exported(t.store, c.ids);
      const beforeTyped = await typed(t.store, c.ids);
      await undoEventsRowid(t.handle.db, name);
      if (name === 'sqlite') expect(await ddl(t.handle)).toMatch(/WITHOUT ROWID/i);
      // Both forms of chunk are there: compressed and text.
      const texts = Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM build_events WHERE events_packed IS NULL`.execute(t.handle.db)).rows[0]!.n);
      expect(texts).toBeGreaterThanOrEqual(32);
      const rows = await chunkCount(t.handle);

      // Opening migrates; packEvents false keeps the text chunks as they are, for the readers.
      const opened = await openBuildStore(t.handle, { packEvents: false });
      try {
        const ran = (await sql<{ name: string }>`SELECT name FROM store_migration WHERE name = '0018_events_rowid'`.execute(t.handle.db)).rows;
        expect(ran.length).toBe(1);
        expect(await chunkCount(t.handle)).toBe(rows);
        if (name === 'sqlite') {
          expect(await ddl(t.handle)).not.toMatch(/WITHOUT ROWID/i);
          const ids = (await sql<{ id: number; k: number; c: number }>`SELECT id, events_key AS k, chunk AS c FROM build_events ORDER BY id`.execute(t.handle.db)).rows;
          for (const r of ids) expect(r.id).toBe(eventsId(r.k, r.c));
          const indexes = (await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'build_events'`.execute(t.handle.db)).rows;
          expect(indexes.map((i) => i.name)).toEqual(['build_events_text']);
          // One build's chunks are a range of the rowid, not a scan of the table.
          const plan = (await sql<{ detail: string }>`EXPLAIN QUERY PLAN SELECT e.id FROM json_each('[1,2]') AS k JOIN build_events AS e
            ON e.id >= k.value * ${sql.lit(CHUNK_SPAN)} AND e.id < (k.value + 1) * ${sql.lit(CHUNK_SPAN)}`.execute(t.handle.db)).rows.map((r) => r.detail);
          expect(plan.join('\n')).toMatch(/SEARCH e USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/);
        } else {
          const pk = (await sql<{ def: string }>`SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'build_events'::regclass AND contype = 'p'`.execute(t.handle.db)).rows;
          expect(pk.map((p) => p.def)).toEqual(['PRIMARY KEY (events_key, chunk)']);
        }
        await checkReaders(t.handle, opened, c, before, beforeTyped);
      } finally {
        await opened.close();
      }
    } finally {
      await t.close();
    }
  }, 180_000);

  it.skipIf(skip)('text chunks are compressed on the rowid after the migration; export and events read the same', async () => {
    const t = await openTestStore(name);
    try {
      const c = await storeCorpus(t.handle, t.store, { packed: 40, text: 30, seed: 27 });
      const before = await exported(t.store, c.ids);
      const beforeTyped = await typed(t.store, c.ids);
      await undoEventsRowid(t.handle.db, name);
      const opened = await openBuildStore(t.handle, {});
      try {
        // Opening compresses the text chunks after the migration, on the rowid.
        expect(Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM build_events WHERE events_packed IS NULL`.execute(t.handle.db)).rows[0]!.n)).toBe(0);
        expect(await exported(opened, c.ids)).toEqual(before);
        expect(await typed(opened, c.ids)).toEqual(beforeTyped);
      } finally {
        await opened.close();
      }
    } finally {
      await t.close();
    }
  }, 180_000);

  it.skipIf(skip)('a store from before 0014 migrates through 0014 to 0018', async () => {
    const t = await openTestStore(name);
    try {
      const c = await storeCorpus(t.handle, t.store, { packed: 40, text: 30, seed: 27 });
      const before = await exported(t.store, c.ids);
      const beforeTyped = await typed(t.store, c.ids);
      // Undoes 0018, 0017, 0016, 0015 and 0014: events keyed by build ID, hashes as text.
      await undoEventsKey(t.handle.db, name);
      const opened = await openBuildStore(t.handle, {});
      try {
        const ran = (await sql<{ name: string }>`SELECT name FROM store_migration WHERE name >= '0014' ORDER BY name`.execute(t.handle.db)).rows;
        expect(ran.map((r) => r.name)).toEqual(['0014_events_key', '0015_values_key', '0016_value_field_codes', '0017_hash_bytes', '0018_events_rowid', '0019_recent_rows', '0020_tests', '0021_tests_backfill', '0022_test_rollups', '0023_failure_group_rollups', '0024_test_packs', '0025_task_rollup_paths']);
        if (name === 'sqlite') expect(await ddl(t.handle)).not.toMatch(/WITHOUT ROWID/i);
        await checkReaders(t.handle, opened, c, before, beforeTyped);
      } finally {
        await opened.close();
      }
    } finally {
      await t.close();
    }
  }, 180_000);

  // SQLite commits each batch by itself; PostgreSQL has nothing to convert.
  it.skipIf(skip || name !== 'sqlite')('converts in batches with progress; a run stopped after a batch starts over', async () => {
    const t = await openTestStore(name);
    try {
      const c = await storeCorpus(t.handle, t.store, { packed: 40, text: 30, seed: 27 });
      const before = await exported(t.store, c.ids);
      const beforeTyped = await typed(t.store, c.ids);
      await undoEventsRowid(t.handle.db, name);
      const rows = await chunkCount(t.handle);

      const stop = new Error('stopped');
      await expect(
        migrateEventsRowid(
          t.handle.db,
          name,
          () => {
            throw stop;
          },
          25,
        ),
      ).rejects.toBe(stop);
      // The first batch was committed into the new table; the old one is whole.
      expect(Number((await sql<{ n: number }>`SELECT count(*) AS n FROM build_events_rowid`.execute(t.handle.db)).rows[0]!.n)).toBe(25);
      expect(await chunkCount(t.handle)).toBe(rows);
      expect(await ddl(t.handle)).toMatch(/WITHOUT ROWID/i);

      const progress: [number, number][] = [];
      await migrateEventsRowid(t.handle.db, name, (done, total) => progress.push([done, total]), 25);
      expect(progress.map((p) => p[0])).toEqual([...Array.from({ length: Math.floor(rows / 25) }, (_, i) => (i + 1) * 25), rows]);
      expect(progress.every((p) => p[1] === rows)).toBe(true);
      expect(await ddl(t.handle)).not.toMatch(/WITHOUT ROWID/i);
      expect(await chunkCount(t.handle)).toBe(rows);
      expect((await sql`SELECT name FROM sqlite_master WHERE name = 'build_events_rowid'`.execute(t.handle.db)).rows).toEqual([]);
      // Run again: the table is converted already, nothing changes.
      await migrateEventsRowid(t.handle.db, name, () => {
        throw new Error('no progress expected');
      });
      await checkReaders(t.handle, t.store, c, before, beforeTyped);
    } finally {
      await t.close();
    }
  }, 180_000);

  // What keeps a build's chunks a range read: every statement the store runs on build_events
  // (ingest of parts and re-sends, the export's listing and slices, prune) searches the rowid or
  // the text rows' index; none scans the table (the virtual columns would allow a scan silently).
  it.skipIf(skip || name !== 'sqlite')('reads and deletes a build\'s chunks by rowid range, never by a scan of the table', async () => {
    const t = await openTestStore(name);
    const db = t.handle.sqlite!;
    const seen = new Set<string>();
    const prepare = db.prepare.bind(db);
    db.prepare = ((source: string) => {
      if (/build_events/.test(source)) seen.add(source);
      return prepare(source);
    }) as typeof db.prepare;
    try {
      const store = await openBuildStore(t.handle, { ingestWorker: false });
      try {
        const buildId = id();
        const whole = (JSON.parse(completeBuild(buildId, 'alpha')) as { events: BuildEvent[] }).events;
        const parts = [line({ buildId, events: whole.slice(0, 1) }), line({ buildId, events: whole.slice(1) })];
        expect((await store.ingestNdjson(parts[0]!)).map((r) => r.status)).toEqual(['stored']);
        expect((await store.ingestNdjson(parts.join('\n'))).map((r) => r.status)).toEqual(['unchanged', 'stored']);
        expect((await exported(store, [buildId])).get(buildId)).toContain('BuildFinished');
        expect((await store.deleteBuilds({ kind: 'oldest' }, 1)).map((g) => g.id)).toEqual([buildId]);
      } finally {
        await store.close();
      }
    } finally {
      db.prepare = prepare;
    }
    try {
      const statements = [...seen].filter((q) => !/^\s*(CREATE|DROP|ALTER)/i.test(q));
      // The chunk insert, the stored chunks of a named build, the export's listing, prune's delete.
      expect(statements.length).toBeGreaterThanOrEqual(4);
      for (const q of statements) {
        const n = (q.match(/\?/g) ?? []).length;
        const plan = (prepare(`EXPLAIN QUERY PLAN ${q}`).all(...Array.from({ length: n }, () => null)) as { detail: string }[]).map((r) => r.detail);
        for (const d of plan) expect(d, q).not.toMatch(/^SCAN (build_events|e)\b(?! USING INDEX build_events_text)/);
        if (/^\s*(select|SELECT)/.test(q) && !/events_packed" is null|events_packed is null/i.test(q)) expect(plan.join('\n'), q).toMatch(/USING INTEGER PRIMARY KEY/);
      }
    } finally {
      await t.close();
    }
  }, 180_000);

  it.skipIf(skip || name !== 'sqlite')('refuses to convert a chunk number beyond the bound, naming it', async () => {
    const t = await openTestStore(name);
    try {
      await storeCorpus(t.handle, t.store, { packed: 40, text: 30, seed: 27 });
      await undoEventsRowid(t.handle.db, name);
      await sql`INSERT INTO build_events (events_key, chunk, hash, event_count, events) VALUES (5, ${CHUNK_SPAN}, 'h', 0, '[]')`.execute(t.handle.db);
      await expect(migrateEventsRowid(t.handle.db, name, () => {})).rejects.toThrow(`build_events holds chunk ${CHUNK_SPAN} of events_key 5`);
      expect(await ddl(t.handle)).toMatch(/WITHOUT ROWID/i);
    } finally {
      await t.close();
    }
  }, 180_000);
});
