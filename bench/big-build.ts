// Ingest of a big build, against ordinary demo builds in the same run: a build of 10,000 tests
// (1% failed with stack traces, every tenth with some output) and a 10 MB console log (ANSI
// colours, in 64 KiB chunks as an agent sends it), stored with the default console bound
// (limits.consoleBytesPerBuild, 4 MiB: the log is cut) and with the bound raised to 16 MiB (the
// whole log is stored). Each case runs in its own process on a fresh SQLite data directory:
// ingest time and rate, peak RSS of the process (and its RSS before the ingest), bytes stored
// (the data directory after close), and for the big build the first and a cached build page
// report (its tests and console decoded from the stored events).
//
//   node --import tsx bench/big-build.ts [--demo-builds 2000]
//
// Writes bench/results/big-build.json.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { option } from './support/args.js';

const TESTS = 10_000;
const LOG_BYTES = 10 * 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;
const MiB = 1024 * 1024;

type CaseName = 'demo' | 'big-default' | 'big-16mib';

interface CaseResult {
  readonly name: CaseName;
  readonly builds: number;
  readonly events: number;
  readonly inputBytes: number;
  readonly ingestMs: number;
  readonly rssBeforeMb: number;
  readonly peakRssMb: number;
  readonly storedBytes: number;
  readonly consoleLinesStored?: number;
  readonly consoleCut?: boolean;
  readonly firstReportMs?: number;
  readonly cachedPageMs?: number;
}

/** The big build's NDJSON line. */
function bigBuildLine(id: string, now: number): { line: string; events: number } {
  const events: object[] = [];
  let t = now - 3_600_000;
  const ev = (eventType: string, data: Record<string, unknown>, gap = 1) => {
    t += gap;
    events.push({ timestamp: t, type: { majorVersion: 1, minorVersion: 0, eventType }, data });
  };
  ev('BuildStarted', {}, 0);
  ev('ProjectStructure', { rootProjectName: 'monorepo' });
  ev('BuildRequestedTasks', { requested: ['check'], excluded: [] });
  ev('TaskStarted', { id: 1, path: ':test' });
  for (let i = 0; i < TESTS; i++) {
    const id = i + 1;
    const suite = `acme.module${Math.floor(i / 50)}.Feature${Math.floor(i / 10) % 5}Test`;
    ev('TestStarted', { id, suite, name: `case${i % 10}`, task: ':test' });
    if (i % 10 === 0) ev('TestOutput', { id, stream: 'stdout', text: `setting up fixture ${i}\nloaded 42 rows\n` });
    const failed = i % 100 === 7;
    ev(
      'TestFinished',
      failed
        ? { id, outcome: 'failed', attempt: 1, failure: { type: 'org.opentest4j.AssertionFailedError', message: `expected: <${i}> but was: <${i + 1}>`, stackTrace: Array.from({ length: 30 }, (_, k) => `\tat acme.Frame${k}.call(Frame${k}.java:${k + 10})`).join('\n') } }
        : { id, outcome: 'passed', attempt: 1 },
      1 + (i % 37),
    );
  }
  ev('TaskFinished', { id: 1, path: ':test', outcome: 'failed', cacheable: false });
  const line = (n: number) => (n % 97 === 0 ? `\u001b[31mERROR\u001b[0m step ${n} failed: connection reset` : `\u001b[32m  ok\u001b[0m step ${n} took ${n % 900} ms, cache key ${(n * 2654435761) % 4294967296}`);
  let sent = 0;
  let n = 0;
  while (sent < LOG_BYTES) {
    const lines: string[] = [];
    let size = 0;
    while (size < CHUNK_BYTES && sent + size < LOG_BYTES) {
      const l = line(n++);
      lines.push(l);
      size += Buffer.byteLength(l) + 1;
    }
    ev('ConsoleOutput', { stream: 'stdout', text: lines.join('\n') + '\n' });
    sent += size;
  }
  ev('BuildFinished', { outcome: 'failed', failures: [{ classification: 'verification', message: 'Task :test failed: There were failing tests' }] });
  return { line: JSON.stringify({ buildId: id, toolType: 'native', toolVersion: '8.10.2', agentVersion: '3.19', events }), events: events.length };
}

function dirBytes(dir: string): number {
  let n = 0;
  for (const f of readdirSync(dir, { withFileTypes: true })) n += f.isDirectory() ? dirBytes(join(dir, f.name)) : statSync(join(dir, f.name)).size;
  return n;
}

/** One case, in this process (the child). */
async function runCase(name: CaseName, demoBuilds: number): Promise<CaseResult> {
  const { openDatabase } = await import('../src/db/database.js');
  const { openBuildStore } = await import('../src/store/build-store.js');
  const { demoBuilds: demo } = await import('../src/store/demo/demo-data.js');
  const { DEFAULT_OUTPUT_BOUNDS } = await import('../src/store/ingest/output-bounds.js');
  const { buildDetails } = await import('../src/services/web.js');
  const { buildReport, consolePage } = await import('../src/services/build-report.js');
  const { SEE_EVERYTHING } = await import('../src/store/types.js');
  const now = Date.now();
  let input: string;
  let builds: number;
  let events: number;
  if (name === 'demo') {
    const lines = [...demo({ builds: demoBuilds, seed: 3, now })];
    input = lines.join('\n');
    builds = lines.length;
    events = lines.reduce((s, l) => s + (JSON.parse(l) as { events: unknown[] }).events.length, 0);
  } else {
    const big = bigBuildLine('bigbuild00001', now);
    input = big.line;
    builds = 1;
    events = big.events;
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-big-build-'));
  const handle = await openDatabase({ data: dir });
  const bounds = name === 'big-16mib' ? { ...DEFAULT_OUTPUT_BOUNDS, consoleBytes: 16 * MiB } : DEFAULT_OUTPUT_BOUNDS;
  const store = await openBuildStore(handle, { outputBounds: bounds });
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const results = await store.ingestNdjson(input, { bulk: true });
  const ingestMs = performance.now() - started;
  const rejected = results.filter((r) => r.status === 'rejected');
  if (rejected.length > 0) throw new Error(`rejected: ${JSON.stringify(rejected[0])}`);
  let extra: Partial<CaseResult> = {};
  if (name !== 'demo') {
    const t0 = performance.now();
    const details = await buildDetails(store, 'bigbuild00001', SEE_EVERYTHING);
    const firstReportMs = performance.now() - t0;
    const t1 = performance.now();
    consolePage(await buildReport(store, details!, null), { offset: 1000, limit: 500 });
    const cachedPageMs = performance.now() - t1;
    extra = { consoleLinesStored: details!.console.lines, consoleCut: details!.console.truncated, firstReportMs, cachedPageMs };
  }
  await store.close();
  await handle.close();
  const storedBytes = dirBytes(dir);
  rmSync(dir, { recursive: true, force: true });
  return {
    name,
    builds,
    events,
    inputBytes: Buffer.byteLength(input),
    ingestMs,
    rssBeforeMb: rssBefore / MiB,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    storedBytes,
    ...extra,
  };
}

const child = option('--case') as CaseName | undefined;
const demoCount = Number(option('--demo-builds') ?? '2000');
if (child !== undefined) {
  const r = await runCase(child, demoCount);
  process.stdout.write(`RESULT ${JSON.stringify(r)}\n`);
} else {
  const me = fileURLToPath(import.meta.url);
  const out: CaseResult[] = [];
  for (const name of ['demo', 'big-default', 'big-16mib'] as const) {
    const r = spawnSync(process.execPath, ['--import', 'tsx', me, '--case', name, '--demo-builds', String(demoCount)], { encoding: 'utf8', maxBuffer: 64 * MiB });
    const line = r.stdout.split('\n').find((l) => l.startsWith('RESULT '));
    if (r.status !== 0 || line === undefined) throw new Error(`case ${name} failed: ${r.stderr}`);
    out.push(JSON.parse(line.slice(7)) as CaseResult);
  }
  const mb = (b: number) => (b / MiB).toFixed(1);
  const rows = out.map((r) => ({
    case: r.name === 'demo' ? `${r.builds} demo builds` : r.name === 'big-default' ? 'big build, console bound 4 MiB' : 'big build, console bound 16 MiB',
    events: r.events.toLocaleString('en-US'),
    'input MB': mb(r.inputBytes),
    'ingest s': (r.ingestMs / 1000).toFixed(2),
    'MB/s': (r.inputBytes / MiB / (r.ingestMs / 1000)).toFixed(1),
    'events/s': Math.round(r.events / (r.ingestMs / 1000)).toLocaleString('en-US'),
    'RSS before MB': r.rssBeforeMb.toFixed(0),
    'peak RSS MB': r.peakRssMb.toFixed(0),
    'stored MB': mb(r.storedBytes),
    'console lines': r.consoleLinesStored?.toLocaleString('en-US') ?? '',
    'page report ms (first / cached)': r.firstReportMs === undefined ? '' : `${r.firstReportMs.toFixed(0)} / ${r.cachedPageMs!.toFixed(1)}`,
  }));
  console.table(rows);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/big-build.json', JSON.stringify({ date: new Date().toISOString(), node: process.version, cores: cpus().length, tests: TESTS, logBytes: LOG_BYTES, cases: out }, null, 2) + '\n');
}
