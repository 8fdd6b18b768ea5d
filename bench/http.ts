// HTTP load on loopback with autocannon: the build listing with a selective and a broad search
// query, token creation, GET /api/version (the same server without authentication or database
// work), and as the peer a bare fastify process answering a constant JSON object: the ceiling of
// HTTP on this machine at this moment, which calibrates the figures on a shared machine.
//
//   node --import tsx bench/http.ts [--quick] [--builds N] [--1m] [--duration S] [--connections C] [--data DIR] [--workers N]
//
// --workers: server processes (`serve --workers`), by default one per core.
//
// The server runs in its own process (`buildscope serve`, compiled, as `npm start` runs it), so
// autocannon and the server do not share an event loop. The builds are loaded into the data directory first, through
// the store: compact builds (start, agent, project, tags, outcome) with the value distributions of
// the demo data, so that 1M builds load in minutes; pass --data DIR to reuse a loaded directory.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { loadBuilds, startServer } from './support/compact-builds.js';

interface Args {
  builds: number;
  workers: number;
  duration: number;
  connections: number;
  data?: string;
}

function parseArgs(argv: readonly string[]): Args {
  const quick = argv.includes('--quick');
  const value = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const builds = argv.includes('--1m') ? 1_000_000 : Number(value('--builds') ?? (quick ? 10_000 : 100_000));
  return {
    builds,
    duration: Number(value('--duration') ?? (quick ? 3 : 10)),
    // As a deployment would run it: one server process per core (serve --workers).
    workers: Number(value('--workers') ?? availableParallelism()),
    connections: Number(value('--connections') ?? 10),
    ...(value('--data') !== undefined ? { data: value('--data')! } : {}),
  };
}

const PEER_SOURCE = `
import Fastify from 'fastify';
const app = Fastify();
app.get('/version', async () => ({ product: 'buildscope', version: '0.0.0' }));
const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(url + '\\n');
`;

function startPeer(): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', PEER_SOURCE], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout!.once('data', (d: Buffer) => resolve({ child, url: d.toString().trim() }));
    child.once('exit', (code) => reject(new Error(`peer exited with ${code}`)));
  });
}

interface Row {
  readonly scenario: string;
  readonly requests: number;
  readonly reqPerSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly non2xx: number;
  readonly errors: number;
}

async function load(scenario: string, url: string, args: Args, options: { method?: 'GET' | 'POST'; headers?: Record<string, string> }): Promise<Row> {
  const result = await autocannon({
    url,
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    connections: args.connections,
    duration: args.duration,
  });
  return {
    scenario,
    requests: result.requests.total,
    reqPerSec: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const ownData = args.data === undefined;
  const data = args.data ?? mkdtempSync(join(tmpdir(), 'buildscope-bench-http-'));
  const keyFile = join(data, 'bench-access-key');
  await loadBuilds(data, args.builds);
  process.stderr.write('building dist/...\n');
  execFileSync(process.execPath, ['scripts/build.js'], { stdio: ['ignore', 'ignore', 'inherit'] });
  process.stderr.write(`starting the server over ${data}...\n`);
  const server = await startServer(data, args.workers);
  try {
    const key = server.key ?? (existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : undefined);
    if (key === undefined) throw new Error(`no access key: the data directory ${data} was not created by this benchmark`);
    writeFileSync(keyFile, key);
    const tokenResponse = await fetch(`${server.url}/api/auth/token`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
    const token = await tokenResponse.text();
    const auth = { authorization: `Bearer ${token}` };

    const selective = 'project:billing user:farah tag:release';
    const broad = 'buildOutcome:succeeded';
    const listing = (q: string) => `${server.url}/api/builds?reverse=true&query=${encodeURIComponent(q)}`;
    const count = async (q: string) => ((await (await fetch(`${listing(q)}&maxBuilds=1000`, { headers: auth })).json()) as unknown[]).length;
    process.stderr.write(`selective query matches ${await count(selective)} builds (of at most 1000 listed), broad query ${await count(broad)}\n`);

    const rows: Row[] = [];
    // Warm-up: JIT, statement caches, page cache.
    await load('warm-up', listing(selective), { ...args, duration: 1 }, { headers: auth });
    const peerServer = await startPeer();
    try {
      rows.push(await load('peer: bare fastify, constant JSON', `${peerServer.url}/version`, args, {}));
    } finally {
      peerServer.child.kill('SIGTERM');
    }
    rows.push(await load('GET /api/version (no auth, no database)', `${server.url}/api/version`, args, {}));
    rows.push(await load(`GET /api/builds selective: ${selective}`, listing(selective), args, { headers: auth }));
    rows.push(await load(`GET /api/builds broad: ${broad} (100 builds)`, listing(broad), args, { headers: auth }));
    rows.push(await load('POST /api/auth/token (access key)', `${server.url}/api/auth/token`, args, { method: 'POST', headers: { authorization: `Bearer ${key}` } }));

    const peer = rows[0]!.reqPerSec;
    console.log(`\nHTTP on loopback, ${args.builds} builds (SQLite), ${args.workers} server process${args.workers === 1 ? '' : 'es'}, ${args.connections} connections, ${args.duration} s per scenario\n`);
    console.log('| scenario | req/s | p50 ms | p99 ms | vs peer | non-2xx |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const r of rows) {
      console.log(`| ${r.scenario} | ${r.reqPerSec} | ${r.p50} | ${r.p99} | ${(r.reqPerSec / peer).toFixed(2)} | ${r.non2xx + r.errors} |`);
    }
    const selectiveRow = rows[2]!;
    console.log(`\ngoal: >= 2000 req/s for the selective query: ${selectiveRow.reqPerSec >= 2000 ? 'met' : 'NOT met'} (${selectiveRow.reqPerSec} req/s)`);

    mkdirSync('bench/results', { recursive: true });
    writeFileSync(
      'bench/results/http.json',
      JSON.stringify({ when: new Date().toISOString(), builds: args.builds, workers: args.workers, connections: args.connections, durationSecs: args.duration, peer: 'bare fastify', rows }, null, 2) + '\n',
    );
  } finally {
    server.child.kill('SIGTERM');
    await new Promise((r) => server.child.once('exit', r));
    if (ownData) rmSync(data, { recursive: true, force: true });
  }
}

await main();
