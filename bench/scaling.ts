// Growth with the number of builds, for docs/scaling.md: the store is filled in steps (demo builds
// of seed 7, as `demo-data` makes them) and at each step measured as a fresh server process would
// find it:
//
// - the ingest rate of the step's builds (bulk, as `demo-data` and a mirror load them), and bytes
//   per build of the whole database (PostgreSQL: pg_database_size less an empty database's;
//   SQLite: the file);
// - the analytics index's first read of every build (a new store, as a server that starts) and
//   the memory it holds;
// - for a few queries, p50 through the store (the index, the rollups, the listing's paths) and,
//   as the peer of the same run, the SQL path a store past the index's budget takes: the count,
//   the facets (one statement), the 30-day daily trends (direct SQL), the first page newest first;
// - at the end, the ingest rate of one writer against two stores writing at once (two server
//   processes on one PostgreSQL database serialise their ingest transactions on one lock).
//
//   node --import tsx bench/scaling.ts [--steps 10000,100000,300000] [--sqlite] [--iter N]
//
// PostgreSQL by default: a throwaway cluster, as the tests start one. Writes
// bench/results/scaling[-sqlite].json. Times vary with the machine's load; the ratios to the
// peers of the same step hold better.

import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { openDatabase, type DatabaseHandle } from '../src/db/database.js';
import { parseQuery } from '../src/query/index.js';
import type { CheckedExpr } from '../src/query/checked.js';
import { buildFacets, buildTrends } from '../src/store/analytics/analytics.js';
import type { AnalyticsIndex } from '../src/store/analytics/analytics-index.js';
import { openBuildStore } from '../src/store/build-store.js';
import { demoBuilds } from '../src/store/demo/demo-data.js';
import { SearchGuard } from '../src/store/search/search-guard.js';
import { compileQuery, dialectOf } from '../src/sql/index.js';
import { SEE_EVERYTHING, type TrendOptions } from '../src/store/types.js';
import { startPostgres } from '../test/support/postgres-server.js';
import { flag, option } from './support/args.js';
import { timed } from './support/timing.js';

const STEPS = (option('--steps') ?? '10000,100000,300000').split(',').map(Number);
const ITER = Number(option('--iter') ?? 3);
const onSqlite = flag('--sqlite');
const QUERIES = ['tag:CI', '-user:bot', 'project:inv*', 'buildStartTime:[2026-10-01 to 2026-10-31]', 'value:"Git branch=main"'];
const NOW = Date.UTC(2026, 10, 1);
const log = (s: string): void => void process.stderr.write(`${s}\n`);

const pg = onSqlite ? undefined : await startPostgres();
const dir = mkdtempSync(join(tmpdir(), 'bs-scaling-'));
const location = pg !== undefined ? { url: pg.url } : { data: dir };

async function databaseBytes(handle: DatabaseHandle): Promise<number> {
  if (pg === undefined) return statSync(join(dir, 'buildscope.db')).size;
  const r = await sql<{ used: number; empty: number }>`SELECT pg_database_size(current_database()) AS used, pg_database_size('template1') AS empty`.execute(handle.db);
  return Number(r.rows[0]!.used) - Number(r.rows[0]!.empty);
}

const checked = (text: string): CheckedExpr => {
  const r = parseQuery(text, { now: NOW });
  if (!r.ok || !r.expr) throw new Error(`bad query ${text}`);
  return r.expr;
};

interface QueryRow {
  query: string;
  matches: number;
  count: number;
  countSql: number;
  facets: number;
  facetsSql: number;
  trends: number;
  trendsSql: number;
  page: number;
}
interface Step {
  builds: number;
  ingestPerSecond: number;
  bytesPerBuild: number;
  indexReadMs: number;
  indexMB: number;
  queries: QueryRow[];
}

// Every step's builds come from one generator, so that the store at each step holds the first N.
const all = demoBuilds({ builds: STEPS.at(-1)!, seed: 7, now: NOW })[Symbol.iterator]();
const steps: Step[] = [];
let loaded = 0;
for (const target of STEPS) {
  const handle = await openDatabase(location);
  const writer = await openBuildStore(handle, { analyticsIndex: false });
  const n = target - loaded;
  log(`loading ${n.toLocaleString('en-US')} builds (to ${target.toLocaleString('en-US')})…`);
  async function* lines() {
    for (let i = 0; i < n; i++) {
      const next = all.next();
      if (next.done === true) return;
      yield next.value + '\n';
    }
  }
  const started = performance.now();
  await writer.ingestNdjson(lines(), { bulk: true, keepResults: false });
  const ingestPerSecond = Math.round(n / ((performance.now() - started) / 1000));
  loaded = target;
  await writer.close();
  // What autovacuum does after a load this size, before the plans below depend on statistics.
  if (pg !== undefined) await sql`ANALYZE`.execute(handle.db);
  const bytesPerBuild = Math.round((await databaseBytes(handle)) / target);

  // As a server that starts: a new store, its index read in the background, timed to the end.
  const store = await openBuildStore(handle, { searchTimeoutMs: 3_600_000 });
  const index = (store as unknown as { index: AnalyticsIndex }).index;
  const readStarted = performance.now();
  index.catchUp();
  await index.settled();
  const indexReadMs = Math.round(performance.now() - readStarted);
  // What the index holds, as it counts it against its budget (its columns, tags, tasks and term bitmaps).
  const indexMB = Math.round((index as unknown as { bytes(): number }).bytes() / 1e6);
  log(`${target}: ${ingestPerSecond} builds/s, ${bytesPerBuild} bytes a build, index read in ${indexReadMs} ms`);

  const guard = new SearchGuard(handle, dialectOf(handle.dialect), { timeoutMs: 3_600_000, threads: 2 });
  const latest = Number((await sql<{ t: number }>`SELECT max(buildstarttime) AS t FROM builds`.execute(handle.db)).rows[0]!.t);
  const trend: TrendOptions = { from: latest + 1 - 30 * 86_400_000, to: latest + 1, interval: 'day', tz: 'UTC' };
  const queries: QueryRow[] = [];
  for (const text of QUERIES) {
    const scope = { query: checked(text), visibility: SEE_EVERYTHING };
    const p50 = async (fn: () => Promise<unknown>) => (await timed(fn, ITER)).p50;
    // The SQL paths without the index (a store past its budget), one run after a checked one.
    const sqlStore = { guard };
    const row: QueryRow = {
      query: text,
      matches: await store.countBuilds(scope),
      count: await p50(() => store.countBuilds(scope)),
      countSql: (await timed(() => guard.search((read) => read(sql<{ n: number }>`SELECT count(*) AS n FROM builds WHERE seq IS NOT NULL AND ${compileQuery(scope.query, dialectOf(handle.dialect))}`.compile(handle.db))), 1)).p50,
      facets: await p50(() => store.facets(scope)),
      facetsSql: (await timed(() => buildFacets(handle, scope, 8, { rollups: false, ...sqlStore }), 1)).p50,
      trends: await p50(() => store.trends(scope, trend)),
      trendsSql: (await timed(() => buildTrends(handle, scope, trend, { rollups: false, ...sqlStore }), 1)).p50,
      page: await p50(() => store.listBuilds({ query: scope.query, visibility: SEE_EVERYTHING, reverse: true, maxBuilds: 50 })),
    };
    log(`  ${JSON.stringify(row)}`);
    queries.push(row);
  }
  await guard.close();
  await store.close();
  await handle.close();
  steps.push({ builds: target, ingestPerSecond, bytesPerBuild, indexReadMs, indexMB, queries });
}

// One writer against two at once, 10,000 builds each way, after the last step.
async function writersRate(writers: number, builds: number): Promise<number> {
  const stores = await Promise.all(Array.from({ length: writers }, async () => {
    const handle = await openDatabase(location);
    return { handle, store: await openBuildStore(handle, { analyticsIndex: false }) };
  }));
  const each = builds / writers;
  const started = performance.now();
  await Promise.all(
    stores.map(({ store }, w) =>
      store.ingestNdjson(
        (async function* () {
          for (const line of demoBuilds({ builds: each, seed: 100 + w + writers * 10, now: NOW })) yield line + '\n';
        })(),
        { bulk: true, keepResults: false },
      ),
    ),
  );
  const rate = Math.round(builds / ((performance.now() - started) / 1000));
  for (const { store, handle } of stores) {
    await store.close();
    await handle.close();
  }
  return rate;
}
const oneWriter = await writersRate(1, 10_000);
const twoWriters = await writersRate(2, 10_000);
log(`ingest of 10,000 builds at ${loaded.toLocaleString('en-US')}: one writer ${oneWriter} builds/s, two stores at once ${twoWriters} builds/s`);

const database = pg !== undefined ? 'PostgreSQL' : 'SQLite';
const ms = (t: number) => `${t.toLocaleString('en-US')} ms`;
const lines = [
  `| ${database} | ${steps.map((s) => `${s.builds.toLocaleString('en-US')} builds`).join(' | ')} |`,
  `|---|${steps.map(() => '---:').join('|')}|`,
  `| ingest of the step, builds/s | ${steps.map((s) => s.ingestPerSecond.toLocaleString('en-US')).join(' | ')} |`,
  `| bytes per build (whole database) | ${steps.map((s) => s.bytesPerBuild.toLocaleString('en-US')).join(' | ')} |`,
  `| analytics index: first read | ${steps.map((s) => ms(s.indexReadMs)).join(' | ')} |`,
  `| analytics index: memory | ${steps.map((s) => `${s.indexMB} MB`).join(' | ')} |`,
  ...QUERIES.flatMap((q, i) => [
    ['count', 'count', 'countSql'],
    ['facets', 'facets', 'facetsSql'],
    ['30-day trends', 'trends', 'trendsSql'],
  ].map(([label, mine, peer]) => `| \`${q}\` ${label}: store / SQL | ${steps.map((s) => `${ms(s.queries[i]![mine as keyof QueryRow] as number)} / ${ms(s.queries[i]![peer as keyof QueryRow] as number)}`).join(' | ')} |`).concat(`| \`${q}\` first page, newest first | ${steps.map((s) => ms(s.queries[i]!.page)).join(' | ')} |`)),
];
process.stdout.write(`${lines.join('\n')}\n\nIngest of 10,000 more builds at ${loaded.toLocaleString('en-US')}: one writer ${oneWriter.toLocaleString('en-US')} builds/s; two stores writing at once ${twoWriters.toLocaleString('en-US')} builds/s (${(twoWriters / oneWriter).toFixed(2)}x).\n`);

const out = join(dirname(fileURLToPath(import.meta.url)), 'results', `scaling${pg === undefined ? '-sqlite' : ''}.json`);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify({ when: new Date().toISOString(), database, iterations: ITER, steps, ingest: { builds: 10_000, oneWriter, twoWriters } }, null, 2) + '\n');
await pg?.stop();
rmSync(dir, { recursive: true, force: true });
