// The shortcuts of the search paths answer what the plain compiled query answers: a count from
// value rows (src/sql/count.ts), on SQLite and PostgreSQL, with incomplete and deleted builds
// about; pages read in windows of seq (search/listing.ts pageFromWindows, SQLite), for random
// queries whose plan sorts every match and random listing options, with windows small enough
// that a few hundred builds span several; and pages whose candidates are the analytics index's
// matches (pageFromCandidates), on both databases, for random queries, visibilities and listing
// options, with builds deleted behind the index's back.

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { parseQuery } from '../../src/query/index.js';
import type { CheckedExpr } from '../../src/query/checked.js';
import { valueRowsCount } from '../../src/sql/index.js';
import { SEE_EVERYTHING, type BuildSummary, type ListBuildsOptions, type Visibility } from '../../src/store/types.js';
import type { AnalyticsIndex } from '../../src/store/analytics/analytics-index.js';
import { deleteBuilds } from '../../src/store/prune.js';
import { pgAvailable } from '../support/postgres.js';
import { openTestStore, type TestStore } from './support.js';

const NOW = Date.UTC(2026, 0, 1);
const query = (text: string): CheckedExpr => {
  const r = parseQuery(text, { now: NOW });
  if (!r.ok || r.expr === undefined) throw new Error(`bad query ${text}`);
  return r.expr;
};
const lines = [...demoBuilds({ builds: 300, seed: 11, now: NOW, unfinished: 0.1 })];

describe('which counts come from value rows', () => {
  it.each([
    ['tag:CI', true],
    ['tag:nightly', true],
    ['requested:build', true],
    ['tag:CI*', false],
    ['tag:*i*', false],
    ['-tag:CI', false],
    ['tag:CI tag:nightly', false],
    ['user:ci', false],
    ['value:"Git branch=main"', false],
  ])('%s: %s', (text, expected) => {
    expect(valueRowsCount(query(text), 'sqlite') !== undefined).toBe(expected);
    expect(valueRowsCount(query(text), 'postgres') !== undefined).toBe(expected);
  });
});

describe.each([
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
])('counts from value rows on $name', ({ name, skip }) => {
  let t: TestStore;
  beforeAll(async () => {
    if (skip) return;
    t = await openTestStore(name);
    await t.reset();
    await t.store.ingestNdjson(lines.join('\n'));
    // Deleted builds take their value rows with them.
    t.now.value = NOW + 86_400_000;
    await t.store.deleteBuilds({ kind: 'oldest' }, 40);
  });
  afterAll(async () => {
    await t?.close();
  });

  it.skipIf(skip)('counts what the listing lists, for every stored tag and some that are not', async () => {
    const tags = new Set<string>(['CI', 'ci', 'no-such-tag', 'LOCAL']);
    for (const b of (await t.store.listBuilds({ visibility: SEE_EVERYTHING, withAttributes: true })) as { attributes: Record<string, unknown> }[]) {
      for (const tag of (b.attributes['tag'] as string[] | undefined) ?? []) tags.add(tag);
    }
    expect(tags.size).toBeGreaterThan(5);
    for (const tag of tags) {
      const options = { visibility: SEE_EVERYTHING, query: query(`tag:${JSON.stringify(tag)}`) };
      const listed = (await t.store.listBuilds(options)) as BuildSummary[];
      expect({ tag, n: await t.store.countBuilds(options) }).toEqual({ tag, n: listed.length });
    }
  });
});

describe('pages read in windows of seq on sqlite', () => {
  let t: TestStore;
  let ids: string[];
  beforeAll(async () => {
    t = await openTestStore('sqlite', { pageWindows: [3, 17], postings: false, analyticsIndex: false });
    await t.reset();
    await t.store.ingestNdjson(lines.join('\n'));
    ids = ((await t.store.listBuilds({ visibility: SEE_EVERYTHING })) as BuildSummary[]).map((b) => b.id);
  });
  afterAll(async () => {
    await t?.close();
  });

  // Prefixes and `or`s of indexed terms: plans that collect the matches through their indexes
  // and sort them. From every match to none.
  const queries = ['project:inv*', 'project:*', 'project:zz*', 'buildOutcome:failed or tag:CI', 'project:bill* or user:ci', 'user:a* buildTool:native', 'buildOutcome:failed or project:inventory'];

  it('lists what the plain query lists, for random options', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...queries),
        fc.boolean(),
        fc.integer({ min: 1, max: 60 }),
        fc.option(fc.nat({ max: 299 }), { nil: undefined }),
        fc.option(fc.nat({ max: 320 }), { nil: undefined }),
        fc.boolean(),
        async (text, reverse, maxBuilds, from, afterSeq, sinceZero) => {
          const options: Omit<ListBuildsOptions, 'maxBuilds'> = {
            visibility: SEE_EVERYTHING,
            query: query(text),
            reverse,
            ...(from !== undefined && from < ids.length ? { fromBuild: ids[from]! } : {}),
            ...(afterSeq !== undefined ? { afterSeq } : {}),
            ...(sinceZero && !reverse ? { fromInstant: 0 } : {}),
          };
          const all = (await t.store.listBuilds(options)) as BuildSummary[];
          const page = (await t.store.listBuilds({ ...options, maxBuilds })) as BuildSummary[];
          expect(page.map((b) => b.id)).toEqual(all.slice(0, maxBuilds).map((b) => b.id));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('walks the windows for a prefix: the same page with project visibility', async () => {
    const visibility = { projects: ['inventory', 'billing'], withoutProject: false };
    for (const reverse of [true, false]) {
      const options = { visibility, query: query('project:inv* or project:bill*'), reverse };
      const all = (await t.store.listBuilds(options)) as BuildSummary[];
      expect(all.length).toBeGreaterThan(20);
      expect(((await t.store.listBuilds({ ...options, maxBuilds: 20 })) as BuildSummary[]).map((b) => b.id)).toEqual(all.slice(0, 20).map((b) => b.id));
    }
  });
});

describe.each([
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
])('pages from the analytics index on $name', ({ name, skip }) => {
  let t: TestStore;
  let ids: string[];
  let index: AnalyticsIndex;
  beforeAll(async () => {
    if (skip) return;
    // Posting bitmaps off: exact terms would take their path instead.
    t = await openTestStore(name, { postings: false });
    t.now.value = NOW;
    await t.store.ingestNdjson(lines.join('\n'));
    const all = (await t.store.listBuilds({ visibility: SEE_EVERYTHING })) as (BuildSummary & { seq: number; project: string | null })[];
    index = (t.store as unknown as { index: AnalyticsIndex }).index;
    // Builds the index has read, then deleted by another process: candidates SQL must turn down.
    expect(await index.matching({ visibility: SEE_EVERYTHING })).toBeDefined();
    await deleteBuilds(t.handle, all.filter((_, i) => i % 29 === 5).map((b) => ({ id: b.id, seq: b.seq, project: b.project })), NOW);
    ids = all.map((b) => b.id);
  });
  afterAll(async () => {
    await t?.close();
  });

  // What the posting bitmaps and the windows do not serve: time ranges, infixes, custom values,
  // child rows, negations and mixes; and indexed terms.
  const queries = [
    'buildStartTime:[2025-12-20 to 2025-12-28]',
    'buildStartTime>-5d -tag:local',
    'requested:*test*',
    'value:"Git branch=main"',
    'value:os=*',
    'user:*ar*',
    'project:inv* or buildOutcome:failed',
    '-user:bot buildTool:native',
    'tag:CI',
    'hasFailedTest',
    'project:zz*',
  ];
  const visibilities: readonly Visibility[] = [SEE_EVERYTHING, { projects: ['inventory', 'billing'], withoutProject: false }, { projects: [], withoutProject: true }];

  it.skipIf(skip)('lists what the plain query lists, for random queries, visibilities and options', async () => {
    const matching = vi.spyOn(index, 'matching');
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...queries),
        fc.nat(visibilities.length - 1),
        fc.boolean(),
        fc.integer({ min: 1, max: 60 }),
        fc.option(fc.nat({ max: 299 }), { nil: undefined }),
        fc.option(fc.nat({ max: 320 }), { nil: undefined }),
        fc.constantFrom(undefined, 0, NOW - 10 * 86_400_000),
        async (text, v, reverse, maxBuilds, from, afterSeq, fromInstant) => {
          const options: Omit<ListBuildsOptions, 'maxBuilds'> = {
            visibility: visibilities[v]!,
            query: query(text),
            reverse,
            ...(from !== undefined && from < ids.length ? { fromBuild: ids[from]! } : {}),
            ...(afterSeq !== undefined ? { afterSeq } : {}),
            ...(fromInstant !== undefined ? { fromInstant } : {}),
          };
          let all: BuildSummary[];
          try {
            all = (await t.store.listBuilds(options)) as BuildSummary[];
          } catch (e) {
            // A deleted build named as the start is not visible to every caller: both ways alike.
            await expect(t.store.listBuilds({ ...options, maxBuilds })).rejects.toThrow((e as Error).message);
            return;
          }
          const page = (await t.store.listBuilds({ ...options, maxBuilds })) as BuildSummary[];
          expect(page.map((b) => b.id)).toEqual(all.slice(0, maxBuilds).map((b) => b.id));
        },
      ),
      { numRuns: 150 },
    );
    // The pages came from the index's matches, not from a fallback.
    const answers = await Promise.all(matching.mock.results.map((r) => r.value as Promise<Uint32Array | undefined>));
    expect(answers.length).toBeGreaterThan(100);
    expect(answers.every((a) => a !== undefined)).toBe(true);
  });
});
