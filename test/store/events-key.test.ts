// Build events keyed in arrival order (store migration 0014) on both databases: a store in the
// layout before it (events keyed by build ID, chunks as text and compressed, a build still being
// streamed) migrates, and the export sends the same bytes for every build; the streamed build
// keeps its key while it is finished; re-sends stay unchanged; keys only grow, so the key of a
// deleted newest build is never given to another.

import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openBuildStore } from '../../src/store/build-store.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { deleteBuilds } from '../../src/store/prune.js';
import { SEE_EVERYTHING, type BuildEvent } from '../../src/store/types.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { pgAvailable } from '../support/postgres.js';
import { undoEventsKey } from './events-key-rewind.js';
import { completeBuild, ev, id, line, openTestStore } from './support.js';
import { exported, storeCorpus } from './chunk-corpus.js';

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];

async function keyOf(handle: DatabaseHandle, buildId: string): Promise<number> {
  const r = await handle.db.selectFrom('builds').select('events_key').where('id', '=', buildId).executeTakeFirstOrThrow();
  return Number(r.events_key);
}

async function chunksOf(handle: DatabaseHandle, key: number): Promise<number> {
  const r = await handle.db.selectFrom('build_events').select(sql<number | string>`count(*)`.as('n')).where('events_key', '=', key).executeTakeFirstOrThrow();
  return Number(r.n);
}

async function collect(events: AsyncIterable<BuildEvent>): Promise<BuildEvent[]> {
  const out: BuildEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

describe.each(dialects)('events keyed in arrival order on $name', ({ name, skip }) => {
  it.skipIf(skip)('migrates text and compressed chunks keyed by build ID; the export sends the same bytes', async () => {
    // Compressed chunks through the store's own writer, text chunks as a store before 0008 wrote
    // them, and a build still being streamed: two parts stored, the rest sent after the migration.
    const t = await openTestStore(name);
    try {
      const { packedLines, textLines, streamed, whole, parts, ids } = await storeCorpus(t.handle, t.store, { packed: 80, text: 120, seed: 8 });
      const before = await exported(t.store, ids);
      expect([...before.values()].every((text) => text.length > 100)).toBe(true);

      // Back to the layout before 0014, rows as they were.
      await undoEventsKey(t.handle.db, name);
      const forms = (await sql<{ packed: number | string; text: number | string; ids: number | string }>`
        SELECT count(events_packed) AS packed, count(*) - count(events_packed) AS text, count(DISTINCT build_id) AS ids FROM build_events`.execute(t.handle.db)).rows[0]!;
      expect(Number(forms.packed)).toBeGreaterThanOrEqual(80);
      expect(Number(forms.text)).toBeGreaterThanOrEqual(122);
      expect(Number(forms.ids)).toBe(201);

      // Opening the store migrates (and then compresses the text rows).
      const opened = await openBuildStore(t.handle, {});
      try {
        expect(await exported(opened, ids)).toEqual(before);
        const columns = (await sql<{ name: string }>`SELECT ${sql.raw(name === 'sqlite' ? 'name FROM pragma_table_xinfo(\'build_events\')' : "column_name AS name FROM information_schema.columns WHERE table_name = 'build_events'")}`.execute(t.handle.db)).rows.map((r) => r.name);
        expect(columns).toContain('events_key');
        expect(columns).not.toContain('build_id');
        if (name === 'sqlite') {
          const ddl = (await sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE name = 'build_events'`.execute(t.handle.db)).rows[0]!.sql;
          // 0014 made a WITHOUT ROWID table; 0018 (run on opening too) a rowid table packing the key.
          expect(ddl).not.toMatch(/WITHOUT ROWID/i);
          expect(ddl).toMatch(/id integer PRIMARY KEY/i);
          const indexes = (await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'build_events'`.execute(t.handle.db)).rows.map((r) => r.name);
          expect(indexes).toEqual(['build_events_text']);
        }
        const left = (await sql<{ n: number | string }>`SELECT count(*) AS n FROM build_events WHERE events_packed IS NULL`.execute(t.handle.db)).rows[0]!;
        expect(Number(left.n)).toBe(0);

        // Available builds are keyed by their seq; the streamed one after the highest seq; the
        // counter holds the last key given.
        const rows = (await t.handle.db.selectFrom('builds').select(['id', 'seq', 'events_key']).execute()).map((r) => ({ id: r.id, seq: r.seq === null ? null : Number(r.seq), key: Number(r.events_key) }));
        const maxSeq = Math.max(...rows.flatMap((r) => (r.seq === null ? [] : [r.seq])));
        for (const r of rows) expect(r.key).toBe(r.seq ?? maxSeq + 1);
        const counter = await t.handle.db.selectFrom('events_key_counter').select('last').execute();
        expect(counter.map((c) => Number(c.last))).toEqual([maxSeq + 1]);

        // The streamed build is finished under its key; re-sends are recognised.
        const key = await keyOf(t.handle, streamed);
        expect((await opened.ingestNdjson(parts[2]!)).map((r) => r.status)).toEqual(['stored']);
        expect(await keyOf(t.handle, streamed)).toBe(key);
        expect(await chunksOf(t.handle, key)).toBe(3);
        expect(await collect(opened.streamEvents(streamed))).toEqual(whole);
        const resent = await opened.ingestNdjson([parts[1]!, packedLines[5]!, textLines[7]!].join('\n'));
        expect(resent.map((r) => r.status)).toEqual(['unchanged', 'unchanged', 'unchanged']);
        // A new build gets the next key.
        const fresh = id();
        await opened.ingestNdjson(completeBuild(fresh));
        expect(await keyOf(t.handle, fresh)).toBe(maxSeq + 2);
      } finally {
        await opened.close();
      }
    } finally {
      await t.close();
    }
  }, 180_000);

  // SQLite commits each batch of the migration by itself; PostgreSQL runs it in one transaction.
  it.skipIf(skip || name !== 'sqlite')('starts over after an interrupted run: column added, counter made, a partial copy left', async () => {
    const t = await openTestStore(name);
    try {
      await t.store.ingestNdjson([...demoBuilds({ builds: 30, seed: 10, now: Date.UTC(2026, 0, 1) })].join('\n'));
      const streamed = id();
      await t.store.ingestNdjson(line({ buildId: streamed, events: [ev('BuildStarted')] }));
      const ids = [...(await t.store.listBuilds({ visibility: SEE_EVERYTHING })).map((b) => b.id), streamed];
      const before = await exported(t.store, ids);
      await undoEventsKey(t.handle.db, name);
      // What a run stopped after its first batches leaves behind.
      for (const statement of [
        'ALTER TABLE builds ADD COLUMN events_key integer',
        'UPDATE builds SET events_key = 7',
        'CREATE TABLE events_key_counter (last integer NOT NULL)',
        'CREATE TABLE build_events_keyed (events_key integer NOT NULL, chunk integer NOT NULL, hash text NOT NULL, event_count integer NOT NULL, events text NOT NULL, events_packed blob, PRIMARY KEY (events_key, chunk)) WITHOUT ROWID',
        "INSERT INTO build_events_keyed VALUES (1, 0, 'h', 1, '[]', NULL)",
      ]) {
        await sql.raw(statement).execute(t.handle.db);
      }
      const opened = await openBuildStore(t.handle, {});
      try {
        expect(await exported(opened, ids)).toEqual(before);
        const total = (await sql<{ n: number | string }>`SELECT count(*) AS n FROM build_events`.execute(t.handle.db)).rows[0]!;
        expect(Number(total.n)).toBe(31);
        expect((await t.handle.db.selectFrom('events_key_counter').select('last').execute()).map((c) => Number(c.last))).toEqual([31]);
        expect(await keyOf(t.handle, streamed)).toBe(31);
      } finally {
        await opened.close();
      }
    } finally {
      await t.close();
    }
  }, 120_000);

  it.skipIf(skip)('hands out keys that only grow: the key of a deleted newest build is not given again', async () => {
    const t = await openTestStore(name);
    try {
      const [a, b, c] = [id(), id(), id()];
      await t.store.ingestNdjson([completeBuild(a), completeBuild(b), completeBuild(c)].join('\n'));
      const keys = [await keyOf(t.handle, a), await keyOf(t.handle, b), await keyOf(t.handle, c)];
      expect(keys[0]).toBeLessThan(keys[1]!);
      expect(keys[1]).toBeLessThan(keys[2]!);
      expect(await chunksOf(t.handle, keys[2]!)).toBe(1);

      // The newest build deleted: its events go with it, its key is not handed out again.
      const seq = (await t.store.getBuild(c, SEE_EVERYTHING))!.seq;
      expect(await deleteBuilds(t.handle, [{ id: c, seq, project: 'alpha' }], t.now.value)).toHaveLength(1);
      expect(await chunksOf(t.handle, keys[2]!)).toBe(0);
      const d = id();
      await t.store.ingestNdjson(completeBuild(d));
      const keyD = await keyOf(t.handle, d);
      expect(keyD).toBeGreaterThan(keys[2]!);

      // An incomplete build too; a store opened again continues after the last key.
      const streamed = id();
      await t.store.ingestNdjson(line({ buildId: streamed, events: [ev('BuildStarted')] }));
      const keyS = await keyOf(t.handle, streamed);
      expect(keyS).toBeGreaterThan(keyD);
      await t.handle.db.deleteFrom('builds').where('id', '=', streamed).execute();
      const again = await openBuildStore(t.handle, {});
      try {
        const e = id();
        await again.ingestNdjson(completeBuild(e));
        expect(await keyOf(t.handle, e)).toBeGreaterThan(keyS);
      } finally {
        await again.close();
      }
    } finally {
      await t.close();
    }
  }, 120_000);
});
