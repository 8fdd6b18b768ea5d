// Count, facets, 30-day trends and the first list page (newest first) of a fixed corpus of
// queries, on SQLite, timed through the store (search threads and the time limit, as the server
// runs them), each against its peers of the same run:
//
// - the store's answer before the one-pass facets and the count from value rows: the five facet
//   statements that each ran the query, `count(*)` over the compiled query, and the plain listing
//   (the first page without the windows of seq), here in the bench (the same compiler, visibility
//   and guard), with the answers checked equal;
// - the trends' direct SQL path (analytics.ts, three statements), which the store takes without
//   the analytics index, with the answers checked equal;
// - the empty query's count from the rollups (a few rows), the cheapest search-like request.
//
//   node --import tsx bench/analytics-corpus.ts [--quick] [--builds N] [--data DIR | --postgres | --postgres-url URL] [--iter N] [--trends-only | --pages-only] [--only QUERY]
//
// --trends-only times the trends and the peer alone (the facet peers take minutes at 1M) and writes
// bench/results/analytics-corpus-trends.json; --pages-only the first pages, newest and oldest first,
// against the plain listing, and writes analytics-corpus-pages.json. The trends are daily, UTC, over the 30 days before
// the latest build's start.
//
// Corpus: demo builds (`demo-data --seed 7`, src/store/demo/demo-data.ts); --data DIR reuses a data
// directory holding them (e.g. made by `buildscope demo-data --builds 1000000 --seed 7 --data DIR`),
// otherwise --builds N (default 100,000; --quick 10,000) are loaded into a temporary one. Goals at
// 1M builds: count <= 50 ms, facets <= 300 ms, 30-day trends <= 300 ms, first page <= 50 ms. Writes
// bench/results/analytics-corpus.json. --postgres: the same on a throwaway PostgreSQL cluster (as
// the tests start one), loaded with --builds N; writes analytics-corpus-postgres.json. --postgres-url URL
// measures the PostgreSQL database there as it is, loading it first only when it holds no build
// (e.g. `buildscope demo-data --builds 1000000 --seed 7 --now 1793491200000 --db URL`).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { sql } from 'kysely';
import { parseQuery } from '../src/query/index.js';
import type { CheckedExpr } from '../src/query/checked.js';
import { openDatabase } from '../src/db/database.js';
import { buildFacets, buildTrends } from '../src/store/analytics/analytics.js';
import type { AnalyticsIndex } from '../src/store/analytics/analytics-index.js';
import { openBuildStore } from '../src/store/build-store.js';
import { demoBuilds } from '../src/store/demo/demo-data.js';
import { SearchGuard } from '../src/store/search/search-guard.js';
import { visibilityCondition } from '../src/store/search/visibility.js';
import { compileQuery, dialectOf } from '../src/sql/index.js';
import { valueFieldCode } from '../src/sql/value-fields.js';
import { SEE_EVERYTHING, type Facets, type TrendOptions, type Trends } from '../src/store/types.js';
import { flag, option } from './support/args.js';
import { CORPUS } from './support/corpus.js';
import { timed } from './support/timing.js';
import { startPostgres } from '../test/support/postgres-server.js';

const quick = flag('--quick');
const trendsOnly = flag('--trends-only');
const pagesOnly = flag('--pages-only');
const ITER = Number(option('--iter') ?? (quick ? 3 : 5));
const log = (s: string): void => void process.stderr.write(`${s}\n`);

const GOALS = { count: 50, facets: 300, trends: 300, page: 50 };

const pgUrl = option('--postgres-url');
const pg = pgUrl !== undefined ? { url: pgUrl, stop: async () => {} } : flag('--postgres') ? await startPostgres() : undefined;
const given = pg === undefined ? option('--data') : undefined;
const dir = given ?? mkdtempSync(join(tmpdir(), 'bs-analytics-corpus-'));
if (given) mkdirSync(given, { recursive: true });
const handle = await openDatabase(pg !== undefined ? { url: pg.url } : { data: dir });
const database = pg !== undefined ? 'PostgreSQL' : 'SQLite';
// The server's store: posting bitmaps on (the default), search threads, a limit no run reaches.
const store = await openBuildStore(handle, { searchTimeoutMs: 600_000 });
const stored = Number((await sql<{ n: number }>`SELECT count(*) AS n FROM builds WHERE seq IS NOT NULL`.execute(handle.db)).rows[0]!.n);
if (stored === 0) {
  const n = Number(option('--builds') ?? (quick ? 10_000 : 100_000));
  log(`loading ${n} demo builds (seed 7)…`);
  async function* lines() {
    for (const l of demoBuilds({ builds: n, seed: 7, now: Date.UTC(2026, 10, 1) })) yield l + '\n';
  }
  await store.ingestNdjson(lines(), { bulk: true, keepResults: false });
}
const builds = Number((await sql<{ n: number }>`SELECT count(*) AS n FROM builds WHERE seq IS NOT NULL`.execute(handle.db)).rows[0]!.n);
log(`${builds} builds in ${pg?.url ?? dir}`);

// The bench's own guard over the same database, for the peers: the same threads and limit as the store's.
const guard = new SearchGuard(handle, dialectOf(handle.dialect), { timeoutMs: 600_000, threads: 2 });

const checked = (text: string): CheckedExpr => {
  const r = parseQuery(text, { now: Date.now() });
  if (!r.ok || !r.expr) throw new Error(`bad query ${text}`);
  return r.expr;
};

/** The available builds the query matches, as the store's listing and aggregates select them. */
function matching(expr: CheckedExpr) {
  return handle.db
    .selectFrom('builds')
    .where('builds.seq', 'is not', null)
    .where(visibilityCondition(SEE_EVERYTHING))
    .where(guard.deadlineCheck ?? sql<boolean>`1 = 1`)
    .where(compileQuery(expr, dialectOf(handle.dialect)));
}

/** The count before sql/count.ts: count(*) over the compiled query. */
async function countBefore(expr: CheckedExpr): Promise<number> {
  const rows = await guard.search((read) => read(matching(expr).select(sql<number>`count(*)`.as('n')).compile()));
  return Number(rows[0]!.n);
}

/** The facets before they were one statement: five statements, each running the query. */
async function facetsBefore(expr: CheckedExpr, limit = 8): Promise<Facets> {
  const values = (rows: readonly { value: string; n: number | string }[]) => rows.map((r) => ({ value: r.value, count: Number(r.n) }));
  return guard.search(async (read) => {
    const column = (c: string) =>
      read(
        matching(expr)
          .select([sql<string>`${sql.ref(c)}`.as('value'), sql<number>`count(*)`.as('n')])
          .where(sql.ref(c), 'is not', null)
          .groupBy(sql.ref(c))
          .orderBy('n', 'desc')
          .orderBy('value')
          .limit(limit)
          .compile(),
      );
    const tags = read(
      handle.db
        .selectFrom('build_values')
        .select([sql<string>`value`.as('value'), sql<number>`count(*)`.as('n')])
        .where('field', '=', valueFieldCode('tag'))
        .where('seq', 'in', matching(expr).select('builds.seq'))
        .groupBy('value')
        .orderBy('n', 'desc')
        .orderBy('value')
        .limit(limit)
        .compile(),
    );
    const [buildOutcome, buildTool, project, user, tag] = await Promise.all([column('builds.buildoutcome'), column('builds.tool_type'), column('builds.project_name'), column('builds.user'), tags]);
    return { buildOutcome: values(buildOutcome), buildTool: values(buildTool), project: values(project), user: values(user), tag: values(tag) };
  });
}

/** The first page before the windows of seq: the plain compiled listing, newest first. */
function pageBefore(expr: CheckedExpr): Promise<unknown[]> {
  return guard.search((read) => read(matching(expr).select(['builds.id', 'builds.seq']).orderBy('builds.seq', 'desc').limit(50).compile()));
}

async function median(fn: () => Promise<unknown>, iterations = ITER): Promise<number> {
  return (await timed(fn, iterations)).p50;
}

interface Row {
  query: string;
  matches: number;
  peerMs: number;
  countBeforeMs?: number;
  countMs?: number;
  facetsBeforeMs?: number;
  facetsDirectMs?: number;
  facetsMs?: number;
  trendsDirectMs?: number;
  trendsMs?: number;
  pageBeforeMs?: number;
  pageMs?: number;
  pageOldestMs?: number;
}

// The analytics index (analytics-index.ts) reads every build's facet columns once per process, in
// the background (the server starts it when it opens the store), then only the builds that arrive.
const memoryBefore = process.memoryUsage();
const coldStart = performance.now();
const index = (store as unknown as { index: AnalyticsIndex }).index;
index.catchUp();
await index.settled();
const memoryAfter = process.memoryUsage();
// The columns are typed arrays (outside the JS heap), the dictionaries strings in it.
const cold = { ms: Math.round(performance.now() - coldStart), memoryMB: Math.round((memoryAfter.arrayBuffers + memoryAfter.heapUsed - memoryBefore.arrayBuffers - memoryBefore.heapUsed) / 1e6) };
log(`the analytics index read every build's columns in ${cold.ms} ms, ${cold.memoryMB} MB of memory`);

/** The facets without the index: the direct path's one statement (analytics.ts). */
const facetsDirect = (expr: CheckedExpr): Promise<Facets> => buildFacets(handle, { query: expr, visibility: SEE_EVERYTHING }, 8, { rollups: false, guard });

// Daily UTC trends of the 30 days before the latest build's start (the demo builds span 30 days).
const latestStart = Number((await sql<{ t: number }>`SELECT max(buildstarttime) AS t FROM builds`.execute(handle.db)).rows[0]!.t);
const TREND: TrendOptions = { from: latestStart + 1 - 30 * 86_400_000, to: latestStart + 1, interval: 'day', tz: 'UTC' };
/** The trends without the index: the direct path's three statements (analytics.ts), as without it. */
const trendsDirect = (expr: CheckedExpr): Promise<Trends> => buildTrends(handle, { query: expr, visibility: SEE_EVERYTHING }, TREND, { rollups: false, guard });

const rows: Row[] = [];
let identical = true;
const empty = checked('');
const only = option('--only');
for (const text of only === undefined ? CORPUS : CORPUS.filter((q) => q === only)) {
  const query = checked(text);
  const scope = { query, visibility: SEE_EVERYTHING };
  const matches = await store.countBuilds(scope);
  if (pagesOnly) {
    const newest = () => store.listBuilds({ query, visibility: SEE_EVERYTHING, reverse: true, maxBuilds: 50 });
    const same = isDeepStrictEqual((await newest()).map((b) => b.id), ((await pageBefore(query)) as { id: string }[]).map((b) => b.id));
    if (!same) log(`${text}: the store's page differs from the plain listing's`);
    identical &&= same;
    const row: Row = {
      query: text,
      matches,
      peerMs: await median(() => store.countBuilds({ query: empty, visibility: SEE_EVERYTHING })),
      pageBeforeMs: await median(() => pageBefore(query)),
      pageMs: await median(newest),
      pageOldestMs: await median(() => store.listBuilds({ query, visibility: SEE_EVERYTHING, maxBuilds: 50 })),
    };
    log(`${text}: ${JSON.stringify(row)}`);
    rows.push(row);
    continue;
  }
  const sameTrends = isDeepStrictEqual(await store.trends(scope, TREND), await trendsDirect(query));
  if (!sameTrends) log(`${text}: the store's trends differ from the direct path's`);
  identical &&= sameTrends;
  if (!trendsOnly) {
    const page = (await store.listBuilds({ query, visibility: SEE_EVERYTHING, reverse: true, maxBuilds: 50 })).map((b) => b.id);
    const same =
      matches === (await countBefore(query)) &&
      isDeepStrictEqual(await store.facets(scope), await facetsBefore(query)) &&
      isDeepStrictEqual(await store.facets(scope), await facetsDirect(query)) &&
      isDeepStrictEqual(page, ((await pageBefore(query)) as { id: string }[]).map((b) => b.id));
    if (!same) log(`${text}: the store's answer differs from the peer's`);
    identical &&= same;
  }
  // The slow peers (seconds each at 1M) run fewer times; the direct trends (~10 s at 1M) once
  // after the run that checked them.
  const row: Row = {
    query: text,
    matches,
    peerMs: await median(() => store.countBuilds({ query: empty, visibility: SEE_EVERYTHING })),
    ...(trendsOnly
      ? {}
      : {
          countBeforeMs: await median(() => countBefore(query)),
          countMs: await median(() => store.countBuilds(scope)),
          facetsBeforeMs: await median(() => facetsBefore(query), Math.min(ITER, 3)),
          facetsDirectMs: await median(() => facetsDirect(query), Math.min(ITER, 3)),
          facetsMs: await median(() => store.facets(scope), Math.min(ITER, 3)),
          pageBeforeMs: await median(() => pageBefore(query)),
          pageMs: await median(() => store.listBuilds({ query, visibility: SEE_EVERYTHING, reverse: true, maxBuilds: 50 })),
        }),
    trendsDirectMs: (await timed(() => trendsDirect(query), 1)).p50,
    trendsMs: await median(() => store.trends(scope, TREND)),
  };
  log(`${text}: ${JSON.stringify(row)}`);
  rows.push(row);
}

const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined || b === 0 ? '-' : `${Math.round(a / b).toLocaleString('en-US')}x`);
const ms = (t: number | undefined) => (t === undefined ? '-' : `${t.toLocaleString('en-US')} ms`);
const fmt = (t: number | undefined, goal: number) => (t === undefined ? '-' : `${ms(t)}${t <= goal ? '' : ' ✗'}`);
const pagesTable = [
  `| ${builds.toLocaleString('en-US')} builds, ${database}, p50 | matches | peer: empty query count | first page, plain listing | first page, newest first | first page, oldest first |`,
  '|---|---:|---:|---:|---:|---:|',
  ...rows.map((r) => `| \`${r.query}\` | ${r.matches.toLocaleString('en-US')} | ${r.peerMs} ms | ${ms(r.pageBeforeMs)} | ${fmt(r.pageMs, GOALS.page)} | ${fmt(r.pageOldestMs, GOALS.page)} |`),
].join('\n');
const table = pagesOnly ? pagesTable : [
  `| ${builds.toLocaleString('en-US')} builds, ${database}, p50 | matches | peer: empty query count | count before | count | facets before (5 statements) | facets, one statement | facets | speed-up over one statement | 30-day trends, SQL | 30-day trends | speed-up over SQL | first page before | first page, newest first |`,
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| \`${r.query}\` | ${r.matches.toLocaleString('en-US')} | ${r.peerMs} ms | ${ms(r.countBeforeMs)} | ${fmt(r.countMs, GOALS.count)} | ${ms(r.facetsBeforeMs)} | ${ms(r.facetsDirectMs)} | ${fmt(r.facetsMs, GOALS.facets)} | ${ratio(r.facetsDirectMs, r.facetsMs)} | ${ms(r.trendsDirectMs)} | ${fmt(r.trendsMs, GOALS.trends)} | ${ratio(r.trendsDirectMs, r.trendsMs)} | ${ms(r.pageBeforeMs)} | ${fmt(r.pageMs, GOALS.page)} |`,
  ),
].join('\n');
process.stdout.write(
  `${table}\n\nThe analytics index read every build's columns in ${cold.ms.toLocaleString('en-US')} ms (${cold.memoryMB} MB of memory).\n(✗: over the goal at 1M builds: count ${GOALS.count} ms, facets ${GOALS.facets} ms, 30-day trends ${GOALS.trends} ms, page ${GOALS.page} ms)\n`,
);
log(`answers identical to the peers': ${identical}`);
if (!identical) process.exitCode = 1;

const out = join(dirname(fileURLToPath(import.meta.url)), 'results', `analytics-corpus${trendsOnly ? '-trends' : pagesOnly ? '-pages' : ''}${pg !== undefined ? '-postgres' : ''}.json`);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify({ database, builds, iterations: ITER, trendsOnly, trend: TREND, goalsMs: GOALS, identical, indexFirstUse: cold, rows }, null, 2) + '\n');

await guard.close();
await store.close();
await handle.close();
await pg?.stop();
if (!given) rmSync(dir, { recursive: true, force: true });
