// Compressed event chunks (store migration 0008) on both databases: builds stored as JSON text (as
// before 0008) are converted when the store opens again, in batches with progress, and every
// build's events read back the same; new chunks are stored compressed; re-sends stay unchanged.

import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openBuildStore } from '../../src/store/build-store.js';
import { demoBuilds } from '../../src/store/demo-data.js';
import { compactStoredEvents } from '../../src/store/compact-events.js';
import { SEE_EVERYTHING, type BuildEvent, type BuildStore } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';
import { openTestStore } from './support.js';

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];

async function eventsOf(store: BuildStore): Promise<Map<string, BuildEvent[]>> {
  const out = new Map<string, BuildEvent[]>();
  for (const b of await store.listBuilds({ visibility: SEE_EVERYTHING })) {
    const events: BuildEvent[] = [];
    for await (const e of store.streamEvents(b.id)) events.push(e);
    out.set(b.id, events);
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
      const counts = async () =>
        (await sql<{ packed: number | string; text: number | string }>`SELECT count(events_packed) AS packed, count(*) - count(events_packed) AS text FROM build_events`.execute(t.handle.db)).rows[0]!;
      expect(await counts()).toMatchObject({ packed: 0 });

      const progress: number[] = [];
      expect(await compactStoredEvents(t.handle, undefined, (p) => progress.push(p.done))).toBe(1200);
      // Three batches of at most 500 chunks, with progress after each.
      expect(progress).toEqual([500, 1000, 1200]);
      expect(await counts()).toEqual({ packed: 1200, text: 0 });
      const empty = (await sql<{ n: number | string }>`SELECT count(*) AS n FROM build_events WHERE events <> ''`.execute(t.handle.db)).rows[0]!;
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
        expect(await counts()).toEqual({ packed: 1220, text: 0 });
      } finally {
        await packed.close();
      }
    } finally {
      await t.close();
    }
  }, 120_000);
});
