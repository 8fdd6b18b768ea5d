// Laws of ingest (fast-check, SQLite and PostgreSQL): a build sent in any number of parts is the
// same build as sent whole; re-sending anything already stored changes nothing.

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { SEE_EVERYTHING, type BuildEvent, type IngestLineResult } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';
import { openTestStore, type TestStore } from './support.js';

const sources = [...demoBuilds({ builds: 60, seed: 5, now: 1_800_000_000_000 })].map((l) => JSON.parse(l) as { buildId: string; events: BuildEvent[] });

describe.each([
  { name: 'sqlite' as const, skip: false, runs: 25 },
  { name: 'postgres' as const, skip: !pgAvailable(), runs: 10 },
])('ingest laws on $name', ({ name, skip, runs }) => {
  let t: TestStore;
  beforeAll(async () => {
    if (!skip) t = await openTestStore(name);
  });
  afterAll(async () => {
    await t?.close();
  });

  it.skipIf(skip)('parts make the same build as the whole; re-sends are unchanged', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: sources.length - 1 }), fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 4 }), fc.boolean(), async (which, cuts, oneBatch) => {
        await t.reset();
        const src = sources[which]!;
        const whole = JSON.parse(JSON.stringify(src)) as typeof src;
        whole.buildId = 'w' + String(n).padStart(12, '0');
        const parted = JSON.parse(JSON.stringify(src)) as typeof src;
        parted.buildId = 'p' + String(n++).padStart(12, '0');
        const points = [...new Set(cuts.map((c) => Math.min(c, src.events.length - 1)))].sort((a, b) => a - b);
        const parts: string[] = [];
        let from = 0;
        for (const p of [...points, src.events.length]) {
          if (p <= from) continue;
          parts.push(JSON.stringify({ ...parted, events: parted.events.slice(from, p) }));
          from = p;
        }
        await t.store.ingestNdjson(JSON.stringify(whole));
        const r = oneBatch ? await t.store.ingestNdjson(parts.join('\n')) : await sequential(parts);
        expect(r.map((x) => x.status)).toEqual(parts.map(() => 'stored'));
        const a = await t.store.getBuild(whole.buildId, SEE_EVERYTHING);
        const b = await t.store.getBuild(parted.buildId, SEE_EVERYTHING);
        expect(b!.attributes).toEqual(a!.attributes);
        const ea: BuildEvent[] = [];
        const eb: BuildEvent[] = [];
        for await (const e of t.store.streamEvents(whole.buildId)) ea.push(e);
        for await (const e of t.store.streamEvents(parted.buildId)) eb.push(e);
        expect(eb).toEqual(ea);
        const again = await t.store.ingestNdjson([...parts, JSON.stringify(whole), JSON.stringify({ ...parted, events: src.events })].join('\n'));
        expect(again.map((x) => x.status)).toEqual([...parts.map(() => 'unchanged'), 'unchanged', 'unchanged']);
        expect(await t.store.latestSeq()).toBe(2);
      }),
      { numRuns: runs },
    );

    async function sequential(parts: string[]): Promise<IngestLineResult[]> {
      const out: IngestLineResult[] = [];
      for (const p of parts) out.push(...(await t.store.ingestNdjson(p)));
      return out;
    }
  }, 120_000);
});
