// The Tests page's failure groups for a query the rollups answer (the empty query, exact projects
// and outcomes) come from the failure groups' rollups (store migration 0023) and, for the groups
// shown, the tests they hit and their latest build; any other scope counts them from the failures.
// Both must answer the same, for random builds (tests failing with grouped messages, the builds' own
// failures, starts in any order), deletions interleaved, queries, visibilities and limits, on both
// databases. The rows path is asked for by a time range that holds every build.

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { pgAvailable } from '../support/postgres.js';
import { useTestStore } from './support.js';
import { testedBuild } from './tested-build.js';
import { parseQuery } from '../../src/query/index.js';
import type { AggregateScope, Visibility } from '../../src/store/types.js';

const dialects = pgAvailable() ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

const MESSAGES = ['timed out after 5 ms', 'timed out after 61 ms', 'expected 200 but was 500', 'null pointer at /a/b.ts'];
const OWN = ['Process 12 failed', 'Process 7 failed', 'disk full'];

const buildSpec = fc.record({
  project: fc.constantFrom('shop', 'billing', 'docs'),
  start: fc.integer({ min: 1_700_000_000_000, max: 1_700_000_900_000 }),
  // A failed attempt retried and passed leaves the build successful: a test's failures of a group
  // then fall under two outcomes (two rollup keys), and its tests are counted once.
  tests: fc.array(fc.record({ name: fc.constantFrom('a', 'b', 'c', 'd'), message: fc.option(fc.constantFrom(...MESSAGES), { nil: undefined }), retried: fc.boolean() }), { maxLength: 4 }),
  own: fc.array(fc.constantFrom(...OWN), { maxLength: 2 }),
});

const build = testedBuild;

const QUERIES = ['', 'project:shop', 'project:billing buildOutcome:failed', 'buildOutcome:succeeded', 'project:nothing'];
const VISIBILITIES: Visibility[] = [{ projects: 'all', withoutProject: true }, { projects: ['shop', 'docs'], withoutProject: false }, { projects: [], withoutProject: false }];

describe.each(dialects)('failure groups from their rollups (%s)', (dialect) => {
  const t = useTestStore(dialect, false);

  it('are the groups counted from the failures, for queries the rollups answer', async () => {
    const step = fc.oneof(
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('ingest' as const), builds: fc.array(buildSpec, { minLength: 1, maxLength: 4 }) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), n: fc.integer({ min: 1, max: 3 }) }) },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 5 }), fc.constantFrom(...QUERIES), fc.constantFrom(...VISIBILITIES), fc.integer({ min: 1, max: 4 }), async (steps, text, visibility, limit) => {
        await t.reset();
        for (const s of steps) {
          if (s.kind === 'ingest') await t.store.ingestNdjson(s.builds.map(build).join('\n'));
          else await t.store.deleteBuilds({ kind: 'oldest' }, s.n);
        }
        const parsed = parseQuery(text);
        if (!parsed.ok) throw new Error(`bad query ${text}`);
        const scope: AggregateScope = parsed.expr === undefined ? { visibility } : { query: parsed.expr, visibility };
        const fromRollups = await t.store.tests.failureGroups(scope, limit);
        const fromRows = await t.store.tests.failureGroups({ ...scope, startFrom: 0 }, limit);
        expect(fromRollups).toEqual(fromRows);
      }),
      { numRuns: dialect === 'sqlite' ? 40 : 15 },
    );
  }, 180_000);
});
