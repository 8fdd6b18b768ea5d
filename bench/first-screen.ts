// The builds list's first screen in headless Chromium: `buildscope serve --data DIR` (the compiled
// command, as `npm start` runs it) on a SQLite data directory, signed in with an access key, and
// the p50 over several loads of the time from the start of the navigation until the page shows
// the exact count, the facets and the first page of builds (the `page-ready` performance mark
// web/src/main.ts sets when a page's first screen is complete), for the whole data set
// (`/builds`) and a selective query.
//
// Peer of the same run: the same pages with the facets computed from the builds. The page's
// facets request is rewritten in the browser (page.route) to the same query with `buildTool:*`
// added: every build has a build tool, so it matches the same builds (checked: same count, same
// facets), but it is not a query the rollups answer, so the facets take the direct path. The
// listing and the count requests are untouched.
//
// It also times every request of the first screen (session, listing, count, facets, bundle ...)
// by its path, and the value completion the query editor asks for while typing, so anything else
// slow at scale shows up.
//
//   node --import tsx bench/first-screen.ts [--data DIR] [--builds N] [--runs N]
//
// --data DIR: an existing data directory (e.g. made once with `buildscope demo-data --builds
// 1000000 --seed 7 --now 1793491200000 --data DIR`); an access key for the administrator is
// created in it for the run. Without it, --builds N (default 20,000; 2,000 with --quick) demo
// builds are stored into a temporary directory first. Writes bench/results/first-screen.json.
// Goal (issue 17): under 1 s at 1M builds.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { serve } from '../test/support/serve-cli.js';
import { flag, option } from './support/args.js';

const quick = flag('--quick');
const RUNS = Number(option('--runs') ?? (quick ? 3 : 7));
const GOAL_MS = 1000;
const CLI = ['bin/buildscope.js'];
const log = (s: string): void => void process.stderr.write(`${s}\n`);

const given = option('--data');
const dir = given ?? mkdtempSync(join(tmpdir(), 'bs-first-screen-'));
if (given === undefined) {
  const builds = Number(option('--builds') ?? (quick ? 2_000 : 20_000));
  log(`storing ${builds} demo builds into ${dir}…`);
  execFileSync(process.execPath, [...CLI, 'demo-data', '--builds', String(builds), '--seed', '7', '--now', '1793491200000', '--data', dir], { stdio: 'inherit' });
}

// The server (its start includes the migrations a database made by older code needs).
log(`starting buildscope serve --data ${dir}…`);
const started = performance.now();
const server = await serve(['--data', dir], { cli: CLI });
// Never leave the server behind, whatever fails below.
process.on('exit', () => server.child.kill('SIGTERM'));
const { url: base, lines } = server;
const startMs = performance.now() - started;
log(`server up in ${(startMs / 1000).toFixed(1)} s at ${base}`);
const createdKey = /access key (bsk\S+) /.exec(lines.find((l) => l.startsWith('Created user')) ?? '')?.[1];
const accessKey = createdKey ?? execFileSync(process.execPath, [...CLI, 'access-key', 'create', 'admin', '--data', dir, '--expires-in-days', '1'], { encoding: 'utf8' }).trim();

const profile = mkdtempSync(join(tmpdir(), 'bs-first-screen-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1400, height: 1000 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const page = context.pages()[0] ?? (await context.newPage());
const errors: string[] = [];
page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));

// Sign in with the access key, as a person would.
await page.goto(`${base}/builds`);
await page.waitForURL(/\/signin/);
await page.fill('#access-key', accessKey);
await page.press('#access-key', 'Enter');
await page.waitForURL(/\/builds/);
await page.waitForFunction(() => document.body.dataset['ready'] === 'true', undefined, { timeout: 600_000 });

const SELECTIVE = 'project:inventory buildOutcome:failed';
const PEER_TERM = 'buildTool:*';

/** Per request path: the time from the request's start to the end of its response (ms). */
const requestTimes = new Map<string, number[]>();

/** One load of the list page; ms from the navigation's start to the `page-ready` mark. */
async function load(p: Page, query: string, facetsDirect: boolean): Promise<number> {
  const handler = async (route: Parameters<Parameters<Page['route']>[1]>[0]) => {
    const url = new URL(route.request().url());
    const q = url.searchParams.get('query') ?? '';
    url.searchParams.set('query', q.trim() === '' ? PEER_TERM : `${q} ${PEER_TERM}`);
    await route.continue({ url: url.toString() });
  };
  if (facetsDirect) await p.route('**/api/search/facets?*', handler);
  const onFinished = (r: import('playwright-core').Request) => {
    const t = r.timing();
    const path = new URL(r.url()).pathname;
    if (t.responseEnd < 0) return;
    const list = requestTimes.get(`${facetsDirect ? 'peer ' : ''}${path}`) ?? [];
    list.push(t.responseEnd);
    requestTimes.set(`${facetsDirect ? 'peer ' : ''}${path}`, list);
  };
  p.on('requestfinished', onFinished);
  try {
    await p.goto(`${base}/builds${query === '' ? '' : `?query=${encodeURIComponent(query)}`}`);
    await p.waitForFunction(() => performance.getEntriesByName('page-ready').length > 0, undefined, { timeout: 600_000, polling: 50 });
    const ms = await p.evaluate(() => performance.getEntriesByName('page-ready')[0]!.startTime);
    // What the screen shows: a count, the five facets' values, the first page of builds.
    const shown = await p.evaluate(() => ({
      count: document.querySelector('#match-count')?.textContent ?? '',
      facets: document.querySelectorAll('[data-facet]').length,
      rows: document.querySelectorAll('#builds-table tbody tr[data-build-id]').length,
    }));
    if (!/\d/.test(shown.count) || shown.facets === 0 || shown.rows === 0) throw new Error(`incomplete first screen: ${JSON.stringify(shown)}`);
    return ms;
  } finally {
    p.off('requestfinished', onFinished);
    if (facetsDirect) await p.unroute('**/api/search/facets?*', handler);
  }
}

interface Run {
  readonly name: string;
  readonly p50: number;
  readonly min: number;
  readonly max: number;
  readonly runs: number;
}
const p50Of = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
async function measure(name: string, query: string, facetsDirect: boolean, runs = RUNS): Promise<Run> {
  await load(page, query, facetsDirect); // warm: the bundle in the browser's cache, the pages in SQLite's
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(await load(page, query, facetsDirect));
  const run = { name, p50: +p50Of(times).toFixed(0), min: +Math.min(...times).toFixed(0), max: +Math.max(...times).toFixed(0), runs };
  log(`${name}: p50 ${run.p50} ms (${times.map((t) => t.toFixed(0)).join(', ')})`);
  return run;
}

// The peer's query matches the same builds with the same facets.
const api = async (path: string, query: string): Promise<unknown> => (await page.request.get(`${base}${path}?query=${encodeURIComponent(query)}`)).json();
for (const q of ['', SELECTIVE]) {
  const peer = q === '' ? PEER_TERM : `${q} ${PEER_TERM}`;
  const same = JSON.stringify([await api('/api/search/count', q), await api('/api/search/facets', q)]) === JSON.stringify([await api('/api/search/count', peer), await api('/api/search/facets', peer)]);
  if (!same) throw new Error(`'${peer}' does not match the builds of '${q}': not a fair peer`);
}
const count = ((await api('/api/search/count', '')) as { count: number }).count;

const runs: Run[] = [];
runs.push(await measure('first screen, /builds (whole data set)', '', false));
runs.push(await measure(`first screen, ${SELECTIVE}`, SELECTIVE, false));
const peerRuns = Math.max(2, Math.ceil(RUNS / 2));
runs.push(await measure('peer: facets from the builds, /builds (whole data set)', '', true, peerRuns));
runs.push(await measure(`peer: facets from the builds, ${SELECTIVE}`, SELECTIVE, true, peerRuns));

// Completion of values in the query editor (GET /api/search/values, asked while typing a value,
// not at load): timed here too, so every request of the page's first use is covered.
const completion: { request: string; p50: number; max: number; requests: number }[] = [];
// (buildTool and buildOutcome complete from the catalog's fixed values, without a request.)
for (const field of ['project', 'user', 'tag', 'hostname', 'requested']) {
  for (const prefix of ['', 'a']) {
    const times: number[] = [];
    for (let i = 0; i < 4; i++) {
      const t = performance.now();
      const res = await page.request.get(`${base}/api/search/values?${new URLSearchParams({ field, prefix, limit: '12' })}`);
      if (!res.ok()) throw new Error(`values of ${field}: ${res.status()}`);
      await res.body();
      if (i > 0) times.push(performance.now() - t);
    }
    completion.push({ request: `/api/search/values field=${field} prefix='${prefix}'`, p50: +p50Of(times).toFixed(0), max: +Math.max(...times).toFixed(0), requests: times.length });
  }
}

const requests = [...requestTimes]
  .map(([path, times]) => ({ path, p50: +p50Of(times).toFixed(0), max: +Math.max(...times).toFixed(0), requests: times.length }))
  .sort((a, b) => b.p50 - a.p50);

await context.close();
rmSync(profile, { recursive: true, force: true });
await server.stop();
if (given === undefined) rmSync(dir, { recursive: true, force: true });

const goals = runs.filter((r) => !r.name.startsWith('peer')).map((r) => ({ name: r.name, p50: r.p50, goalMs: GOAL_MS, met: r.p50 < GOAL_MS }));
console.log(`\nThe builds list's first screen in headless Chromium: ${count.toLocaleString('en-US')} builds (SQLite), ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)}, ${process.version}; server start ${(startMs / 1000).toFixed(1)} s`);
console.log('| measure | p50 ms | min ms | max ms | loads |');
console.log('|---|---:|---:|---:|---:|');
for (const r of runs) console.log(`| ${r.name} | ${r.p50} | ${r.min} | ${r.max} | ${r.runs} |`);
console.log('\nRequests of those loads (start to end of response):');
console.log('| request | p50 ms | max ms | requests |');
console.log('|---|---:|---:|---:|');
for (const r of requests) console.log(`| ${r.path} | ${r.p50} | ${r.max} | ${r.requests} |`);
for (const r of completion) console.log(`| ${r.request} | ${r.p50} | ${r.max} | ${r.requests} |`);
const ratio = (a: Run, b: Run) => (b.p50 / a.p50).toFixed(1);
console.log(`\nfacets from the rollups vs from the builds: whole data set ${ratio(runs[0]!, runs[2]!)}x, ${SELECTIVE} ${ratio(runs[1]!, runs[3]!)}x; goal under ${GOAL_MS} ms: ${goals.map((g) => `${g.name} ${g.met ? 'met' : 'MISSED'}`).join('; ')}`);
if (errors.length > 0) log(`console errors: ${errors.join(' | ')}`);

mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/first-screen.json',
  JSON.stringify({ date: new Date().toISOString(), node: process.version, cores: cpus().length, loadAverage: loadavg()[0], builds: count, serverStartMs: Math.round(startMs), runs, requests, completion, goals, consoleErrors: errors }, null, 2) + '\n',
);
