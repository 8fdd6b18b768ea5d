// The analytics corpus over HTTP, against a real server process (the compiled `serve`, as `npm
// start` runs it) over a store that already holds demo builds: for every query of the corpus of
// support/corpus.ts, the p50 of --iter runs (after one untimed run) of
//
// - the exact count, GET /api/search/count?query=…, and the facets, GET /api/search/facets?query=…;
// - the 30-day trends, GET /api/trends?query=…&from=…&to=…&interval=day&tz=UTC: daily, UTC, over
//   the 30 days before the latest build's start (the window analytics-corpus.ts times);
// - the first page of the builds list as the web app asks for it (web/src/list-page.ts):
//   GET /api/search/builds?query=…&limit=50, newest first. The web list has no other order (the
//   route takes no order parameter), so its oldest-first column stays empty;
// - the first page of the REST listing: newest first GET /api/builds?query=…&reverse=true&maxBuilds=100
//   (no start: the listing runs back from the newest build), oldest first
//   GET /api/builds?query=…&since=0&maxBuilds=100 (since=0: from the beginning; reverse has no
//   effect with since). A query without matches is not timed oldest first: that listing waits
//   for a new build (maxWaitSecs, 3 s by default) before it answers.
//
// Every answer's status is checked: anything but 200 makes the cell a failure (and the exit code
// 1), never a time. The pages are checked too: as many builds as the count allows, and the web
// list and the REST listing agree on the newest build.
//
// Peer of the same run: the empty query's count over HTTP (the rollups answer it from a few rows),
// the cheapest search-like request.
//
// Meanwhile an unrelated request (GET /health/live) is timed without pause from a process of its
// own (support/probe.ts): its latency idle (3 s before the load), during each kind of request and
// over the whole run; then once more while the corpus's facets and trends requests run 4 at a time
// (as guarded-analytics.ts runs its expensive ones).
//
//   node --import tsx bench/corpus-http.ts (--data DIR | --postgres-url URL) [--iter N] [--workers N]
//
// From the repository's root. The store is measured as it is: the bench loads no build and
// refuses a store without one (make it with `buildscope demo-data --builds 1000000 --seed 7 --now
// 1793491200000 --data DIR`, or --db URL). The one change it makes is an access key for the
// administrator, created with `buildscope access-key create` before the server starts and revoked
// after it stopped (a store whose first start this is gets the administrator and the key the
// server creates then). --workers N: server processes sharing the port (default 1).
//
// Timing starts once the analytics index (src/store/analytics/analytics-index.ts) has read every
// stored build: the server starts reading them in the background when it opens the store (about
// 30 s at 1M builds), and meanwhile counts, facets and trends read the database. The bench waits
// for the log line that ends that read, "The analytics index has read the stored builds" (or the
// warning that it could not), once from each server process; nothing else (metrics, health)
// tells. On a small store the read ends before the server listens, so the bench watches the log
// (the server's standard error) from its first line (startServer's onLog).
//
// Goals at 1M builds (the issue "Analytics for any query at a million builds"): count <= 50 ms,
// facets <= 300 ms, 30-day trends <= 300 ms, first pages (web and REST, both orders) <= 50 ms; the
// unrelated request never over 100 ms while the corpus requests run. Writes
// bench/results/corpus-http.json (corpus-http-postgres.json for PostgreSQL).

import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import { option } from './support/args.js';
import { startServer, type Server, type Where } from './support/compact-builds.js';
import { CORPUS } from './support/corpus.js';
import { startProbe, type Probe } from './support/probe.js';
import { timed } from './support/timing.js';

const here = dirname(fileURLToPath(import.meta.url));
const log = (s: string): void => void process.stderr.write(`${s}\n`);
function fail(message: string): never {
  process.stderr.write(`bench/corpus-http: ${message}\n`);
  process.exit(1);
}

const ITER = Number(option('--iter') ?? 3);
const WORKERS = Number(option('--workers') ?? 1);
if (!Number.isInteger(ITER) || ITER < 1) fail(`--iter must be a whole number from 1, got ${option('--iter')}`);
if (!Number.isInteger(WORKERS) || WORKERS < 1 || WORKERS > 64) fail(`--workers must be a whole number from 1 to 64, got ${option('--workers')}`);
const pgUrl = option('--postgres-url');
const data = pgUrl === undefined ? option('--data') : undefined;
if (pgUrl === undefined && data === undefined) fail('usage: node --import tsx bench/corpus-http.ts (--data DIR | --postgres-url URL) [--iter N] [--workers N]');
const where: Where = pgUrl !== undefined ? { url: pgUrl } : data!;
const storeArgs = pgUrl !== undefined ? ['--db', pgUrl] : ['--data', data!];
const database = pgUrl !== undefined ? 'PostgreSQL' : 'SQLite';

const GOALS = { count: 50, facets: 300, trends: 300, page: 50, unrelatedMax: 100 };
const DAY = 86_400_000;
const INDEX_READ = 'The analytics index has read the stored builds';
const INDEX_FAILED = 'The analytics index could not read the stored builds';
// Not a pause: how long the bench waits for the index before it gives up (at 1M on a busy
// machine the read takes minutes at worst).
const INDEX_WAIT_MS = 30 * 60_000;


// The store as it is, before anything else touches it: its builds, and the trends window.
let builds: number;
let latestStart: number;
{
  const handle = await openDatabase({ ...(pgUrl !== undefined ? { url: pgUrl } : { data: data! }), mustExist: true }).catch((e: unknown) => fail((e as Error).message));
  try {
    builds = Number((await sql<{ n: number }>`SELECT count(*) AS n FROM builds WHERE seq IS NOT NULL`.execute(handle.db)).rows[0]!.n);
    // As analytics-corpus.ts: daily UTC trends of the 30 days before the latest build's start.
    latestStart = Number((await sql<{ t: number }>`SELECT max(buildstarttime) AS t FROM builds`.execute(handle.db)).rows[0]!.t);
  } catch (e) {
    fail(`${handle.describe} holds no builds (${(e as Error).message})`);
  } finally {
    await handle.close();
  }
}
if (builds === 0) fail(`${pgUrl ?? data} holds no build: store demo builds first (buildscope demo-data --builds N --seed 7 --now 1793491200000 ${storeArgs.join(' ')})`);
const TREND = { from: latestStart + 1 - 30 * DAY, to: latestStart + 1 };
log(`${builds.toLocaleString('en-US')} builds in ${pgUrl ?? data} (${database})`);

// The server as `npm start` runs it: the compiled dist/.
execFileSync(process.execPath, ['scripts/build.js'], { stdio: ['ignore', 'ignore', 'inherit'] });

/** An access key for the administrator, or undefined when the store has no administrator yet (its first start creates one). */
function createKey(): string | undefined {
  try {
    return execFileSync(process.execPath, ['bin/buildscope.js', 'access-key', 'create', 'admin', ...storeArgs, '--expires-in-days', '1'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (e) {
    const said = String((e as { stderr?: unknown }).stderr ?? '').trim();
    if (/No user 'admin'/.test(said)) return undefined;
    return fail(`access-key create: ${said.split('\n')[0] || (e as Error).message}`);
  }
}

function revokeKey(key: string): void {
  try {
    execFileSync(process.execPath, ['bin/buildscope.js', 'access-key', 'revoke', key, ...storeArgs], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    log(`could not revoke the bench's access key: ${String((e as { stderr?: unknown }).stderr ?? (e as Error).message).trim()}`);
  }
}

/** What the server processes' logs said: the index's read, per process, and the warnings and errors. */
interface ServerLog {
  readonly indexes: Map<number, { builds: number; ms: number; read: boolean }>;
  readonly problems: string[];
  /** Resolves once every server process but `primary` (the one spawned, with several workers) has read the stored builds into its index (or failed to). */
  indexesReady(primary: number | undefined): Promise<void>;
}

/** startServer, with the server's log watched from its first line (the index's read can end before the server listens). */
function startWatched(): { started: Promise<Server>; serverLog: ServerLog } {
  const indexes = new Map<number, { builds: number; ms: number; read: boolean }>();
  const problems: string[] = [];
  let changed: () => void = () => undefined;
  const onLog = (line: string) => {
    let entry: { msg?: string; level?: number; pid?: number; builds?: number; ms?: number };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      return;
    }
    if ((entry.level ?? 0) >= 40) problems.push(line);
    if (entry.msg === INDEX_READ || entry.msg?.startsWith(INDEX_FAILED)) {
      indexes.set(entry.pid ?? 0, { builds: entry.builds ?? 0, ms: entry.ms ?? 0, read: entry.msg === INDEX_READ });
      changed();
    }
  };
  const started = startServer(where, WORKERS, [], onLog);
  const indexesReady = (primary: number | undefined) =>
    new Promise<void>((resolve) => {
      // With several workers the primary opens the store once too (first-start work) and closes it.
      const done = () => [...indexes.keys()].filter((pid) => WORKERS === 1 || pid !== primary).length >= WORKERS;
      if (done()) return resolve();
      changed = () => void (done() && resolve());
    });
  return { started, serverLog: { indexes, problems, indexesReady } };
}

const quantile = (xs: readonly number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};
const stats = (xs: readonly number[]) => ({ samples: xs.length, p50: +quantile(xs, 0.5).toFixed(1), p99: +quantile(xs, 0.99).toFixed(1), max: xs.length === 0 ? Number.NaN : +Math.max(...xs).toFixed(1) });

class HttpStatus extends Error {
  constructor(readonly status: number, body: string) {
    super(`HTTP ${status}: ${body.slice(0, 200)}`);
  }
}

const KINDS = ['count', 'peer', 'facets', 'trends', 'webNewest', 'restNewest', 'restOldest'] as const;
type Kind = (typeof KINDS)[number];
const KIND_LABELS: Record<Kind, string> = {
  count: 'count',
  peer: 'peer: empty query count',
  facets: 'facets',
  trends: '30-day trends',
  webNewest: 'web first page, newest first',
  restNewest: 'REST first page, newest first',
  restOldest: 'REST first page, oldest first',
};

/** A cell: the p50 in ms, or the status that ended the request (then not timed), or not asked. */
type Cell = { ms: number; first: number } | { status: number; detail: string } | { skipped: string };

interface Row {
  query: string;
  matches: number | undefined;
  cells: Record<Kind, Cell>;
  /** Problems with the answers (not their times). */
  checks: string[];
}

async function main(): Promise<void> {
  const cliKey = createKey();
  const { started, serverLog } = startWatched();
  let server: Server | undefined;
  let prober: Probe | undefined;
  try {
    server = await started;
    const { child, url: base } = server;
    const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`the server exited (${code})`))));
    exited.catch(() => undefined);
    const key = cliKey ?? server.key;
    if (key === undefined) throw new Error('no access key: the store has an administrator but `access-key create admin` gave none');
    const auth = { authorization: `Bearer ${key}` };

    log(`server at ${base}; waiting for the analytics index of ${WORKERS === 1 ? 'the server' : `each of the ${WORKERS} server processes`}…`);
    const waitStarted = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the analytics index did not report its read within ${INDEX_WAIT_MS / 60_000} min`)), INDEX_WAIT_MS)));
    await Promise.race([serverLog.indexesReady(child.pid), exited, gaveUp]).finally(() => clearTimeout(timer));
    for (const [pid, r] of serverLog.indexes) {
      log(`pid ${pid}: ${r.read ? `the analytics index read ${r.builds.toLocaleString('en-US')} builds in ${r.ms.toLocaleString('en-US')} ms` : 'the analytics index could not read the stored builds: counts, facets and trends read the database'}`);
    }
    const indexWaitMs = Math.round(performance.now() - waitStarted);

    prober = startProbe(`${base}/health/live`);
    const probe = prober;
    const idle = await probe.during(new Promise((r) => setTimeout(r, 3000)));

    const url = (path: string, params: Record<string, string | number>) => `${base}${path}?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]))}`;
    const urls = (query: string): Record<Kind, string> => ({
      count: url('/api/search/count', { query }),
      peer: url('/api/search/count', { query: '' }),
      facets: url('/api/search/facets', { query }),
      trends: url('/api/trends', { query, from: TREND.from, to: TREND.to, interval: 'day', tz: 'UTC' }),
      // As web/src/api.ts asks for the list page (PAGE_SIZE 50 of web/src/list-page.ts).
      webNewest: url('/api/search/builds', { query, limit: 50 }),
      restNewest: url('/api/builds', { query, reverse: 'true', maxBuilds: 100 }),
      restOldest: url('/api/builds', { query, since: 0, maxBuilds: 100 }),
    });

    const during: Record<Kind, number[]> = { count: [], peer: [], facets: [], trends: [], webNewest: [], restNewest: [], restOldest: [] };
    /** The p50 of ITER runs after an untimed one, each answer checked 200; the last answer's body. */
    async function measure(kind: Kind, target: string): Promise<{ cell: Cell; body?: unknown }> {
      let body = '';
      const run = timed(async () => {
        const r = await fetch(target, { headers: auth });
        const text = await r.text();
        if (r.status !== 200) throw new HttpStatus(r.status, text);
        body = text;
      }, ITER);
      const samples = probe.during(run);
      try {
        const t = await run;
        return { cell: { ms: t.p50, first: t.first }, body: JSON.parse(body) as unknown };
      } catch (e) {
        if (e instanceof HttpStatus) return { cell: { status: e.status, detail: e.message } };
        throw e;
      } finally {
        during[kind].push(...(await samples));
      }
    }

    const rows: Row[] = [];
    const load = (async () => {
      for (const query of CORPUS) {
        const u = urls(query);
        const cells = {} as Record<Kind, Cell>;
        const bodies = {} as Record<Kind, unknown>;
        for (const kind of KINDS) {
          if (kind === 'restOldest' && (bodies.count as { count?: number } | undefined)?.count === 0) {
            cells[kind] = { skipped: 'no match: the listing waits for a new build' };
            continue;
          }
          const { cell, body } = await measure(kind, u[kind]);
          cells[kind] = cell;
          bodies[kind] = body;
        }
        const matches = (bodies.count as { count?: number } | undefined)?.count;
        const checks: string[] = [];
        const web = (bodies.webNewest as { builds?: { id: string }[] } | undefined)?.builds;
        const newest = bodies.restNewest as { id: string }[] | undefined;
        const oldest = bodies.restOldest as { id: string }[] | undefined;
        if (matches !== undefined) {
          if (web !== undefined && web.length !== Math.min(50, matches)) checks.push(`web page: ${web.length} builds of ${matches} matches`);
          if (newest !== undefined && newest.length !== Math.min(100, matches)) checks.push(`REST newest first: ${newest.length} builds of ${matches} matches`);
          if (oldest !== undefined && oldest.length !== Math.min(100, matches)) checks.push(`REST oldest first: ${oldest.length} builds of ${matches} matches`);
        }
        if (web?.[0] !== undefined && newest?.[0] !== undefined && web[0].id !== newest[0].id) checks.push(`newest build: web ${web[0].id}, REST ${newest[0].id}`);
        if (matches !== undefined && matches > 1 && newest?.[0] !== undefined && oldest?.[0] !== undefined && newest[0].id === oldest[0].id) checks.push('REST newest and oldest first start with the same build');
        const row: Row = { query, matches, cells, checks };
        log(`${query}: ${JSON.stringify(row)}`);
        rows.push(row);
      }
    })();
    const overall = await probe.during(load);
    await load;

    // The corpus's facets and trends requests, 4 at a time.
    const heavy = CORPUS.flatMap((q) => [urls(q).facets, urls(q).trends]);
    const answers: { status: number; ms: number }[] = [];
    let next = 0;
    const concurrentStarted = performance.now();
    const four = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < heavy.length) {
          const target = heavy[next++]!;
          const t = performance.now();
          const r = await fetch(target, { headers: auth });
          await r.arrayBuffer();
          answers.push({ status: r.status, ms: performance.now() - t });
        }
      }),
    );
    const [, concurrentSamples] = await Promise.all([four, probe.during(four)]);
    const concurrent = {
      requests: answers.length,
      failures: answers.filter((a) => a.status !== 200).length,
      statuses: [...new Set(answers.map((a) => a.status))].sort(),
      wallMs: Math.round(performance.now() - concurrentStarted),
      slowestMs: Math.round(Math.max(...answers.map((a) => a.ms))),
      probe: stats(concurrentSamples),
    };

    report({ rows, idle, during, overall, concurrent, indexWaitMs, serverLog });
  } finally {
    prober?.stop();
    const child = server?.child;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    // The key this run created; a key the server created at its first start stays the administrator's.
    if (cliKey !== undefined) revokeKey(cliKey);
  }
}

function report(r: {
  rows: Row[];
  idle: number[];
  during: Record<Kind, number[]>;
  overall: number[];
  concurrent: { requests: number; failures: number; statuses: number[]; wallMs: number; slowestMs: number; probe: ReturnType<typeof stats> };
  indexWaitMs: number;
  serverLog: ServerLog;
}): void {
  const { rows, concurrent } = r;
  const ms = (t: number) => `${t.toLocaleString('en-US')} ms`;
  const cell = (c: Cell | undefined, goal: number | undefined): string => {
    if (c === undefined) return 'n/a';
    if ('skipped' in c) return 'n/a';
    if ('status' in c) return `HTTP ${c.status} ✗`;
    return `${ms(c.ms)}${goal !== undefined && c.ms > goal ? ' ✗' : ''}`;
  };
  const failures = rows.flatMap((row) => KINDS.flatMap((k) => (('status' in row.cells[k]) ? [`${row.query}, ${KIND_LABELS[k]}: ${(row.cells[k] as { detail: string }).detail}`] : [])));
  const checks = rows.flatMap((row) => row.checks.map((c) => `${row.query}: ${c}`));
  const skipped = rows.flatMap((row) => KINDS.flatMap((k) => (('skipped' in row.cells[k]) ? [`${row.query}, ${KIND_LABELS[k]}: ${(row.cells[k] as { skipped: string }).skipped}`] : [])));

  const table = [
    `| ${builds.toLocaleString('en-US')} builds, ${database}, HTTP, p50 of ${ITER} | matches | peer: empty query count | count | facets | 30-day trends | web, newest first | web, oldest first | REST, newest first | REST, oldest first |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (row) =>
        `| \`${row.query}\` | ${row.matches?.toLocaleString('en-US') ?? '-'} | ${cell(row.cells.peer, undefined)} | ${cell(row.cells.count, GOALS.count)} | ${cell(row.cells.facets, GOALS.facets)} | ${cell(row.cells.trends, GOALS.trends)} | ${cell(row.cells.webNewest, GOALS.page)} | n/a | ${cell(row.cells.restNewest, GOALS.page)} | ${cell(row.cells.restOldest, GOALS.page)} |`,
    ),
  ].join('\n');

  // The first request of each (not timed above): a term the server has not read since it started.
  const first = (c: Cell | undefined): string => (c !== undefined && 'first' in c ? ms(c.first) : 'n/a');
  const firstTable = [
    '| first request of each (not in the p50) | count | facets | 30-day trends | web, newest first | REST, newest first | REST, oldest first |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map((row) => `| \`${row.query}\` | ${first(row.cells.count)} | ${first(row.cells.facets)} | ${first(row.cells.trends)} | ${first(row.cells.webNewest)} | ${first(row.cells.restNewest)} | ${first(row.cells.restOldest)} |`),
  ].join('\n');
  const f = (x: number) => (Number.isNaN(x) ? '-' : `${x.toFixed(1)} ms`);
  const probeRow = (label: string, s: ReturnType<typeof stats>, goal: boolean) =>
    `| ${label} | ${s.samples} | ${f(s.p50)} | ${f(s.p99)} | ${f(s.max)}${goal && s.max > GOALS.unrelatedMax ? ' ✗' : ''} |`;
  const probeTable = [
    '| GET /health/live (a process of its own) | samples | p50 | p99 | max |',
    '|---|---:|---:|---:|---:|',
    probeRow('idle, 3 s before the load', stats(r.idle), false),
    ...KINDS.map((k) => probeRow(`during ${KIND_LABELS[k]}`, stats(r.during[k]), true)),
    probeRow('during all the corpus requests, one at a time', stats(r.overall), true),
    probeRow(`during the facets and trends, 4 at a time (${concurrent.requests} requests)`, concurrent.probe, true),
  ].join('\n');

  const unrelatedMax = Math.max(stats(r.overall).max, concurrent.probe.max);
  process.stdout.write(
    `${table}\n\n(✗: over the goal at 1M builds: count ${GOALS.count} ms, facets ${GOALS.facets} ms, 30-day trends ${GOALS.trends} ms, first page ${GOALS.page} ms; n/a: the web list has no oldest-first order${skipped.length > 0 ? ', and an oldest-first REST listing without matches waits for a new build' : ''})\n\n` +
      `${firstTable}\n\n${probeTable}\n\n(✗: over the goal of ${GOALS.unrelatedMax} ms while the corpus requests run)\n` +
      `Facets and trends 4 at a time: ${concurrent.requests} requests in ${ms(concurrent.wallMs)}, the slowest ${ms(concurrent.slowestMs)}, statuses ${concurrent.statuses.join(', ')}.\n` +
      `Unrelated request's max while the corpus requests ran: ${f(unrelatedMax)} (goal ${GOALS.unrelatedMax} ms: ${unrelatedMax <= GOALS.unrelatedMax ? 'met' : 'NOT met'}).\n` +
      `The bench waited ${ms(r.indexWaitMs)} for the analytics index after the server listened.\n`,
  );
  for (const x of failures) log(`failed: ${x}`);
  for (const x of checks) log(`answer check: ${x}`);
  if (concurrent.failures > 0) log(`failed: ${concurrent.failures} of the ${concurrent.requests} facets and trends requests run 4 at a time (statuses ${concurrent.statuses.join(', ')})`);
  if (r.serverLog.problems.length > 0) log(`the server logged ${r.serverLog.problems.length} warnings or errors, the first: ${r.serverLog.problems.slice(0, 3).join('\n')}`);
  if (failures.length > 0 || checks.length > 0 || concurrent.failures > 0) process.exitCode = 1;

  const out = join(here, 'results', `corpus-http${pgUrl !== undefined ? '-postgres' : ''}.json`);
  mkdirSync(dirname(out), { recursive: true });
  const json = {
    when: new Date().toISOString(),
    database,
    builds,
    iterations: ITER,
    workers: WORKERS,
    trend: { ...TREND, interval: 'day', tz: 'UTC' },
    goalsMs: GOALS,
    index: { waitMs: r.indexWaitMs, processes: [...r.serverLog.indexes.values()] },
    rows: rows.map((row) => ({ query: row.query, matches: row.matches, ...Object.fromEntries(KINDS.map((k) => [k, row.cells[k]])), checks: row.checks })),
    probe: {
      idle: stats(r.idle),
      ...Object.fromEntries(KINDS.map((k) => [k, stats(r.during[k])])),
      overall: stats(r.overall),
      concurrent: concurrent.probe,
    },
    concurrent: { requests: concurrent.requests, failures: concurrent.failures, statuses: concurrent.statuses, wallMs: concurrent.wallMs, slowestMs: concurrent.slowestMs },
    unrelatedMaxMs: unrelatedMax,
    failures,
    checks,
  };
  writeFileSync(out, JSON.stringify(json, null, 2) + '\n');
  log(`wrote ${out}`);
}

await main().catch((e: unknown) => fail((e as Error).message));
