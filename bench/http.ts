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
import { openDatabase } from '../src/db/database.js';
import { openBuildStore } from '../src/store/build-store.js';

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

interface Server {
  readonly child: ChildProcess;
  readonly url: string;
  readonly key: string | undefined;
}

const PROJECTS = ['payments-service', 'Checkout-Web', 'inventory', 'mobile-app', 'data-pipeline', 'auth-gateway', 'search-indexer', 'billing', 'ml-platform', 'docs-site'];
const USERS = ['alice', 'bob', 'carol', 'dmitri', 'eve', 'farah', 'guo', 'hana', 'ci', 'jenkins', 'renee'];
const TAGS = ['nightly', 'release', 'pr', 'main', 'feature', 'dirty', 'flaky-retry'];
const TOOLS = ['native', 'jvmbuild', 'targetbuild', 'scalabuild', 'jsbuild', 'pybuild'];

function* benchBuilds(count: number): Iterable<string> {
  let seed = 42;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!;
  const start0 = Date.UTC(2026, 0, 1);
  for (let i = 0; i < count; i++) {
    const t = start0 + i * 30_000;
    const ev = (timestamp: number, eventType: string, data: Record<string, unknown>) => ({ timestamp, type: { majorVersion: 1, minorVersion: 0, eventType }, data });
    const events = [
      ev(t, 'BuildStarted', {}),
      ev(t + 1, 'BuildAgent', { username: pick(USERS), publicHostname: `build-${1 + Math.floor(rnd() * 20)}.ci.example.com` }),
      ev(t + 2, 'ProjectStructure', { rootProjectName: pick(PROJECTS) }),
      ev(t + 3, 'UserTag', { tag: rnd() < 0.5 ? 'CI' : 'LOCAL' }),
      ev(t + 4, 'UserTag', { tag: pick(TAGS) }),
      ev(t + 5_000 + Math.floor(rnd() * 600_000), 'BuildFinished', { outcome: rnd() < 0.15 ? 'failed' : 'succeeded', failures: [] }),
    ];
    yield JSON.stringify({ buildId: `b${i.toString(36).padStart(12, '0')}`, toolType: pick(TOOLS), toolVersion: '8.10.2', agentVersion: '3.19', events }) + '\n';
  }
}

async function loadBuilds(data: string, count: number): Promise<void> {
  const database = await openDatabase({ data });
  const store = await openBuildStore(database);
  try {
    const have = await store.latestSeq();
    if (have >= count) return;
    process.stderr.write(`loading ${count} builds...\n`);
    const started = Date.now();
    let last = 0;
    await store.ingestNdjson(
      (async function* () {
        yield* benchBuilds(count);
      })(),
      {
        onProgress(done) {
          if (done - last >= count / 10) {
            last = done;
            process.stderr.write(`  ${done}/${count} (${Math.round((Date.now() - started) / 1000)} s)\n`);
          }
        },
      },
    );
    process.stderr.write(`loaded ${count} builds in ${Math.round((Date.now() - started) / 1000)} s\n`);
  } finally {
    await store.close();
    await database.close();
  }
}

function startServer(data: string, workers: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    // The server as `npm start` runs it: the compiled dist/ (built first, below), not the sources
    // through tsx, whose transform slows closure-heavy code down.
    const child = spawn(process.execPath, ['bin/buildscope.js', 'serve', '--port', '0', '--data', data, '--workers', String(workers)], {
      env: { ...process.env, BUILDSCOPE_LOG_LEVEL: 'info', NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let key: string | undefined;
    child.stderr!.resume();
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const k = /access key (bsk[a-z2-7]{52}|bsk_[A-Za-z0-9_-]{40})/.exec(out);
      if (k) key = k[1];
      const m = /Buildscope is running at (http:\/\/[^/\s]+)\//.exec(out);
      if (m) resolve({ child, url: m[1]!, key });
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
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
