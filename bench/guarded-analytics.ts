// Unrelated requests while expensive analytics run: four parallel facets and trends requests of a
// query no rollup answers (negations and infix wildcards), against a real server process (the
// compiled `serve`, as `npm start` runs it) over compact builds, with `limits.searchTimeoutMs` set.
// An unrelated request (GET /health/live) is timed without pause from a process of its own: its
// latencies while the four run are compared with those of the idle server in the same run (the
// floor). Goals: every expensive request ends with the time-limit problem document (503) within
// its limit plus a margin, and the unrelated request stays under 300 ms.
//
//   node --import tsx bench/guarded-analytics.ts [--builds N | --1m] [--data DIR | --postgres] [--limit-ms MS] [--rounds N]
//
// --postgres: a throwaway PostgreSQL cluster (as the tests start one) instead of SQLite.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadBuilds, startServer } from './support/compact-builds.js';
import { startProbe } from './support/probe.js';
import { startPostgres } from '../test/support/postgres-server.js';

const argv = process.argv.slice(2);
const value = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const builds = argv.includes('--1m') ? 1_000_000 : Number(value('--builds') ?? 100_000);
const limitMs = Number(value('--limit-ms') ?? 1000);
const rounds = Number(value('--rounds') ?? 3);
const QUERY = '-user:*a* -hostname:*7* project:*e* -tag:*ly*';

const quantile = (xs: readonly number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

async function main(): Promise<void> {
  const own = value('--data') === undefined;
  const data = value('--data') ?? mkdtempSync(join(tmpdir(), 'buildscope-bench-guard-'));
  const pg = argv.includes('--postgres') ? await startPostgres() : undefined;
  const where = pg !== undefined ? { url: pg.url } : data;
  await loadBuilds(where, builds);
  execFileSync(process.execPath, ['scripts/build.js'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const config = join(data, 'bench-guard.yaml');
  writeFileSync(config, `limits:\n  searchTimeoutMs: ${limitMs}\n`);
  const server = await startServer(where, 1, ['--config', config]);
  const keyFile = join(data, 'bench-access-key');
  const key = server.key ?? (existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : undefined);
  if (key === undefined) throw new Error(`no access key: the data directory ${data} was not created by a benchmark`);
  writeFileSync(keyFile, key);
  const auth = { authorization: `Bearer ${key}` };

  const prober = startProbe(`${server.url}/health/live`);

  try {
    const idle = await prober.during(new Promise((r) => setTimeout(r, 3000)));
    const q = encodeURIComponent(QUERY);
    const to = Date.UTC(2026, 0, 1) + builds * 30_000;
    const urls = [
      `${server.url}/api/search/facets?query=${q}`,
      `${server.url}/api/trends?query=${q}&from=${to - 30 * 86_400_000}&to=${to}`,
      `${server.url}/api/search/facets?query=${q}`,
      `${server.url}/api/trends?query=${q}&from=${to - 30 * 86_400_000}&to=${to}`,
    ];
    const rows: { round: number; statuses: string; slowestMs: number; p50Ms: number; p99Ms: number; maxMs: number }[] = [];
    for (let round = 1; round <= rounds; round++) {
      const four = Promise.all(
        urls.map(async (u) => {
          const t = performance.now();
          const r = await fetch(u, { headers: auth });
          await r.arrayBuffer();
          return { status: r.status, ms: performance.now() - t };
        }),
      );
      const [answers, during] = await Promise.all([four, prober.during(four)]);
      rows.push({ round, statuses: answers.map((a) => a.status).join(','), slowestMs: Math.max(...answers.map((a) => a.ms)), p50Ms: quantile(during, 0.5), p99Ms: quantile(during, 0.99), maxMs: Math.max(...during) });
    }
    const f = (n: number) => n.toFixed(0);
    console.log(`${builds} builds (${pg !== undefined ? 'PostgreSQL' : 'SQLite'}), limits.searchTimeoutMs ${limitMs}, query ${QUERY}`);
    console.log(`GET /health/live idle: p50 ${quantile(idle, 0.5).toFixed(1)} ms, p99 ${quantile(idle, 0.99).toFixed(1)} ms, max ${f(Math.max(...idle))} ms (${idle.length} samples)\n`);
    console.log('| round | 4 facets/trends statuses | slowest answer | /health/live p50 during | p99 | max |');
    console.log('|---:|---|---:|---:|---:|---:|');
    for (const r of rows) console.log(`| ${r.round} | ${r.statuses} | ${f(r.slowestMs)} ms | ${r.p50Ms.toFixed(1)} ms | ${f(r.p99Ms)} ms | ${f(r.maxMs)} ms |`);
    const goal = rows.every((r) => r.maxMs < 300);
    console.log(`\ngoal (unrelated request under 300 ms while the four run): ${goal ? 'met' : 'NOT met'}`);
    mkdirSync('bench/results', { recursive: true });
    writeFileSync(`bench/results/guarded-analytics${pg !== undefined ? '-postgres' : ''}.json`, JSON.stringify({ when: new Date().toISOString(), database: pg !== undefined ? 'postgres' : 'sqlite', builds, limitMs, query: QUERY, idle: { p50: quantile(idle, 0.5), p99: quantile(idle, 0.99) }, rows, goal }, null, 2) + '\n');
  } finally {
    prober.stop();
    server.child.kill('SIGTERM');
    await new Promise((r) => server.child.once('exit', r));
    await pg?.stop();
    if (own && !argv.includes('--keep')) rmSync(data, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(`bench/guarded-analytics: ${(e as Error).message}`);
  process.exit(1);
});
