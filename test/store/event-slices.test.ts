// Events of a chunk larger than one slice (1 M characters) come back exactly as stored, with
// multi-byte characters (é, 😀, CJK, escapes) on every side of the slice boundaries, on SQLite and
// PostgreSQL; small chunks (listed with their text) and large ones mix in one build. Read whole
// (readEvents), the same events come back.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgAvailable } from '../support/postgres.js';
import { completeBuild, ev, id, line, openTestStore, type TestStore } from './support.js';
import type { BuildEvent } from '../../src/store/types.js';

const TEXTS = ['é', '😀', '漢字', '"quoted"', 'back\\slash', '[brackets],{braces}', 'line\nbreak', 'x'];

function bigEvents(count: number): BuildEvent[] {
  return Array.from({ length: count }, (_, i) => ev('TaskFinished', { path: `:t${i}`, note: TEXTS[i % TEXTS.length]!.repeat(1 + (i % 37)), n: i }));
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe.skipIf(dialect === 'postgres' && !pgAvailable())(`events read in slices on ${dialect}`, () => {
    let t: TestStore;
    beforeAll(async () => {
      t = await openTestStore(dialect);
    });
    afterAll(() => t?.close());

    it('a build of one small chunk, one chunk of several slices and one more small chunk', async () => {
      const buildId = id();
      const big = bigEvents(16_000);
      const first = JSON.parse(completeBuild(buildId)) as { events: BuildEvent[] };
      const started = first.events.slice(0, -1);
      const finished = first.events.slice(-1);
      const lines = [line({ buildId, events: started }), line({ buildId, events: big }), line({ buildId, events: finished })];
      expect(lines[1]!.length).toBeGreaterThan(2 * 1024 * 1024);
      const stored = await t.store.ingestNdjson(lines.join('\n'));
      expect(stored.map((r) => r.status)).toContain('stored');
      const out: BuildEvent[] = [];
      for await (const e of t.store.streamEvents(buildId)) out.push(e);
      expect(out).toEqual([...started, ...big, ...finished]);
      const some: BuildEvent[] = [];
      for await (const e of t.store.streamEvents(buildId, { eventTypes: ['BuildFinished'] })) some.push(e);
      expect(some).toEqual(finished);
      // Read whole (each chunk decoded at once): the same events in the same order.
      expect(await t.store.readEvents(buildId)).toEqual(out);
    });

    it('reads no events of a build it does not hold, nor of an ID no build can have', async () => {
      expect(await t.store.readEvents(id())).toEqual([]);
      expect(await t.store.readEvents('a\0b')).toEqual([]);
    });
  });
}
