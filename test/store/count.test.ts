// countBuilds (the export listing's `Prefer: count=exact`) counts exactly what a listing with the
// same options returns, on SQLite and PostgreSQL.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/query/index.js';
import type { CheckedExpr } from '../../src/query/checked.js';
import { SEE_EVERYTHING, type BuildSummary, type ListBuildsOptions, type Visibility } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';
import { valueRowsCount } from '../../src/sql/index.js';
import { completeBuild, id, openTestStore, randomBuildLine, type TestStore } from './support.js';

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];

const query = (text: string): CheckedExpr => parseQuery(text, { now: 10_000 }).expr!;

describe.each(dialects)('countBuilds on $name', ({ name, skip }) => {
  let t: TestStore;
  beforeAll(async () => {
    if (skip) return;
    t = await openTestStore(name);
    await t.reset();
    const projects = ['alpha', 'beta', null, 'alpha', 'Beta', 'gamma'];
    for (let i = 0; i < projects.length; i++) {
      t.now.value = 1000 * (i + 1);
      await t.store.ingestNdjson(completeBuild(id(), projects[i]!));
    }
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach((ctx) => {
    if (skip) ctx.skip();
  });

  const alphaOnly: Visibility = { projects: ['alpha'], withoutProject: false };
  it.each<[string, Omit<ListBuildsOptions, 'maxBuilds' | 'visibility'> & { visibility?: Visibility }]>([
    ['everything', {}],
    ['from an instant', { fromInstant: 3000 }],
    ['after a seq', { afterSeq: 2 }],
    ['a query', { query: query('project:alpha or project:beta') }],
    ['a query and an instant', { query: query('project:*a'), fromInstant: 2500 }],
    ['restricted visibility', { visibility: alphaOnly }],
  ])('%s: the count is the listing length', async (_what, options) => {
    const o = { visibility: SEE_EVERYTHING, ...options };
    const listed = (await t.store.listBuilds(o)) as BuildSummary[];
    expect(await t.store.countBuilds(o)).toBe(listed.length);
  });

  it('counts nothing past the end', async () => {
    expect(await t.store.countBuilds({ visibility: SEE_EVERYTHING, afterSeq: await t.store.latestSeq() })).toBe(0);
  });
});

describe.each(dialects)('a count of one exact value from its value rows alone, on $name', ({ name, skip }) => {
  it.skipIf(skip)('is the listing length, a tag repeated in a build counted once', async () => {
    // Without the analytics index, so that countBuilds takes the value rows (sql/count.ts).
    const t = await openTestStore(name, { analyticsIndex: false });
    try {
      await t.reset();
      const builds: [string[], string[]][] = [
        [['CI', 'CI', 'local'], ['test', 'build']],
        [['ci'], ['test']],
        [[], ['build', 'test', 'test']],
        [['nightly', 'CI'], []],
      ];
      for (const [tags, requested] of builds) {
        await t.store.ingestNdjson(randomBuildLine(id(), { project: 'alpha', outcome: 'succeeded', ago: 1000, duration: 10, tool: 'native', user: null, tags, requested }, 100_000));
      }
      for (const q of ['tag:CI', 'tag:local', 'tag:none', 'requested:test', 'requested:build']) {
        const o = { visibility: SEE_EVERYTHING, query: query(q) };
        expect(valueRowsCount(o.query, name), q).toBeDefined();
        const listed = (await t.store.listBuilds(o)) as BuildSummary[];
        expect(await t.store.countBuilds(o), q).toBe(listed.length);
      }
      // A pattern is not one value: its rows are not one a build.
      expect(valueRowsCount(query('requested:*test*'), name)).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});
