// Preparing ingest batches in a worker thread (src/store/ingest/prepare-pool.ts) changes nothing but
// speed: the same lines give the same results and the same stored builds as preparing them
// inline, however they are cut into batches.

import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { PreparePool, WORKER_LINE_BYTES } from '../../src/store/ingest/prepare-pool.js';
import { eventsJsonOf, prepareLine, prepareLines, type PreparedLine } from '../../src/store/ingest/prepare.js';
import { SEE_EVERYTHING, type BuildEvent, type BuildStore, type IngestLineResult } from '../../src/store/types.js';
import { openTestStore, type TestStore } from './support.js';

type Source = { buildId: string; toolType: string; toolVersion: string; agentVersion: string; events: BuildEvent[] };
const sources = [...demoBuilds({ builds: 30, seed: 11, now: 1_800_000_000_000 })].map((l) => JSON.parse(l) as Source);

const BAD_LINES = [
  '{"oops"',
  '[1, 2]',
  JSON.stringify({ ...sources[0], buildId: 'SHOUTING12345' }),
  JSON.stringify({ ...sources[1], events: [{ timestamp: 1.5, type: { majorVersion: 1, minorVersion: 0, eventType: 'X' }, data: {} }] }),
  JSON.stringify({ ...sources[2], toolType: 'make' }),
  JSON.stringify({ ...sources[3], events: [{ timestamp: 1, type: { majorVersion: 1, minorVersion: 0, eventType: 'X' }, data: { s: 'a\u0000b' } }] }),
];

/** A line of an ingest: a whole build, a part of one, a re-send with other content, or a bad line. */
const lineArb = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('whole' as const), which: fc.nat(sources.length - 1) }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('part' as const), which: fc.nat(sources.length - 1), from: fc.nat(40), to: fc.nat(40) }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('other' as const), which: fc.nat(sources.length - 1) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('anonymous' as const), which: fc.nat(sources.length - 1) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('bad' as const), which: fc.nat(BAD_LINES.length - 1) }), weight: 1 },
);

function render(spec: { kind: string; which: number; from?: number; to?: number }): string {
  const src = sources[spec.which % sources.length]!;
  switch (spec.kind) {
    case 'whole':
      return JSON.stringify(src);
    case 'part': {
      const a = Math.min(spec.from!, spec.to!, src.events.length - 1);
      const b = Math.min(Math.max(spec.from!, spec.to!) + 1, src.events.length);
      return JSON.stringify({ ...src, events: src.events.slice(a, b) });
    }
    case 'other':
      return JSON.stringify({ ...src, events: [...src.events.slice(0, 2), { timestamp: 1, type: { majorVersion: 1, minorVersion: 0, eventType: 'Other' }, data: {} }] });
    case 'anonymous':
      return JSON.stringify({ ...src, buildId: undefined });
    default:
      return BAD_LINES[spec.which % BAD_LINES.length]!;
  }
}

/**
 * A worker's prepared lines with their events' text unpacked: the worker sends the packed form
 * only (PreparedRecord.eventsJson), and that must be all it leaves out.
 */
function withText(prepared: readonly PreparedLine[]): PreparedLine[] {
  expect(prepared.filter((p) => p.prepared.ok && p.prepared.eventsJson !== undefined)).toEqual([]);
  return prepared.map((p) => (p.prepared.ok ? { line: p.line, prepared: { ...p.prepared, eventsJson: eventsJsonOf(p.prepared) } } : p));
}

const open = (ingestWorker: boolean | PreparePool): Promise<TestStore> => openTestStore('sqlite', { ingestWorker });

/** Results without the server-assigned IDs of anonymous lines (random by design). */
const comparable = (rs: readonly IngestLineResult[], anonymous: ReadonlySet<number>) =>
  rs.map((r) => (anonymous.has(r.line) ? { ...r, buildId: '(assigned)' } : r));

async function state(store: BuildStore): Promise<unknown[]> {
  const builds = await store.listBuilds({ visibility: SEE_EVERYTHING, withAttributes: true });
  const out: unknown[] = [];
  for (const b of builds) {
    if (!sources.some((s) => s.buildId === b.id)) continue; // anonymous builds: IDs differ
    const events: BuildEvent[] = [];
    for await (const e of store.streamEvents(b.id)) events.push(e);
    out.push({ ...b, events });
  }
  return out;
}

describe('ingest with a worker thread', () => {
  let inline: TestStore;
  let worker: TestStore;
  const pool = new PreparePool();
  beforeAll(async () => {
    inline = await open(false);
    worker = await open(pool);
  });
  afterAll(async () => {
    await pool.close();
    await inline?.close();
    await worker?.close();
  });

  it('prepares lines exactly as the inline function does', async () => {
    const pool = new PreparePool();
    try {
      const lines = [...sources.map((s) => JSON.stringify(s)), ...BAD_LINES].map((text, i) => ({ line: i + 1, text }));
      expect(withText(await pool.prepare(lines))).toEqual(prepareLines(lines));
      // Several jobs in flight come back to their own callers.
      const [a, b] = await Promise.all([pool.prepare(lines.slice(0, 5)), pool.prepare(lines.slice(5))]);
      expect(withText([...a, ...b])).toEqual(prepareLines(lines));
    } finally {
      await pool.close();
    }
  });

  it('prepares a line without its derivation when asked, and otherwise the same', () => {
    for (const text of [JSON.stringify(sources[0]), render({ kind: 'part', which: 1, from: 0, to: 3 }), ...BAD_LINES]) {
      const full = prepareLine(text);
      const stored = prepareLine(text, { derive: false });
      expect(stored).toEqual(full.ok ? { ...full, derived: undefined } : full);
    }
    const whole = prepareLine(JSON.stringify(sources[0]));
    expect(whole.ok && whole.derived !== undefined).toBe(true);
  });

  it('a pool closed with a job in flight rejects it, and starts a new worker for the next', async () => {
    const pool = new PreparePool();
    const lines = sources.map((s, i) => ({ line: i + 1, text: JSON.stringify(s) }));
    const pending = pool.prepare(lines);
    await pool.close();
    await expect(pending).rejects.toThrow(/worker thread stopped/);
    expect(withText(await pool.prepare(lines.slice(0, 2)))).toEqual(prepareLines(lines.slice(0, 2)));
    await pool.close();
  });

  it('gives up on a worker that fails before preparing anything, instead of starting one per batch', async () => {
    let started = 0;
    const warned: string[] = [];
    const broken = new PreparePool({ warn: (_o: unknown, msg?: string) => void warned.push(msg ?? '') }, () => {
      started++;
      return new Worker('throw new Error("a broken installation")', { eval: true });
    });
    const lines = sources.slice(0, 2).map((s, i) => ({ line: i + 1, text: JSON.stringify(s) }));
    await expect(broken.prepare(lines)).rejects.toThrow(/a broken installation/);
    await expect(broken.prepare(lines)).rejects.toThrow(/a broken installation/);
    expect(started).toBe(1);
    expect(warned).toEqual([expect.stringMatching(/before preparing a batch/)]);
    await broken.close();
  });

  it('prepares a batch in the ingest thread when the worker fails, with the same results', async () => {
    class FailingPool extends PreparePool {
      override prepare(): Promise<never> {
        return Promise.reject(new Error('the worker is gone'));
      }
    }
    const failing = await open(new FailingPool());
    try {
      await inline.reset();
      const text = sources.slice(0, 10).map((s) => JSON.stringify(s)).join('\n');
      const a = await inline.store.ingestNdjson(text, { batchSize: 3 });
      const b = await failing.store.ingestNdjson(text, { batchSize: 3 });
      expect(b.map((r) => r.status)).toEqual(Array.from({ length: 10 }, () => 'stored'));
      expect(b).toEqual(a);
      expect(await state(failing.store)).toEqual(await state(inline.store));
    } finally {
      await failing.close();
    }
  });

  it('prepares a part with a line longer than the worker takes in this thread, and the other parts in the worker', async () => {
    const src = sources[0]!;
    // A build whose tests make its line longer than WORKER_LINE_BYTES.
    const tests = Math.ceil(WORKER_LINE_BYTES / 150);
    const events: BuildEvent[] = [...src.events.slice(0, -1)];
    for (let i = 0; i < tests; i++) {
      events.push({ timestamp: 1_800_000_000_000 + i, type: { majorVersion: 1, minorVersion: 0, eventType: 'TestStarted' }, data: { id: 1000 + i, suite: `acme.LongSuite${i % 50}`, name: `test${i}`, task: ':test' } });
      events.push({ timestamp: 1_800_000_000_001 + i, type: { majorVersion: 1, minorVersion: 0, eventType: 'TestFinished' }, data: { id: 1000 + i, outcome: 'passed', attempt: 1 } });
    }
    events.push(src.events[src.events.length - 1]!);
    const long = JSON.stringify({ ...src, buildId: 'longline00001', events });
    expect(long.length).toBeGreaterThan(WORKER_LINE_BYTES);
    const others = sources.slice(1, 7).map((s) => JSON.stringify(s));
    const text = [...others.slice(0, 3), long, ...others.slice(3)].join('\n');
    await inline.reset();
    await worker.reset();
    const before = pool.linesPrepared;
    const a = await inline.store.ingestNdjson(text, { batchSize: 2 });
    const b = await worker.store.ingestNdjson(text, { batchSize: 2 });
    expect(b).toEqual(a);
    expect(b.map((r) => r.status)).toEqual(Array.from({ length: 7 }, () => 'stored'));
    // Parts of two lines: the first here (a short input never waits for the worker), the one with
    // the long line here, the other three lines in the worker (five, had the long one gone there).
    expect(pool.linesPrepared - before).toBe(3);
    expect(await state(worker.store)).toEqual(await state(inline.store));
    // The pool refuses such a part itself, and prepares the next one as before.
    await expect(pool.prepare([{ line: 1, text: long }])).rejects.toThrow(/longer than the ingest worker takes/);
    expect(withText(await pool.prepare([{ line: 1, text: others[0]! }]))).toEqual(prepareLines([{ line: 1, text: others[0]! }]));
  });

  it('stores the events as text in a store that does not compress them, from the packed form the worker sends', async () => {
    const plain = await openTestStore('sqlite', { ingestWorker: false, packEvents: false });
    const pooled = new PreparePool();
    const viaWorker = await openTestStore('sqlite', { ingestWorker: pooled, packEvents: false });
    try {
      // Whole builds, and builds sent in two parts (their first part kept by the plan as packed).
      const text = sources
        .slice(0, 8)
        .flatMap((s, i) => (i % 2 === 0 ? [JSON.stringify(s)] : [JSON.stringify({ ...s, events: s.events.slice(0, 3) }), JSON.stringify({ ...s, events: s.events.slice(3) })]))
        .join('\n');
      const a = await plain.store.ingestNdjson(text, { batchSize: 2 });
      const b = await viaWorker.store.ingestNdjson(text, { batchSize: 2 });
      expect(pooled.linesPrepared).toBeGreaterThan(0);
      expect(b).toEqual(a);
      expect(await state(viaWorker.store)).toEqual(await state(plain.store));
      const chunks = viaWorker.handle.sqlite!.prepare('SELECT count(*) AS n FROM build_events WHERE events_packed IS NULL AND length(events) > 2').get() as { n: number };
      expect(chunks.n).toBe(12);
    } finally {
      await pooled.close();
      await plain.close();
      await viaWorker.close();
    }
  });

  // A bulk load shares the preparing between this thread and the worker (part-queue.ts).
  it.each([false, true])('stores the same builds with the same line results as inline preparation, in any batch size; bulk: %s', async (bulk) => {
    await fc.assert(
      fc.asyncProperty(fc.array(lineArb, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 6 }), async (specs, batchSize) => {
        await inline.reset();
        await worker.reset();
        const lines = specs.map(render);
        const anonymous = new Set(specs.flatMap((s, i) => (s.kind === 'anonymous' ? [i + 1] : [])));
        const text = lines.join('\n');
        const before = pool.linesPrepared;
        const a = await inline.store.ingestNdjson(text, { batchSize, bulk });
        const b = await worker.store.ingestNdjson(text, { batchSize, bulk });
        expect(comparable(b, anonymous)).toEqual(comparable(a, anonymous));
        // The first batch is prepared inline (a short input never waits for the worker); the rest
        // in the worker, or in a bulk load some of them here.
        const atWorker = pool.linesPrepared - before;
        const others = Math.max(0, lines.length - batchSize);
        if (bulk) expect(atWorker).toBeLessThanOrEqual(others);
        else expect(atWorker).toBe(others);
        expect(await state(worker.store)).toEqual(await state(inline.store));
      }),
      { numRuns: bulk ? 25 : 40 },
    );
  }, 120_000);
});
