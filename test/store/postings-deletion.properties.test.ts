// The posting bitmaps (store/search/postings.ts) under deletion: with ingests, deletions (oldest builds,
// builds older than an instant, through the store that holds the bitmaps or through another one
// over the same database, as `buildscope prune` would) and searches interleaved at random, every
// page listed through the bitmaps equals the page SQL alone lists.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CheckedExpr } from '../../src/query/checked.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { demoPool } from './demo-pool.js';
import { exactTermsOf, SPAN } from './exact-terms.js';
import { PostingCache } from '../../src/store/search/postings.js';
import { SEE_EVERYTHING, type BuildStore, type BuildWithAttributes, type ListBuildsOptions } from '../../src/store/types.js';

const NOW = Date.UTC(2026, 0, 15);
const DAY = 86_400_000;

type Op =
  | { readonly kind: 'ingest'; readonly n: number; readonly viaFast: boolean }
  | { readonly kind: 'deleteOldest'; readonly n: number; readonly viaFast: boolean }
  | { readonly kind: 'deleteBefore'; readonly pick: number; readonly viaFast: boolean }
  | { readonly kind: 'search'; readonly build: number; readonly picks: readonly number[]; readonly maxBuilds: number; readonly reverse: boolean; readonly afterSeq: number | undefined };

describe('posting bitmaps with deletions interleaved (SQLite)', () => {
  let dir: string;
  let handle: DatabaseHandle;
  let fast: BuildStore;
  let plain: BuildStore;
  let terms: CheckedExpr[];
  let take: (n: number) => string[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'postings-del-'));
    handle = await openDatabase({ data: dir });
    let tick = NOW;
    // Without the analytics index: a listing takes the index's matches when it has them, and the
    // posting lists where it has none (or while it reads the builds).
    fast = await openBuildStore(handle, { clock: () => tick++, analyticsIndex: false });
    plain = await openBuildStore(handle, { clock: () => NOW, postings: false, analyticsIndex: false });
    // Builds starting over the 30 days before NOW, with fresh IDs (the pool is larger than any run needs).
    take = demoPool({ seed: 31, now: NOW, prefix: 'p' });
    await fast.ingestNdjson(take(150).join('\n'));
    const builds = (await plain.listBuilds({ visibility: SEE_EVERYTHING, withAttributes: true })) as BuildWithAttributes[];
    terms = [...new Map(builds.flatMap(exactTermsOf).map((t) => [JSON.stringify(t), t])).values()];
  }, 120_000);
  afterAll(async () => {
    await fast?.close();
    await plain?.close();
    await handle?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ids = async (s: BuildStore, o: ListBuildsOptions) => (await s.listBuilds(o)).map((b) => b.id);
  const stored = async () => (await plain.listBuilds({ visibility: SEE_EVERYTHING, withAttributes: true })) as BuildWithAttributes[];

  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('ingest' as const), n: fc.integer({ min: 1, max: 40 }), viaFast: fc.boolean() }),
    fc.record({ kind: fc.constant('deleteOldest' as const), n: fc.integer({ min: 1, max: 30 }), viaFast: fc.boolean() }),
    // Before the start of one of the stored builds, or (pick 0) after all of them: the newest go too.
    fc.record({ kind: fc.constant('deleteBefore' as const), pick: fc.nat(), viaFast: fc.boolean() }),
    fc.record({
      kind: fc.constant('search' as const),
      build: fc.nat(),
      picks: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
      maxBuilds: fc.integer({ min: 1, max: 30 }),
      reverse: fc.boolean(),
      afterSeq: fc.option(fc.nat({ max: 3000 }), { nil: undefined }),
    }),
  );

  it('list through the bitmaps exactly what SQL lists', async () => {
    const used = vi.spyOn(PostingCache.prototype, 'postings');
    let searches = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        for (const o of ops) {
          switch (o.kind) {
            case 'ingest':
              await (o.viaFast ? fast : plain).ingestNdjson(take(o.n).join('\n'));
              break;
            case 'deleteOldest':
              await (o.viaFast ? fast : plain).deleteBuilds({ kind: 'oldest' }, o.n);
              break;
            case 'deleteBefore': {
              const starts = (await stored()).map((b) => Number(b.attributes['buildStartTime']));
              const instant = o.pick % 4 === 0 || starts.length === 0 ? NOW + DAY : starts[o.pick % starts.length]!;
              await (o.viaFast ? fast : plain).deleteBuilds({ kind: 'startedBefore', instant }, 500);
              break;
            }
            case 'search': {
              // Terms of a stored build (so that the conjunction matches at least it), or of the first builds.
              const now = await stored();
              const own = now.length === 0 ? terms : exactTermsOf(now[o.build % now.length]!);
              const chosen = o.picks.map((p) => own[p % own.length]!);
              const options: ListBuildsOptions = {
                query: chosen.length === 1 ? chosen[0]! : { kind: 'and', operands: chosen, span: SPAN },
                visibility: SEE_EVERYTHING,
                maxBuilds: o.maxBuilds,
                reverse: o.reverse,
                ...(o.afterSeq !== undefined ? { afterSeq: o.afterSeq } : {}),
              };
              searches++;
              expect(await ids(fast, options)).toEqual(await ids(plain, options));
              break;
            }
          }
        }
      }),
      { numRuns: 40 },
    );
    // The property went through the bitmaps, not only the SQL fallback.
    expect(searches).toBeGreaterThan(20);
    expect(used.mock.results.filter((r) => r.value !== undefined).length).toBeGreaterThan(20);
    used.mockRestore();
  }, 300_000);
});
