// Export API benchmark: Build messages/s of /build-export/v2/builds/since/0 (plain and gzip),
// BuildEvent messages/s of one large build, and the peak RSS growth of the process (server and
// client together) during each run.
//
//   node --import tsx bench/export.ts [--quick] [--builds N] [--million] [--events N]
//
// Peers in the same run: iterating store.streamBuilds directly (the ceiling: no HTTP, no SSE),
// and paging through the REST listing GET /api/builds?maxBuilds=1000&fromBuild=... (what the
// export API is to be replaced by). Ratios are quoted against both.
//
// The listing data set is made by ingesting 1000 demo builds through the store and then copying
// their `builds` rows with SQL under new IDs up to N (ingest speed is bench/ingest.ts's subject;
// a listing only reads the build rows; the copies leave out the attribute JSON, which listings
// without attributes do not read). SQLite, in a temporary directory.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { buildApp } from '../src/http/app.js';
import { exportPlugin } from '../src/http/export-plugin.js';
import { parseConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { openBuildStore } from '../src/store/build-store.js';
import { demoBuilds } from '../src/store/demo/demo-data.js';
import { openAuth } from '../src/auth/index.js';
import { createLogger } from '../src/log.js';
import { SEE_EVERYTHING } from '../src/store/types.js';

const args = process.argv.slice(2);
const arg = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const quick = args.includes('--quick');
const builds = Number(arg('--builds') ?? (args.includes('--million') ? 1_000_000 : quick ? 20_000 : 100_000));
const eventCount = Number(arg('--events') ?? (quick ? 20_000 : 200_000));
const SEED_BUILDS = Math.min(1000, builds);

const say = (s: string): void => void process.stderr.write(s + '\n');

// ---- data ----------------------------------------------------------------------------------
const dir = mkdtempSync(join(tmpdir(), 'bs-export-bench-'));
const config = parseConfig({}, { data: dir });
const database = await openDatabase(config.database);
const logger = createLogger('export-bench', 'warn');
const store = await openBuildStore(database, { logger });
say(`ingesting ${SEED_BUILDS} demo builds...`);
await store.ingestNdjson([...demoBuilds({ builds: SEED_BUILDS, seed: 3 })].join('\n'), { keepResults: false });
if (builds > SEED_BUILDS) {
  say(`copying build rows up to ${builds}...`);
  const sqlite = database.sqlite!;
  const cols = (sqlite.prepare('PRAGMA table_info(builds)').all() as { name: string }[]).map((c) => c.name);
  const maxSeq = Number((sqlite.prepare('SELECT max(seq) AS m FROM builds').get() as { m: number }).m);
  const select = cols
    .map((c) => (c === 'id' ? `'x' || printf('%012d', s.n) AS id` : c === 'seq' ? `${maxSeq} + s.n AS seq` : c === 'available_at' ? `b.available_at + s.n AS available_at` : c === 'attributes' ? `'{}' AS attributes` : `b.${c}`))
    .join(', ');
  const insert = sqlite.prepare(
    `WITH RECURSIVE s(n) AS (SELECT ? UNION ALL SELECT n + 1 FROM s WHERE n < ?)
     INSERT INTO builds (${cols.join(', ')})
     SELECT ${select} FROM s JOIN builds b ON b.seq = ((s.n - 1) % ${maxSeq}) + 1`,
  );
  const copy = sqlite.transaction((from: number, to: number) => insert.run(from, to));
  for (let from = 1; from <= builds - SEED_BUILDS; from += 100_000) copy(from, Math.min(builds - SEED_BUILDS, from + 99_999));
  sqlite.exec('ANALYZE');
}
say(`ingesting one build with ${eventCount} events...`);
const big = JSON.parse([...demoBuilds({ builds: 1, seed: 9 })][0]!) as { buildId: string; events: unknown[] };
const finished = big.events.pop();
const t0 = 1_790_000_000_000;
for (let i = 0; big.events.length < eventCount - 1; i++) {
  big.events.push({ timestamp: t0 + i, type: { majorVersion: 1, minorVersion: 0, eventType: i % 2 ? 'TaskFinished' : 'TaskStarted' }, data: { id: `t${i >> 1}`, path: `:module${i % 97}:task${i >> 1}`, ...(i % 2 ? { outcome: 'success', cacheable: true } : {}) } });
}
big.events.push(finished);
big.buildId = 'zzzzzzzzzzzzz';
const [bigResult] = await store.ingestNdjson(JSON.stringify(big));
if (bigResult?.status !== 'stored') throw new Error(`large build not stored: ${JSON.stringify(bigResult)}`);
const total = builds + 1;

// ---- server ----------------------------------------------------------------------------------
const app = await buildApp({ config, database, store, logger }, { plugins: [exportPlugin] });
await app.listen({ host: '127.0.0.1', port: 0 });
const port = (app.server.address() as { port: number }).port;
const auth = await openAuth(database, config);
await auth.users.addUser({ name: 'bench', permissions: ['exportData', 'accessBuildDataViaApi'] });
const { key } = await auth.users.createAccessKey('bench', { expiresAt: Date.now() + 86_400_000 });

// ---- measuring -------------------------------------------------------------------------------
interface Run {
  name: string;
  messages: number;
  seconds: number;
  perSecond: number;
  wireBytes: number;
  rssGrowthMB: number;
  /** CPU seconds of this process (server and client) and messages per CPU second: less sensitive to a busy machine than wall time. */
  cpuSeconds: number;
  perCpuSecond: number;
}

async function measure(name: string, body: () => Promise<{ messages: number; wireBytes: number }>): Promise<Run> {
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  const { messages, wireBytes } = await body();
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  const run = { name, messages, seconds: +seconds.toFixed(3), perSecond: Math.round(messages / seconds), wireBytes, rssGrowthMB: +((peak - base) / 2 ** 20).toFixed(1), cpuSeconds: +cpuSeconds.toFixed(3), perCpuSecond: Math.round(messages / cpuSeconds) };
  say(`${name}: ${run.perSecond} msgs/s, ${run.perCpuSecond} msgs/CPU-s`);
  return run;
}

function request(path: string, gzip: boolean): Promise<IncomingMessage> {
  return new Promise((resolve, reject) =>
    get({ host: '127.0.0.1', port, path, agent: false, headers: { authorization: `Bearer ${key}`, ...(gzip ? { 'accept-encoding': 'gzip' } : {}) } }, resolve).on('error', reject),
  );
}

/** Counts SSE messages (blank-line terminated blocks) without keeping the stream. */
async function sse(path: string, gzip: boolean): Promise<{ messages: number; wireBytes: number }> {
  const res = await request(path, gzip);
  if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode}`);
  let wireBytes = 0;
  res.on('data', (c: Buffer) => (wireBytes += c.length));
  const body = gzip ? res.pipe(createGunzip()) : res;
  let messages = 0;
  let prevNl = false;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    let i = chunk.indexOf(10);
    while (i !== -1) {
      if (i === 0 ? prevNl : chunk[i - 1] === 10) messages++;
      i = chunk.indexOf(10, i + 1);
    }
    prevNl = chunk[chunk.length - 1] === 10;
  }
  return { messages, wireBytes };
}

async function restPages(): Promise<{ messages: number; wireBytes: number }> {
  let fromBuild: string | undefined;
  let messages = 0;
  let wireBytes = 0;
  for (;;) {
    const url = `http://127.0.0.1:${port}/api/builds?maxBuilds=1000${fromBuild ? `&fromBuild=${fromBuild}` : '&since=0'}`;
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    const text = await res.text();
    wireBytes += text.length;
    const page = JSON.parse(text) as { id: string }[];
    messages += page.length;
    if (page.length < 1000) return { messages, wireBytes };
    fromBuild = page[page.length - 1]!.id;
  }
}

const runs: Run[] = [];
runs.push(
  await measure('store.streamBuilds (ceiling)', async () => {
    let messages = 0;
    for await (const b of store.streamBuilds({ visibility: SEE_EVERYTHING })) if (b.seq > 0) messages++;
    return { messages, wireBytes: 0 };
  }),
);
runs.push(await measure('export /builds/since/0 plain', () => sse('/build-export/v2/builds/since/0', false)));
runs.push(await measure('export /builds/since/0 gzip', () => sse('/build-export/v2/builds/since/0', true)));
runs.push(await measure('REST /api/builds pages of 1000 (peer)', restPages));
runs.push(await measure(`export /build/:id/events plain (${eventCount} events)`, () => sse(`/build-export/v2/build/${big.buildId}/events`, false)));
runs.push(await measure(`export /build/:id/events gzip (${eventCount} events)`, () => sse(`/build-export/v2/build/${big.buildId}/events`, true)));

for (const r of runs.slice(0, 4)) if (r.messages !== total) throw new Error(`${r.name}: ${r.messages} messages, expected ${total}`);
for (const r of runs.slice(4)) if (r.messages !== eventCount + 1) throw new Error(`${r.name}: ${r.messages} messages, expected ${eventCount + 1}`);

await app.close();
await store.close();
await database.close();
rmSync(dir, { recursive: true, force: true });

// ---- report ----------------------------------------------------------------------------------
const [ceiling, plain, gzip, rest, evPlain, evGzip] = runs as [Run, Run, Run, Run, Run, Run];
console.table(runs.map((r) => ({ run: r.name, messages: r.messages, seconds: r.seconds, 'msgs/s': r.perSecond, 'msgs/CPU-s': r.perCpuSecond, 'wire MB': +(r.wireBytes / 2 ** 20).toFixed(1), 'RSS growth MB': r.rssGrowthMB })));
const ratios = {
  plainToCeiling: +(plain.perSecond / ceiling.perSecond).toFixed(2),
  gzipToPlain: +(gzip.perSecond / plain.perSecond).toFixed(2),
  plainToRest: +(plain.perSecond / rest.perSecond).toFixed(2),
  gzipToRest: +(gzip.perSecond / rest.perSecond).toFixed(2),
  gzipWireRatio: +(gzip.wireBytes / plain.wireBytes).toFixed(3),
  eventsGzipToPlain: +(evGzip.perSecond / evPlain.perSecond).toFixed(2),
};
const goals = {
  buildMessagesPerSecond: 100_000,
  rssGrowthMBForMillion: 100,
  plainMet: plain.perSecond >= 100_000,
  gzipMet: gzip.perSecond >= 100_000,
  rssMet: Math.max(plain.rssGrowthMB, gzip.rssGrowthMB) < 100,
};
console.log(
  `export plain ${plain.perSecond} msgs/s = ${ratios.plainToCeiling}x the store ceiling, ${ratios.plainToRest}x REST paging; gzip ${gzip.perSecond} msgs/s (${ratios.gzipToPlain}x plain, ${ratios.gzipWireRatio} of the bytes); events ${evPlain.perSecond}/s plain, ${evGzip.perSecond}/s gzip`,
);
console.log(`goals (>= 100k msgs/s, RSS growth < 100 MB): plain ${goals.plainMet ? 'met' : 'NOT met'}, gzip ${goals.gzipMet ? 'met' : 'NOT met'}, RSS ${goals.rssMet ? 'met' : 'NOT met'}`);
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/export.json', JSON.stringify({ date: new Date().toISOString(), node: process.version, builds: total, events: eventCount, runs, ratios, goals }, null, 2) + '\n');
