// What an expensive search costs everyone else: the latency of an unrelated request
// (`GET /api/builds?maxBuilds=1`, no query) on a real server over HTTP, alone and while clients
// keep sending the most expensive query the complexity limits allow. Peer: the same SQLite server
// running searches in its own thread (searchThreads 0), as before search threads existed.
// PostgreSQL (started here when its binaries are found) runs with its statement timeout.
//
//   node --import tsx bench/query-cost.ts [--quick] [--builds N] [--seconds S] [--clients C]
//
// Prints a table and writes bench/results/query-cost.json.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { openBuildStore } from '../src/store/build-store.js';
import { demoBuilds } from '../src/store/demo/demo-data.js';
import { buildApp } from '../src/http/app.js';
import { openAuth } from '../src/auth/index.js';
import { createLogger } from '../src/log.js';
import { DEFAULT_QUERY_LIMITS, parseQuery } from '../src/query/index.js';
import { findPostgresBin, startPostgres, type RunningPostgres } from '../test/support/postgres-server.js';

const argv = process.argv.slice(2);
const opt = (name: string, dflt: number): number => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const quick = argv.includes('--quick');
const BUILDS = opt('builds', quick ? 3000 : 20_000);
const SECONDS = opt('seconds', quick ? 4 : 10);
const CLIENTS = opt('clients', 4);
const TIMEOUT_MS = 5000;
const log = (s: string) => process.stderr.write(`${s}\n`);

// The most expensive shape within the limits: every term negated (a probe per build visited),
// the wildcards without a literal prefix, over every build (maxBuilds=1000 pages).
const { maxTerms, maxUnanchoredWildcards } = DEFAULT_QUERY_LIMITS;
const EXPENSIVE = [
  ...Array.from({ length: maxUnanchoredWildcards }, (_, i) => `-requested:*${'aeiou'[i % 5]}${i}*`),
  ...Array.from({ length: maxTerms - maxUnanchoredWildcards }, (_, i) => `-tag:t${i}`),
].join(' ');
if (!parseQuery(EXPENSIVE).ok) throw new Error('the expensive query is over the limits');

interface Row {
  readonly server: string;
  readonly aloneP50: number;
  readonly aloneP99: number;
  readonly busyP50: number;
  readonly busyP99: number;
  readonly busyMax: number;
  readonly expensive: number;
  readonly expensiveP50: number;
  readonly statuses: Record<string, number>;
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const round = (x: number) => Math.round(x * 10) / 10;

async function timed(url: string, auth: string): Promise<{ ms: number; status: number }> {
  const t = performance.now();
  const r = await fetch(url, { headers: { authorization: auth } });
  await r.arrayBuffer();
  return { ms: performance.now() - t, status: r.status };
}

async function measure(server: string, location: { data?: string; url?: string }, searchThreads: number): Promise<Row> {
  const config = parseConfig({ server: { host: '127.0.0.1', port: 0 }, database: location, limits: { searchTimeoutMs: TIMEOUT_MS } });
  const database = await openDatabase(config.database);
  const store = await openBuildStore(database, { searchThreads, searchTimeoutMs: TIMEOUT_MS });
  const logger = createLogger('bench', 'silent');
  const app = await buildApp({ config, database, store, logger }, { plugins: [] });
  const auth = await openAuth(database, config);
  const name = `bench${Date.now()}`;
  await auth.users.addUser({ name, password: `${name}-password`, permissions: ['accessBuildDataViaApi'], projects: null });
  const { key } = await auth.users.createAccessKey(name, { expiresAt: Date.now() + 86_400_000 });
  const bearer = `Bearer ${key}`;
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const unrelated = `${base}/api/builds?since=0&maxBuilds=1`;
  const expensive = `${base}/api/builds?since=0&maxBuilds=1000&query=${encodeURIComponent(EXPENSIVE)}`;
  try {
    for (let i = 0; i < 10; i++) await timed(unrelated, bearer);
    const alone: number[] = [];
    for (let i = 0; i < 60; i++) alone.push((await timed(unrelated, bearer)).ms);
    const until = Date.now() + SECONDS * 1000;
    const expensiveMs: number[] = [];
    const statuses: Record<string, number> = {};
    const clients = Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < until) {
        const r = await timed(expensive, bearer);
        expensiveMs.push(r.ms);
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      }
    });
    const busy: number[] = [];
    // Let the expensive requests start, then ask the unrelated one every 50 ms.
    await new Promise((r) => setTimeout(r, 200));
    while (Date.now() < until) {
      busy.push((await timed(unrelated, bearer)).ms);
      await new Promise((r) => setTimeout(r, 50));
    }
    await Promise.all(clients);
    return {
      server,
      aloneP50: round(pct(alone, 50)),
      aloneP99: round(pct(alone, 99)),
      busyP50: round(pct(busy, 50)),
      busyP99: round(pct(busy, 99)),
      busyMax: round(Math.max(...busy)),
      expensive: expensiveMs.length,
      expensiveP50: round(pct(expensiveMs, 50)),
      statuses,
    };
  } finally {
    await app.close();
    await store.close();
    await database.close();
  }
}

/** What a search thread costs a cheap search: p50 of a page of typical queries through the store, threads vs the caller's thread. */
const TYPICAL = ['buildOutcome:failed', 'tag:ci -user:ci', 'requested:*test*', 'project:billing buildDuration>1m'];
interface Overhead {
  readonly query: string;
  readonly threadsP50: number;
  readonly inThreadP50: number;
}

async function overhead(location: { data?: string }): Promise<Overhead[]> {
  const database = await openDatabase(location);
  const threaded = await openBuildStore(database, { searchThreads: 2 });
  const inThread = await openBuildStore(database, { searchThreads: 0 });
  const out: Overhead[] = [];
  try {
    for (const text of TYPICAL) {
      const query = parseQuery(text).expr!;
      const page = { query, visibility: { projects: 'all', withoutProject: true } as const, maxBuilds: 100, reverse: true };
      const p50 = async (store: typeof threaded): Promise<number> => {
        for (let i = 0; i < 5; i++) await store.listBuilds(page);
        const ms: number[] = [];
        for (let i = 0; i < 40; i++) {
          const t = performance.now();
          await store.listBuilds(page);
          ms.push(performance.now() - t);
        }
        return Math.round(pct(ms, 50) * 100) / 100;
      };
      out.push({ query: text, threadsP50: await p50(threaded), inThreadP50: await p50(inThread) });
    }
  } finally {
    await threaded.close();
    await inThread.close();
    await database.close();
  }
  return out;
}

async function load(location: { data?: string; url?: string }): Promise<void> {
  const database = await openDatabase(location);
  const store = await openBuildStore(database);
  const lines = [...demoBuilds({ builds: BUILDS, seed: 21, now: Date.now() })];
  for (let i = 0; i < lines.length; i += 2000) await store.ingestNdjson(lines.slice(i, i + 2000).join('\n'));
  await store.close();
  await database.close();
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  let costs: Overhead[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'bench-query-cost-'));
  let pg: RunningPostgres | undefined;
  try {
    log(`loading ${BUILDS} demo builds into SQLite`);
    await load({ data: dir });
    costs = await overhead({ data: dir });
    rows.push(await measure('sqlite, search threads (2)', { data: dir }, 2));
    rows.push(await measure('peer: sqlite, searches in the server thread', { data: dir }, 0));
    const url = process.env['BUILDSCOPE_BENCH_PG_URL'] ?? (findPostgresBin() ? (pg = await startPostgres()).url : undefined);
    if (url !== undefined) {
      log(`loading ${BUILDS} demo builds into PostgreSQL`);
      await load({ url });
      rows.push(await measure('postgres, statement timeout', { url }, 0));
    } else log('postgres: not available, skipped');
  } finally {
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const head = ['server', 'unrelated p50 alone', 'p99 alone', 'p50 busy', 'p99 busy', 'max busy', 'expensive requests', 'expensive p50', 'expensive statuses'];
  const table = [head, ...rows.map((r) => [r.server, `${r.aloneP50} ms`, `${r.aloneP99} ms`, `${r.busyP50} ms`, `${r.busyP99} ms`, `${r.busyMax} ms`, String(r.expensive), `${r.expensiveP50} ms`, JSON.stringify(r.statuses)])];
  const widths = head.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  process.stdout.write(`\n${BUILDS} builds, ${CLIENTS} clients sending the most expensive allowed query for ${SECONDS} s, search time limit ${TIMEOUT_MS} ms\n`);
  for (const row of table) process.stdout.write(`${row.map((c, i) => c.padEnd(widths[i]!)).join('  ')}\n`);
  process.stdout.write(`\nA page (100, newest first) of typical queries through the store, p50 of 40, SQLite\n`);
  const t2 = [['query', 'search threads', 'peer: in the caller thread'], ...costs.map((c) => [c.query, `${c.threadsP50} ms`, `${c.inThreadP50} ms`])];
  const w2 = t2[0]!.map((_, i) => Math.max(...t2.map((row) => row[i]!.length)));
  for (const row of t2) process.stdout.write(`${row.map((c, i) => c.padEnd(w2[i]!)).join('  ')}\n`);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(
    'bench/results/query-cost.json',
    `${JSON.stringify({ when: new Date().toISOString(), builds: BUILDS, clients: CLIENTS, seconds: SECONDS, searchTimeoutMs: TIMEOUT_MS, query: EXPENSIVE, peer: 'SQLite server with searches in its own thread', rows, typicalPages: costs }, null, 2)}\n`,
  );
}

await main();
