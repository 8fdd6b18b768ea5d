// Compressed event chunks (store migration 0008) on both databases: builds stored as JSON text (as
// before 0008) are converted when the store opens again, in batches with progress, and every
// build's events read back the same; new chunks are stored compressed; re-sends stay unchanged.

import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { openBuildStore } from '../../src/store/build-store.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { compactStoredEvents } from '../../src/store/schema/compact-events.js';
import { SEE_EVERYTHING, type BuildEvent, type BuildStore } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';
import { completeBuild, ev, id, line, openTestStore } from './support.js';
import { tasksBefore0012 } from './tasks-before-0012.js';
import { undoEventsKey } from './events-key-rewind.js';

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];

/** Every build with its attributes (as a listing reads them) and its events. */
async function eventsOf(store: BuildStore): Promise<Map<string, { attributes: unknown; events: BuildEvent[] }>> {
  const out = new Map<string, { attributes: unknown; events: BuildEvent[] }>();
  for (const b of await store.listBuilds({ visibility: SEE_EVERYTHING, withAttributes: true })) {
    const events: BuildEvent[] = [];
    for await (const e of store.streamEvents(b.id)) events.push(e);
    out.set(b.id, { attributes: 'attributes' in b ? b.attributes : undefined, events });
  }
  return out;
}

describe.each(dialects)('compressed event chunks on $name', ({ name, skip }) => {
  it.skipIf(skip)('converts chunks stored as text, in batches, and reads back the same events', async () => {
    // A store writing text chunks, as a database before 0008 holds them.
    const t = await openTestStore(name, { packEvents: false });
    try {
      const lines = [...demoBuilds({ builds: 1200, seed: 4, now: Date.UTC(2026, 0, 1) })];
      await t.store.ingestNdjson(lines.join('\n'));
      const before = await eventsOf(t.store);
      expect([...before.values()].every((b) => typeof b.attributes === 'object' && Object.keys(b.attributes as object).length > 5 && b.events.length > 5)).toBe(true);
      const counts = async () => {
        const e = (await sql<{ packed: number | string; text: number | string }>`SELECT count(events_packed) AS packed, count(*) - count(events_packed) AS text FROM build_events`.execute(t.handle.db)).rows[0]!;
        const a = (await sql<{ packed: number | string; text: number | string }>`SELECT count(attributes_packed) AS packed, count(*) - count(attributes_packed) AS text FROM build_attributes`.execute(t.handle.db)).rows[0]!;
        return { events: { packed: Number(e.packed), text: Number(e.text) }, attributes: { packed: Number(a.packed), text: Number(a.text) } };
      };
      expect(await counts()).toEqual({ events: { packed: 0, text: 1200 }, attributes: { packed: 0, text: 1200 } });

      const progress: string[] = [];
      const logged: { msg: string }[] = [];
      const logger = pino({ level: 'info' }, { write: (l: string) => void logged.push(JSON.parse(l) as { msg: string }) });
      expect(await compactStoredEvents(t.handle, logger, (p) => progress.push(`${p.table} ${p.done}/${p.of}`))).toBe(2400);
      // Before and after each table; a line every 5 s in between too, when a table takes that long.
      const periodic = /^(event chunks|attribute documents) converted: \d+\/1200 \(\d+%\)$/;
      expect(logged.map((l) => l.msg).filter((m) => !periodic.test(m))).toEqual([
        'converting 1200 stored event chunks to the compressed form',
        'converted 1200 event chunks to the compressed form',
        'converting 1200 stored attribute documents to the compressed form',
        'converted 1200 attribute documents to the compressed form',
      ]);
      // Three batches of at most 500 rows per table, with progress after each.
      expect(progress).toEqual(['build_events 500/1200', 'build_events 1000/1200', 'build_events 1200/1200', 'build_attributes 500/1200', 'build_attributes 1000/1200', 'build_attributes 1200/1200']);
      expect(await counts()).toEqual({ events: { packed: 1200, text: 0 }, attributes: { packed: 1200, text: 0 } });
      const empty = (await sql<{ n: number | string }>`SELECT (SELECT count(*) FROM build_events WHERE events <> '') + (SELECT count(*) FROM build_attributes WHERE attributes <> '') AS n`.execute(t.handle.db)).rows[0]!;
      expect(Number(empty.n)).toBe(0);
      // Opening the store again finds nothing left to convert.
      expect(await compactStoredEvents(t.handle)).toBe(0);

      const packed = await openBuildStore(t.handle);
      try {
        expect(await eventsOf(packed)).toEqual(before);
        // A re-send of stored builds is recognised against the compressed chunks.
        const again = await packed.ingestNdjson(lines.slice(0, 50).join('\n'));
        expect(again.every((r) => r.status === 'unchanged')).toBe(true);
        // New builds are stored compressed.
        const more = [...demoBuilds({ builds: 20, seed: 5, now: Date.UTC(2026, 0, 2) })];
        expect((await packed.ingestNdjson(more.join('\n'))).map((r) => r.status)).toEqual(more.map(() => 'stored'));
        expect(await counts()).toEqual({ events: { packed: 1220, text: 0 }, attributes: { packed: 1220, text: 0 } });
        // Listed attributes of new builds read back from their compressed form.
        const listed = await packed.listBuilds({ visibility: SEE_EVERYTHING, withAttributes: true, maxBuilds: 5, reverse: true });
        expect(listed.every((b) => 'attributes' in b && typeof (b.attributes as Record<string, unknown>)['buildOutcome'] === 'string')).toBe(true);
      } finally {
        await packed.close();
      }
    } finally {
      await t.close();
    }
  }, 120_000);

  it.skipIf(skip)('migrates a database from before 0008 and converts it when the store opens, logging progress', async () => {
    const t = await openTestStore(name, { packEvents: false });
    try {
      const lines = [...demoBuilds({ builds: 300, seed: 6, now: Date.UTC(2026, 0, 1) })];
      await t.store.ingestNdjson(lines.join('\n'));
      const before = await eventsOf(t.store);
      // Back to the schema before 0008 (kysely runs migrations in order only: the later ones too).
      // undoEventsKey undoes 0015 (values keyed by their search key) and 0014.
      await undoEventsKey(t.handle.db, name);
      await tasksBefore0012(t.handle.db);
      for (const statement of [
        'DROP TABLE build_attestations',
        'DROP TABLE build_facet_rollups',
        'DROP TABLE build_rollups',
        'DROP TABLE build_duration_rollups',
        'DROP TABLE build_task_rollups',
        'DROP TABLE rollup_keys',
        'DROP INDEX builds_duration_day',
        'DROP INDEX build_events_text',
        'DROP INDEX build_attributes_text',
        'ALTER TABLE build_events DROP COLUMN events_packed',
        'ALTER TABLE build_attributes DROP COLUMN attributes_packed',
        "DELETE FROM store_migration WHERE name >= '0008'",
      ]) {
        await sql.raw(statement).execute(t.handle.db);
      }
      const logged: { msg: string }[] = [];
      const logger = pino({ level: 'info' }, { write: (l: string) => void logged.push(JSON.parse(l) as { msg: string }) });
      const opened = await openBuildStore(t.handle, { logger });
      try {
        expect(logged.map((l) => l.msg).filter((m) => m.includes('compressed form'))).toEqual([
          'converting 300 stored event chunks to the compressed form',
          'converted 300 event chunks to the compressed form',
          'converting 300 stored attribute documents to the compressed form',
          'converted 300 attribute documents to the compressed form',
        ]);
        const left = (await sql<{ n: number | string }>`SELECT (SELECT count(*) FROM build_events WHERE events_packed IS NULL) + (SELECT count(*) FROM build_attributes WHERE attributes_packed IS NULL) AS n`.execute(t.handle.db)).rows[0]!;
        expect(Number(left.n)).toBe(0);
        expect(await eventsOf(opened)).toEqual(before);
      } finally {
        await opened.close();
      }
    } finally {
      await t.close();
    }
  }, 120_000);

  it.skipIf(skip)('reads back a chunk that compresses a hundredfold and one of several slices, as streams', async () => {
    const t = await openTestStore(name);
    try {
      const buildId = id();
      const first = JSON.parse(completeBuild(buildId)) as { events: BuildEvent[] };
      // Small once compressed (listed with its bytes), but its text is far above what a reader
      // inflates at once: it is inflated as a stream.
      const repetitive = Array.from({ length: 30_000 }, (_, i) => ev('TaskStarted', { id: i % 5, path: ':app:compileJava' }, 1000 + (i % 3)));
      // Random text does not compress: more than one slice of stored bytes. Hex, not base64: the
      // ingest's redaction takes `pwd...=` or `token...=` in a base64 value for a secret.
      const noise = Array.from({ length: 2000 }, () => ev('UserNamedValue', { key: 'k', value: randomBytes(700).toString('hex') }));
      const lines = [line({ buildId, events: first.events.slice(0, -1) }), line({ buildId, events: repetitive }), line({ buildId, events: noise }), line({ buildId, events: first.events.slice(-1) })];
      expect((await t.store.ingestNdjson(lines.join('\n'))).map((r) => r.status)).toContain('stored');
      const sizes = (await sql<{ chunk: number; packed: number | string; text: number | string }>`SELECT chunk, length(events_packed) AS packed, length(events) AS text FROM build_events WHERE events_key = (SELECT events_key FROM builds WHERE id = ${buildId}) ORDER BY chunk`.execute(t.handle.db)).rows;
      expect(sizes.every((r) => Number(r.text) === 0)).toBe(true);
      expect(Number(sizes[1]!.packed)).toBeLessThan(16 * 1024);
      expect(Number(sizes[2]!.packed)).toBeGreaterThan(1024 * 1024);
      const out: BuildEvent[] = [];
      for await (const e of t.store.streamEvents(buildId)) out.push(e);
      const want = [...first.events.slice(0, -1), ...repetitive, ...noise, ...first.events.slice(-1)];
      expect(out).toEqual(want);
      // A re-send of the big chunk is recognised against its compressed form.
      expect((await t.store.ingestNdjson(lines[2]!)).map((r) => r.status)).toEqual(['unchanged']);
    } finally {
      await t.close();
    }
  }, 120_000);
});
