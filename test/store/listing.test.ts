// Listing, lookup, visibility, streaming and waiting for new builds, on SQLite and PostgreSQL.

import { describe, expect, it } from 'vitest';
import { UnknownBuildError } from '../../src/store/build-store.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { SEE_EVERYTHING, type BuildSummary, type Visibility } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';
import { completeBuild, ev, id, line, openTestStore, type TestStore, useTestStore } from './support.js';

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];

describe.each(dialects)('listing on $name', ({ name, skip }) => {
  const t = useTestStore(name, skip);

  /** Five builds available at 1000, 2000, 3000, 3000, 4000; projects alpha, beta, none, alpha, Beta. */
  async function five(): Promise<string[]> {
    const ids = [id(), id(), id(), id(), id()];
    const projects = ['alpha', 'beta', null, 'alpha', 'Beta'];
    const times = [1000, 2000, 3000, 3000, 4000];
    for (let i = 0; i < 5; i++) {
      t.now.value = times[i]!;
      await t.store.ingestNdjson(completeBuild(ids[i]!, projects[i]!));
    }
    return ids;
  }
  const list = async (o: Partial<Parameters<TestStore['store']['listBuilds']>[0]> = {}): Promise<string[]> =>
    ((await t.store.listBuilds({ visibility: SEE_EVERYTHING, ...o })) as BuildSummary[]).map((b) => b.id);

  it('lists oldest first, newest first with reverse, limited by maxBuilds', async () => {
    const ids = await five();
    expect(await list()).toEqual(ids);
    expect(await list({ reverse: true })).toEqual([...ids].reverse());
    expect(await list({ maxBuilds: 3 })).toEqual(ids.slice(0, 3));
    expect(await list({ maxBuilds: 2, reverse: true })).toEqual([ids[4], ids[3]]);
    expect(await list({ maxBuilds: 0 })).toEqual([]);
  });

  it('fromInstant is inclusive on availableAt; fromBuild is exclusive and takes precedence; afterSeq resumes', async () => {
    const ids = await five();
    expect(await list({ fromInstant: 3000 })).toEqual(ids.slice(2));
    expect(await list({ fromInstant: 3001 })).toEqual(ids.slice(4));
    expect(await list({ fromInstant: 3000, reverse: true })).toEqual([ids[3], ids[2], ids[1], ids[0]]);
    expect(await list({ fromBuild: ids[1] })).toEqual(ids.slice(2));
    expect(await list({ fromBuild: ids[1], fromInstant: 4000 })).toEqual(ids.slice(2));
    expect(await list({ fromBuild: ids[3], reverse: true })).toEqual([ids[2], ids[1], ids[0]]);
    expect(await list({ afterSeq: 3 })).toEqual(ids.slice(3));
    expect(await list({ afterSeq: 3, maxBuilds: 1 })).toEqual([ids[3]]);
    await expect(list({ fromBuild: 'nosuchbuild00' })).rejects.toBeInstanceOf(UnknownBuildError);
  });

  it('applies visibility to every listing and lookup', async () => {
    const ids = await five();
    const v = (projects: Visibility['projects'], withoutProject: boolean): Visibility => ({ projects, withoutProject });
    expect(await list({ visibility: v(['alpha'], false) })).toEqual([ids[0], ids[3]]);
    expect(await list({ visibility: v(['alpha'], true) })).toEqual([ids[0], ids[2], ids[3]]);
    // Project names are matched exactly (visibility is an access rule, not a search).
    expect(await list({ visibility: v(['beta'], false) })).toEqual([ids[1]]);
    expect(await list({ visibility: v(['Beta', 'beta'], false) })).toEqual([ids[1], ids[4]]);
    expect(await list({ visibility: v([], false) })).toEqual([]);
    expect(await list({ visibility: v([], true) })).toEqual([ids[2]]);
    expect(await list({ visibility: v('all', false) })).toEqual([ids[0], ids[1], ids[3], ids[4]]);
    const onlyAlpha = v(['alpha'], false);
    expect(await t.store.getBuild(ids[1]!, onlyAlpha)).toBeUndefined();
    expect(await t.store.getBuild(ids[0]!, onlyAlpha)).toMatchObject({ id: ids[0], project: 'alpha' });
    expect(await t.store.buildState(ids[1]!, onlyAlpha)).toBe('missing');
    expect(await t.store.buildState(ids[0]!, onlyAlpha)).toBe('available');
    await expect(list({ visibility: onlyAlpha, fromBuild: ids[1] })).rejects.toBeInstanceOf(UnknownBuildError);
    const streamed: string[] = [];
    for await (const b of t.store.streamBuilds({ visibility: onlyAlpha })) streamed.push(b.id);
    expect(streamed).toEqual([ids[0], ids[3]]);
    // An incomplete build's project is known from its events already.
    const inc = id();
    await t.store.ingestNdjson(line({ buildId: inc, events: [ev('ProjectStructure', { rootProjectName: 'beta' })] }));
    expect(await t.store.buildState(inc, onlyAlpha)).toBe('missing');
    expect(await t.store.buildState(inc, v(['beta'], false))).toBe('incomplete');
    expect(await t.store.buildState('nosuchbuild00', SEE_EVERYTHING)).toBe('missing');
  });

  it('returns attributes only when asked', async () => {
    const [first] = await five();
    const plain = await t.store.listBuilds({ visibility: SEE_EVERYTHING, maxBuilds: 1 });
    expect(plain[0]).not.toHaveProperty('attributes');
    const rich = await t.store.listBuilds({ visibility: SEE_EVERYTHING, maxBuilds: 1, withAttributes: true });
    expect(rich[0]).toMatchObject({ id: first, attributes: { project: 'alpha', buildOutcome: 'succeeded' } });
  });

  it('streams many builds in pages, in order, honouring the filters', async () => {
    const r = await t.store.ingestNdjson([...demoBuilds({ builds: 2100, seed: 7, now: 1_800_000_000_000 })].join('\n'), { keepResults: false });
    expect(r).toEqual([]);
    let n = 0;
    let last = 0;
    for await (const b of t.store.streamBuilds({ visibility: SEE_EVERYTHING })) {
      expect(b.seq).toBeGreaterThan(last);
      last = b.seq;
      n++;
    }
    expect(n).toBe(2100);
    let back = 0;
    let prev = Infinity;
    for await (const b of t.store.streamBuilds({ visibility: SEE_EVERYTHING, reverse: true, afterSeq: 100 })) {
      expect(b.seq).toBeLessThan(prev);
      prev = b.seq;
      back++;
    }
    expect(back).toBe(2000);
    expect(prev).toBe(101);
  }, 180_000);

  it('wakes waiters when a build becomes available, times out, and honours abort', async () => {
    const seq = await t.store.latestSeq();
    expect(await t.store.waitForNewBuilds(seq, 50)).toBe(false);
    const waiting = t.store.waitForNewBuilds(seq, 10_000);
    await expect.poll(() => t.store.waitingForNewBuilds(), { timeout: 10_000 }).toBe(1);
    const b = id();
    await t.store.ingestNdjson(line({ buildId: b, events: [ev('BuildStarted')] }));
    await t.store.ingestNdjson(line({ buildId: b, events: [ev('BuildFinished', { outcome: 'succeeded' })] }));
    const started = Date.now();
    expect(await waiting).toBe(true);
    expect(Date.now() - started).toBeLessThan(2000);
    // Already newer: resolves at once.
    expect(await t.store.waitForNewBuilds(seq, 10_000)).toBe(true);
    const ac = new AbortController();
    const aborted = t.store.waitForNewBuilds(seq + 1, 10_000, ac.signal);
    ac.abort();
    expect(await aborted).toBe(false);
  });
});

describe.skipIf(!pgAvailable())('two server processes on one PostgreSQL', () => {
  it('a build stored through one store wakes a waiter of another (LISTEN/NOTIFY)', async () => {
    const a = await openTestStore('postgres');
    const { openDatabase } = await import('../../src/db/database.js');
    const { openBuildStore } = await import('../../src/store/build-store.js');
    const handleB = await openDatabase(a.location);
    const storeB = await openBuildStore(handleB);
    try {
      const seq = await storeB.latestSeq();
      const started = Date.now();
      const waiting = storeB.waitForNewBuilds(seq, 20_000);
      // Until it waits (it found no newer build): the build below must wake it.
      await expect.poll(() => storeB.waitingForNewBuilds(), { timeout: 10_000 }).toBe(1);
      await a.store.ingestNdjson(completeBuild(id()));
      expect(await waiting).toBe(true);
      // Well under the fallback poll interval would be ideal, but a loaded machine is slow; the
      // point is that it does not wait for the timeout.
      expect(Date.now() - started).toBeLessThan(5000);
      expect(await storeB.latestSeq()).toBe(seq + 1);
      // Both stores assign seq from one sequence: builds from both interleave without gaps.
      await storeB.ingestNdjson(completeBuild(id()));
      await a.store.ingestNdjson(completeBuild(id()));
      const seqs = ((await storeB.listBuilds({ visibility: SEE_EVERYTHING })) as BuildSummary[]).map((b) => b.seq);
      expect(seqs).toEqual([1, 2, 3]);
    } finally {
      await storeB.close();
      await handleB.close();
      await a.close();
    }
  });

  it('concurrent ingests from two stores never assign one seq twice', async () => {
    const a = await openTestStore('postgres');
    const { openDatabase } = await import('../../src/db/database.js');
    const { openBuildStore } = await import('../../src/store/build-store.js');
    const handleB = await openDatabase(a.location);
    const storeB = await openBuildStore(handleB);
    try {
      const lines = [...demoBuilds({ builds: 400, seed: 3 })];
      const [ra, rb] = await Promise.all([
        a.store.ingestNdjson(lines.slice(0, 200).join('\n'), { batchSize: 20 }),
        storeB.ingestNdjson(lines.slice(200).join('\n'), { batchSize: 20 }),
      ]);
      expect([...ra, ...rb].every((r) => r.status === 'stored')).toBe(true);
      const seqs = ((await a.store.listBuilds({ visibility: SEE_EVERYTHING })) as BuildSummary[]).map((b) => b.seq);
      expect(seqs).toEqual(Array.from({ length: 400 }, (_, i) => i + 1));
    } finally {
      await storeB.close();
      await handleB.close();
      await a.close();
    }
  });
});
