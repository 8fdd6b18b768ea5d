// Tests over time at scale: the Tests page (GET /api/tests: counts, verdicts and failure groups of
// the builds a query matches) and a test's history (GET /api/tests/{id}/history) over demo builds
// that each carry 200 tests, through the store's service functions as the routes call them. Each is
// timed against a named peer in the same run: the facets of the same query (the builds list's
// side panel over the same builds), so the ratio holds better than the time on a shared machine.
//
// The population: 200 tests a build (50 suites of 8 names), in each of the demo's 10 projects;
// 190 always pass, 8 are flaky (failure probability 0.05 to 0.225 an attempt, a failed attempt is
// retried once), 2 broken for the last 10 days of the month.
//
//   node --import tsx bench/tests-scale.ts [--builds 100000] [--data DIR | --postgres-url URL] [--iter 5] [--quick]
//
// --data DIR keeps (or reuses) the loaded SQLite data directory; a directory that already holds
// builds is measured as it is. --postgres-url URL: the same on that PostgreSQL database (loaded
// when it holds no build, else measured as it is; never dropped). Goals at 100,000 builds (~20 million executions): the Tests page for
// 30 days at most 500 ms, a test's history at most 100 ms. Writes bench/results/tests-scale.json.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { parseQuery } from '../src/query/index.js';
import { openDatabase } from '../src/db/database.js';
import { openBuildStore } from '../src/store/build-store.js';
import { demoBuilds } from '../src/store/demo/demo-data.js';
import { testHistory, testsOverview } from '../src/services/tests.js';
import { SEE_EVERYTHING, type AggregateScope } from '../src/store/types.js';
import type { AnalyticsIndex } from '../src/store/analytics/analytics-index.js';
import { flag, option } from './support/args.js';
import { timed, type Timing } from './support/timing.js';
import { draw, withTests, type TestRule } from './support/tested-builds.js';

const quick = flag('--quick');
const ITER = Number(option('--iter') ?? (quick ? 3 : 5));
const TESTS = 200;
const NOW = Date.UTC(2026, 10, 1);
const DAY = 86_400_000;
const log = (s: string): void => void process.stderr.write(`${s}\n`);

/** Tests 0-7 flaky with p = 0.05 + 0.025 i, tests 8 and 9 broken for the month's last 10 days. */
const population: TestRule = {
  fails: (a) => {
    if (a.test < 8) return draw(a.build, a.test, a.attempt) < 50 + 25 * a.test ? `timed out after ${draw(a.build, a.test, a.attempt + 7)} ms` : undefined;
    if (a.test < 10) return a.at > NOW - 10 * DAY ? `expected 200 but was ${400 + (a.build % 100)}` : undefined;
    return undefined;
  },
  retry: (a) => a.test < 8,
};

const url = option('--postgres-url');
const given = option('--data');
const dir = url !== undefined ? undefined : (given ?? mkdtempSync(join(os.tmpdir(), 'bs-tests-scale-')));
if (dir !== undefined) mkdirSync(dir, { recursive: true });
const handle = await openDatabase(url !== undefined ? { url } : { data: dir! });
const database = url !== undefined ? 'PostgreSQL' : 'SQLite';
const store = await openBuildStore(handle, { searchTimeoutMs: 600_000 });
const countOf = async (table: string) => Number((await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)}`.execute(handle.db)).rows[0]!.n);
let loadRate: number | undefined;
if ((await countOf('builds')) === 0) {
  const n = Number(option('--builds') ?? (quick ? 10_000 : 100_000));
  log(`loading ${n} demo builds with ${TESTS} tests each…`);
  async function* lines() {
    let b = 0;
    for (const l of demoBuilds({ builds: n, seed: 9, now: NOW })) {
      yield withTests(l, b++, TESTS, population) + '\n';
      if (b % 10_000 === 0) log(`  ${b}`);
    }
  }
  const t = performance.now();
  await store.ingestNdjson(lines(), { bulk: true, keepResults: false });
  loadRate = n / ((performance.now() - t) / 1000);
}
// The analytics index reads every build's columns in the background when the server opens the
// store; the Tests page's reads of a query's builds test each row against its set of the query's
// builds (test-analytics.ts). Timed once it has read them, as the server answers after its start.
const index = (store as unknown as { index: AnalyticsIndex }).index;
index.catchUp();
await index.settled();
const builds = await countOf('builds');
const executions = await countOf('test_runs');
const tests = await countOf('tests');
log(`${builds} builds, ${executions} test executions of ${tests} tests in ${dir ?? 'PostgreSQL'}`);

const scopeOf = (text: string): AggregateScope => {
  if (text === '') return { visibility: SEE_EVERYTHING };
  const r = parseQuery(text, { now: NOW });
  if (!r.ok || !r.expr) throw new Error(`bad query ${text}`);
  return { query: r.expr, visibility: SEE_EVERYTHING };
};

interface Row {
  readonly what: string;
  readonly query: string;
  readonly store: Timing;
  readonly peer: Timing;
  readonly goal: number;
}
const rows: Row[] = [];
// The empty query (the demo's 30 days), exact projects and outcomes: counted from the per-test
// rollups. `tag:CI` and a time range: counted from the matching builds' test packs.
const QUERIES = ['', 'project:inventory', 'buildOutcome:failed', 'tag:CI', 'buildStartTime>-20d'];
for (const q of QUERIES) {
  const scope = scopeOf(q);
  const page = await timed(() => testsOverview(store, scope, 20), ITER);
  const peer = await timed(() => store.facets(scope), ITER);
  rows.push({ what: 'Tests page', query: q, store: page, peer, goal: 500 });
  log(`tests page '${q}': ${page.p50} ms (facets ${peer.p50} ms)`);
}
// A flaky, a broken and a stable test of one project.
const idOf = async (suite: string, name: string) =>
  Number((await handle.db.selectFrom('tests').select('id').where('suite', '=', suite).where('name', '=', name).where('project_name', '=', 'inventory').executeTakeFirstOrThrow()).id);
for (const [label, i] of [['flaky', 3], ['broken', 8], ['stable', 100]] as const) {
  const id = await idOf(`acme.module${i % 50}.Feature${Math.floor(i / 50)}Test`, `case${i % 8}`);
  const history = await timed(() => testHistory(store, SEE_EVERYTHING, id), ITER);
  const peer = await timed(() => store.facets(scopeOf('project:inventory')), ITER);
  rows.push({ what: `history, ${label} test`, query: `test ${id}`, store: history, peer, goal: 100 });
  log(`history ${label}: ${history.p50} ms`);
}
await store.close();
const fileBytes =
  handle.sqlite !== undefined
    ? Number(handle.sqlite.prepare('SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()').pluck().get())
    : Number((await sql<{ n: string }>`SELECT pg_database_size(current_database()) AS n`.execute(handle.db)).rows[0]!.n);
await handle.close();
if (dir !== undefined && given === undefined) rmSync(dir, { recursive: true, force: true });

console.log(`\n${builds} demo builds, ${executions} test executions of ${tests} tests, ${database} (${(fileBytes / 2 ** 30).toFixed(2)} GiB)${loadRate ? `, loaded at ${loadRate.toFixed(0)} builds/s` : ''}\n`);
console.log('| request | query | p50 ms (min-max) | peer: facets of the query, p50 ms | ratio | goal ms |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.what} | \`${r.query || '(all)'}\` | ${r.store.p50} (${r.store.min}-${r.store.max}) | ${r.peer.p50} | ${(r.store.p50 / r.peer.p50).toFixed(2)} | ${r.goal} |`);
mkdirSync('bench/results', { recursive: true });
writeFileSync(`bench/results/tests-scale${url !== undefined ? '-postgres' : ''}.json`, JSON.stringify({ date: new Date().toISOString(), node: process.version, loadAverage: os.loadavg(), cores: os.cpus().length, database, builds, executions, tests, bytes: fileBytes, loadRate, rows }, null, 2) + '\n');
