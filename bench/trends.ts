// Trends and counts of the web pages on SQLite: p50 of a 30-day trend (whole data set and a
// selective query), the exact count behind the builds list and the facets, against the peers of
// the same run: the same trends and facets computed from the builds directly (the path queries the rollups
// do not answer take, `rollups: false`), and the same answers computed in TypeScript after
// reading the builds into memory (BuildStore.streamBuilds with attributes), which is what a
// server without database aggregates would do (skipped from 500k builds on unless
// --in-memory-peer: it reads every build, twice per query).
//
//   node --import tsx bench/trends.ts [--quick] [--builds N] [--million] [--sqlite-data DIR] [--in-memory-peer]
//
// Corpus: demo builds (src/store/demo/demo-data.ts, about 11 tasks each) spread over the 30 days before
// a fixed instant, loaded through BuildStore.ingestNdjson as a bulk load (so build_tasks is filled
// the way the server fills it). --sqlite-data DIR keeps the corpus and reuses it when DIR already
// holds one of the same size. Writes bench/results/trends.json. Goal: 300 ms p50 at 1M builds.

import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { sql } from 'kysely';
import { evaluate } from '../src/query/evaluate.js';
import { parseQuery } from '../src/query/index.js';
import type { CheckedExpr } from '../src/query/checked.js';
import { buildFacets, buildTrends, type Scope, type TrendOptions } from '../src/store/analytics/analytics.js';
import { openBuildStore } from '../src/store/build-store.js';
import { openDatabase } from '../src/db/database.js';
import { demoBuilds } from '../src/store/demo/demo-data.js';
import { SEE_EVERYTHING, type BuildWithAttributes } from '../src/store/types.js';
import { flag, option } from './support/args.js';
import { timed } from './support/timing.js';

const quick = flag('--quick');
const BUILDS = Number(option('--builds') ?? (flag('--million') ? 1_000_000 : quick ? 10_000 : 100_000));
const ITER = quick ? 5 : 15;
const NOW = Date.UTC(2026, 10, 1);
const DAY = 86_400_000;
const GOAL_MS = 300;
const log = (s: string): void => void process.stderr.write(`${s}\n`);

const keep = option('--sqlite-data');
const dir = keep ?? mkdtempSync(join(tmpdir(), 'bs-trends-bench-'));
if (keep) mkdirSync(keep, { recursive: true });
const handle = await openDatabase({ data: dir });
const store = await openBuildStore(handle, { postings: false });
const existing = Number((await sql<{ n: number }>`SELECT count(*) AS n FROM builds`.execute(handle.db)).rows[0]!.n);
if (existing !== BUILDS) {
  if (existing !== 0) throw new Error(`${dir} holds ${existing} builds, not ${BUILDS}; give another --sqlite-data directory`);
  log(`loading ${BUILDS} demo builds through the ingest (bulk)…`);
  const started = performance.now();
  async function* lines() {
    for (const l of demoBuilds({ builds: BUILDS, seed: 7, now: NOW })) yield l + '\n';
  }
  await store.ingestNdjson(lines(), { bulk: true, keepResults: false, onProgress: (n) => n % 100_000 === 0 && log(`  ${n} lines`) });
  log(`loaded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  await sql`ANALYZE`.execute(handle.db);
}
const tasks = Number((await sql<{ n: number }>`SELECT count(*) AS n FROM build_tasks`.execute(handle.db)).rows[0]!.n);

function checked(text: string): CheckedExpr {
  const r = parseQuery(text, { now: NOW });
  if (!r.ok || !r.expr) throw new Error(`bad query ${text}`);
  return r.expr;
}

const WHOLE = '';
const SELECTIVE = 'project:inventory buildOutcome:failed';
const range: TrendOptions = { from: NOW - 30 * DAY, to: NOW, interval: 'day', tz: 'UTC' };

interface Run {
  readonly name: string;
  readonly p50: number;
  readonly min: number;
  readonly max: number;
  readonly iterations: number;
}

async function measure(name: string, fn: () => Promise<unknown>, iterations = ITER): Promise<Run> {
  const run = { name, ...(await timed(fn, iterations)), iterations };
  log(`${name}: p50 ${run.p50} ms`);
  return run;
}

const scope = (q: string): Scope => ({ query: checked(q), visibility: SEE_EVERYTHING });
const runs: Run[] = [];
runs.push(await measure('count, whole data set', () => store.countBuilds(scope(WHOLE))));
runs.push(await measure(`count, ${SELECTIVE}`, () => store.countBuilds(scope(SELECTIVE))));
runs.push(await measure('trend 30 days, whole data set', () => buildTrends(handle, scope(WHOLE), range)));
runs.push(await measure(`trend 30 days, ${SELECTIVE}`, () => buildTrends(handle, scope(SELECTIVE), range)));
runs.push(await measure('rollups-free peer: trend 30 days from the builds, whole data set', () => buildTrends(handle, scope(WHOLE), range, { rollups: false }), BUILDS >= 500_000 ? 2 : 5));
runs.push(await measure(`rollups-free peer: trend 30 days from the builds, ${SELECTIVE}`, () => buildTrends(handle, scope(SELECTIVE), range, { rollups: false }), BUILDS >= 500_000 ? 3 : 5));
runs.push(await measure('facets, whole data set', () => buildFacets(handle, scope(WHOLE))));
runs.push(await measure(`facets, ${SELECTIVE}`, () => buildFacets(handle, scope(SELECTIVE))));
runs.push(await measure('rollups-free peer: facets from the builds, whole data set', () => buildFacets(handle, scope(WHOLE), 8, { rollups: false }), BUILDS >= 500_000 ? 3 : 5));
runs.push(await measure(`rollups-free peer: facets from the builds, ${SELECTIVE}`, () => buildFacets(handle, scope(SELECTIVE), 8, { rollups: false }), BUILDS >= 500_000 ? 3 : 5));

// The peer: read every build with its attributes and aggregate in TypeScript (count and outcome
// per day; it does not even compute percentiles or tasks). Few iterations: it is slow.
async function inMemory(q: string): Promise<number> {
  const expr = checked(q);
  const perDay = new Map<number, { ok: number; failed: number }>();
  let n = 0;
  for await (const b of store.streamBuilds({ visibility: SEE_EVERYTHING, withAttributes: true })) {
    const build = b as BuildWithAttributes;
    if (!evaluate(expr, build)) continue;
    n++;
    const t = build.attributes['buildStartTime'];
    if (typeof t !== 'number' || t < range.from || t >= range.to) continue;
    const d = Math.floor(t / DAY);
    const c = perDay.get(d) ?? { ok: 0, failed: 0 };
    if (build.attributes['buildOutcome'] === 'failed') c.failed++;
    else c.ok++;
    perDay.set(d, c);
  }
  return n;
}
if (BUILDS < 500_000 || flag('--in-memory-peer')) {
  const peerIterations = BUILDS >= 500_000 ? 1 : 3;
  runs.push(await measure('peer: in memory, whole data set', () => inMemory(WHOLE), peerIterations));
  runs.push(await measure(`peer: in memory, ${SELECTIVE}`, () => inMemory(SELECTIVE), peerIterations));
}

// The rollups answer exactly what the builds answer.
const identical =
  isDeepStrictEqual(await buildTrends(handle, scope(WHOLE), range), await buildTrends(handle, scope(WHOLE), range, { rollups: false })) &&
  isDeepStrictEqual(await buildTrends(handle, scope(SELECTIVE), range), await buildTrends(handle, scope(SELECTIVE), range, { rollups: false })) &&
  isDeepStrictEqual(await buildFacets(handle, scope(WHOLE)), await buildFacets(handle, scope(WHOLE), 8, { rollups: false })) &&
  isDeepStrictEqual(await buildFacets(handle, scope(SELECTIVE)), await buildFacets(handle, scope(SELECTIVE), 8, { rollups: false }));
log(`trends and facets from the rollups identical to those from the builds: ${identical}`);
if (!identical) process.exitCode = 1;

const goals = runs
  .filter((r) => !r.name.includes('peer'))
  .map((r) => ({ name: r.name, p50: r.p50, goalMs: GOAL_MS, met: r.p50 <= GOAL_MS }));
const trendWhole = runs.find((r) => r.name === 'trend 30 days, whole data set')!;

console.log(`\nTrends and counts on SQLite: ${BUILDS.toLocaleString('en-US')} builds, ${tasks.toLocaleString('en-US')} task rows, ${cpus().length} cores, ${process.version}`);
console.log('| measure | p50 ms | min ms | max ms | runs |');
console.log('|---|---:|---:|---:|---:|');
for (const r of runs) console.log(`| ${r.name} | ${r.p50} | ${r.min} | ${r.max} | ${r.iterations} |`);
const peerWhole = runs.find((r) => r.name === 'rollups-free peer: trend 30 days from the builds, whole data set')!;
const facetsWhole = runs.find((r) => r.name === 'facets, whole data set')!;
const facetsPeer = runs.find((r) => r.name === 'rollups-free peer: facets from the builds, whole data set')!;
console.log(`\nwhole-data-set facets ${facetsWhole.p50} ms from the rollups vs ${facetsPeer.p50} ms from the builds (${(facetsPeer.p50 / facetsWhole.p50).toFixed(1)}x)`);
console.log(`whole-data-set trend ${trendWhole.p50} ms from the rollups vs ${peerWhole.p50} ms from the builds (${(peerWhole.p50 / trendWhole.p50).toFixed(1)}x); goal ${GOAL_MS} ms p50: ${goals.map((g) => `${g.name} ${g.met ? 'met' : 'MISSED'}`).join('; ')}`);

mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/trends.json', JSON.stringify({ date: new Date().toISOString(), node: process.version, cores: cpus().length, builds: BUILDS, taskRows: tasks, runs, goals, rollupsIdenticalToBuilds: identical }, null, 2) + '\n');
await store.close();
await handle.close();
if (!keep && existsSync(dir)) rmSync(dir, { recursive: true, force: true });
