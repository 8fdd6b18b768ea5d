// A search over the store's time limit fails with SearchTimeoutError instead of running on, on
// SQLite (stopped in its search thread) and PostgreSQL (statement_timeout); on SQLite the server's
// thread stays free while it runs. Bounds are generous: the machine is shared.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/query/index.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { SearchTimeoutError } from '../../src/store/search/read-pool.js';
import { SEE_EVERYTHING } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';
import { openTestStore, type TestStore } from './support.js';

// 980 negated terms, over the complexity limit (which the HTTP faces apply): the store must still
// cope with such an expression from a library caller. Over every build this takes seconds.
const SLOW = parseQuery(Array.from({ length: 980 }, (_, i) => `-tag:t${i}`).join(' '), { limits: { maxTerms: 1000, maxUnanchoredWildcards: 8 } }).expr!;
const TIMEOUT_MS = 300;
// Facets and trends nest the query in larger statements: 500 terms exceed SQLite's expression
// depth there (the HTTP faces allow 100). 300 still take seconds over every build on SQLite. On
// PostgreSQL they took seconds only while its JIT compiled the statement, which searches no longer
// do (search-guard.ts): 0.16 s for the facets over 400 builds, so there the aggregates get SLOW's
// 980 terms.
const SLOW_AGGREGATE_SQLITE = parseQuery(Array.from({ length: 300 }, (_, i) => `-tag:t${i}`).join(' '), { limits: { maxTerms: 1000, maxUnanchoredWildcards: 8 } }).expr!;

const dialects = pgAvailable() ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

// Over 400 builds PostgreSQL, which does not JIT-compile a search (search-guard.ts), ran SLOW's
// listing in 0.49 s and its facets in 0.61 s, too close to the limit: over 2,000 it takes some
// seconds. (Before, the compiling alone took seconds.)
const BUILDS = { sqlite: 400, postgres: 2000 } as const;

describe.each(dialects)('search time limit (%s)', (dialect) => {
  let t: TestStore;
  beforeAll(async () => {
    // Without the analytics index: its term bitmaps, once read (even partly, by a search the limit
    // stopped), answer facets and trends from memory, and the statements under test here are the
    // database's (the index's reads are tested in analytics-index.test.ts).
    t = await openTestStore(dialect, { searchTimeoutMs: TIMEOUT_MS, analyticsIndex: false });
    await t.store.ingestNdjson([...demoBuilds({ builds: BUILDS[dialect], seed: 3, now: t.now.value })].join('\n'));
  }, 60_000);
  afterAll(async () => t?.close());

  it('stops a slow search with SearchTimeoutError, and cheap searches keep working', async () => {
    const started = Date.now();
    const error = await t.store.listBuilds({ query: SLOW, visibility: SEE_EVERYTHING }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SearchTimeoutError);
    expect((error as SearchTimeoutError).message).toMatch(/longer than the server's limit of 300 ms/);
    // PostgreSQL checks for the timeout between planning steps: planning 980 subqueries on a busy
    // machine took up to ~35 s before the cancel landed (the HTTP faces allow 100 terms, planned in
    // ~20 ms). The bound says "stopped, not run to the end", not how fast.
    expect(Date.now() - started).toBeLessThan(dialect === 'sqlite' ? 8000 : 60_000);
    // A cheap search still answers afterwards. It runs under the same 300 ms limit, which a loaded
    // machine can exceed on its own: it may be asked again, a few times, never answering wrongly.
    const cheap = parseQuery('buildOutcome:failed').expr!;
    let answered: unknown[] | undefined;
    for (let attempt = 0; attempt < 5 && answered === undefined; attempt++) {
      answered = await t.store.listBuilds({ query: cheap, visibility: SEE_EVERYTHING, maxBuilds: 5 }).catch((e: unknown) => {
        if (e instanceof SearchTimeoutError) return undefined;
        throw e;
      });
    }
    expect(answered?.length).toBe(5);
  }, 120_000);

  it('stops a slow streamed search too', async () => {
    const read = async () => {
      for await (const _ of t.store.streamBuilds({ query: SLOW, visibility: SEE_EVERYTHING })) void _;
    };
    await expect(read()).rejects.toBeInstanceOf(SearchTimeoutError);
  }, 120_000);

  it('stops slow facets and trends too, while the facets the rollups answer are still served', async () => {
    const scope = { query: dialect === 'sqlite' ? SLOW_AGGREGATE_SQLITE : SLOW, visibility: SEE_EVERYTHING };
    const trend = { from: t.now.value - 30 * 86_400_000, to: t.now.value, interval: 'day', tz: 'UTC' } as const;
    const [facets, trends] = await Promise.allSettled([t.store.facets(scope), t.store.trends(scope, trend)]);
    for (const r of [facets, trends]) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(SearchTimeoutError);
      expect(((r as PromiseRejectedResult).reason as Error).message).toMatch(/longer than the server's limit of 300 ms/);
    }
    // The list page's first facets (every build) come from the rollups, outside the search threads.
    const first = await t.store.facets({ visibility: SEE_EVERYTHING });
    expect(first.buildOutcome.reduce((n, v) => n + v.count, 0)).toBe(BUILDS[dialect]);
  }, 120_000);

  it.runIf(dialect === 'sqlite')("leaves the caller's thread free while the search runs", async () => {
    // (Compiling the statement happens in this call, before the timer starts: it is this thread's
    // work, and the complexity limit keeps it small for queries from the HTTP faces.)
    const search = t.store.listBuilds({ query: SLOW, visibility: SEE_EVERYTHING }).catch(() => undefined);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    // An unrelated request while the search runs: a listing without a query, from this thread.
    const started = Date.now();
    const other = await t.store.listBuilds({ visibility: SEE_EVERYTHING, maxBuilds: 1 });
    const otherMs = Date.now() - started;
    await search;
    clearInterval(timer);
    expect(other).toHaveLength(1);
    // In the caller's thread the search would hold it for its whole 300 ms and the timer would
    // not fire; in a search thread the timer keeps firing.
    expect(ticks).toBeGreaterThanOrEqual(5);
    expect(otherMs).toBeLessThan(250);
  });
});
