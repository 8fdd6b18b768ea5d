// Ingest benchmark: builds/s (demo builds of all six tools, ~30 events each) through
// BuildStore.ingestNdjson on SQLite and PostgreSQL, and database size per million builds.
// Peer in the same run: the floor of the same database, one INSERT of each line's raw JSON into
// a two-column table with a prepared statement in one transaction per batch (no parsing,
// validation, derivation or indexes); the ratio says what the store's work costs on top. Both
// write batches of the size the `ingest` command uses on that database (src/store/ingest/batches.ts).
//
//   node --import tsx bench/ingest.ts [--quick] [--builds N[,N...]] [--dialects sqlite,postgres]
//        [--worker-only] [--rounds R] [--accept-path] [--memory-mb MB] [--value-index-peer] [--tables]
//
// --tables: after the SQLite store's ingest, the bytes per build of each of its B-trees (dbstat,
// the pages of each table and index), largest first: where the size per million builds goes.
//
// With several sizes (`--builds 10000,100000,1000000`) one store is filled up to the largest, and
// the rate "at N builds stored" is the rate over the band of builds just before N (the last
// clamp(N/10, 10k, 50k) builds; the whole input when N is 10k or less), not the average since
// the start; the floor is measured at the same points. Peak RSS of the process (resourceUsage
// maxRSS, all threads; the floor and the input generation use little) is read after the store's
// ingest, and sampled after every batch.
//
// --rounds R (several sizes on SQLite; default 5, 0 for none): after that fill, each size is
// measured again in R paired rounds. The cores of a shared machine change speed by 10-25% over
// minutes, and the fill's first band is measured minutes before its last and includes the
// process's warm-up (JIT, the worker thread's start), so the ratio of the two moves from run to run
// by more than its margin to the goal. In a round every size gets one bulk load of fresh builds,
// bandOf(N) of them (the same leading lines of a second input at every size, whose builds start
// after every build of the fill, see fillNow), as `buildscope ingest FILE` loads a file, timed
// from the start of the ingest to its end (with its final checkpoint);
// the sizes follow each other in ascending order in even rounds and descending in odd ones, so a
// steady drift of the machine cancels, and all of them run in a warmed-up process. The ratio of
// each round's rate at the largest size to its rate at the smallest compares both under the same
// conditions; its median over the rounds is the figure for the goal (0.8). The largest size loads
// into the fill's own store, which keeps growing through the rounds (the fifth round at "1M" runs
// at about 1.2M builds: the ratio errs low); each smaller size N loads into a fresh copy of a store
// of the fill's first N builds, so it stays at its size in every round. All the loads share one
// ingest worker thread, started and warmed up before the first round: a thread started in every
// load would cost the same time in each, which weighs more on a 10k band than on a 50k one. Note
// that the first size's round (10k builds into a store of 10k) is not the fill's first band (the
// first 10k into an empty store).
//
// SQLite runs twice, with the store's worker thread and without (one thread); --worker-only skips
// the second run (a million builds take several minutes each). --value-index-peer adds a first
// SQLite run (with the worker) into the layout before search migration 0004, which also had the
// custom values' (value, seq) index: its cost in the same process.
//
// --memory-mb MB: instead, writes an NDJSON file of about MB megabytes of demo builds and ingests
// it through the command line (`buildscope ingest FILE`, the compiled dist/), reporting that
// process's peak RSS (bench/support/max-rss.mjs reports it at exit).
//
// --accept-path also measures the two halves of an ingest that would accept lines before indexing them
// (docs/store.md, "The 20,000 builds/s goal"), which the store does not do: the CPU per line of
// what needs no database (prepareLine without the derivation: parse, validate, encode and
// compress the events, hash), and the rate at which one thread writes what such an ingest would store (each
// line's encoded events into the store's own build_events table, plus a queue row, in bulk-sized
// transactions; prepared beforehand, not timed). The slower half bounds the acceptance rate when
// each runs on a core of its own; their sum bounds it when two cores share the work perfectly.
//
// PostgreSQL: BUILDSCOPE_BENCH_PG_URL, else a throwaway server like the tests' (fsync off).

import { closeSync, copyFileSync, createReadStream, existsSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import BetterSqlite3 from 'better-sqlite3';
import { DEFAULT_BATCH_SIZE, SQLITE_BULK_BATCH_SIZE } from '../src/store/ingest/batches.js';
import { openBuildStore } from '../src/store/build-store.js';
import { PreparePool } from '../src/store/ingest/prepare-pool.js';
import { newBuildId } from '../src/store/ingest/build-id.js';
import { openDatabase, type DatabaseHandle } from '../src/db/database.js';
import { DEMO_WINDOW_MS, demoBuilds } from '../src/store/demo/demo-data.js';
import type { IngestLineResult, IngestOptions } from '../src/store/types.js';
import { eventsJsonOf, prepareLine } from '../src/store/ingest/prepare.js';
import { CHUNK_SPAN } from '../src/store/schema/events-rowid.js';
import { startPostgres, type RunningPostgres } from '../test/support/postgres-server.js';

const args = process.argv.slice(2);
const arg = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const quick = args.includes('--quick');
/** The sizes to report, ascending; the store is filled up to the last. */
const sizes = (arg('--builds') ?? (quick ? '10000' : '100000'))
  .split(',')
  .map((x) => Number(x.replace(/_/g, '')))
  .sort((a, b) => a - b);
if (sizes.some((n) => !Number.isInteger(n) || n <= 0)) throw new Error(`--builds needs positive integers, got ${arg('--builds')}`);
const builds = sizes[sizes.length - 1]!;
const dialects = (arg('--dialects') ?? 'sqlite,postgres').split(',');
const batchSize = arg('--batch-size') === undefined ? undefined : Number(arg('--batch-size'));
const memoryMb = arg('--memory-mb') === undefined ? undefined : Number(arg('--memory-mb'));
/** Paired rounds after the SQLite fill (with several sizes only; see the top). */
const rounds = new Set(sizes).size > 1 ? Number(arg('--rounds') ?? 5) : 0;
if (!Number.isInteger(rounds) || rounds < 0) throw new Error(`--rounds needs a whole number, 0 or more, got ${arg('--rounds')}`);
/** The median of the rounds' paired ratios (largest size / smallest) the project aims for. */
const GOAL_PAIRED_RATIO = 0.8;

/** How many builds before N the rate "at N stored" is taken over. */
const bandOf = (n: number): number => Math.min(n, Math.max(10_000, Math.min(50_000, Math.round(n / 10))));

/**
 * Elapsed time, CPU time and I/O after every committed batch: [builds done, ms since start, CPU µs
 * since start, bytes written and read by the process's system calls since start (Linux
 * /proc/self/io wchar and rchar: the WAL, the checkpoints and page reads; rchar also counts the input)].
 */
type Trace = [done: number, ms: number, cpuMicros: number, written: number, read: number][];

/** Bytes the process has written and read through system calls so far (0, 0 where /proc is absent). */
function ioBytes(): [number, number] {
  try {
    const text = readFileSync('/proc/self/io', 'utf8');
    const field = (name: string): number => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    return [field('wchar'), field('rchar')];
  } catch {
    return [0, 0];
  }
}

interface Band {
  /** Builds stored when measured. */
  builds: number;
  /** Builds in the band (the rate is over builds - band .. builds). */
  band: number;
  buildsPerSecond: number;
  cpuMicrosPerBuild: number;
  peerBuildsPerSecond: number;
  ratioToPeer: number;
  /** This band's rate over the rate of the first size's band (the smallest store). */
  ratioToFirst: number;
  /** Wall-clock µs per build over the band. */
  wallMicrosPerBuild: number;
  /** KB written per build by the process over the band (WAL appends and checkpoint copies). */
  writtenKbPerBuild: number;
  /** KB read per build by the process over the band (pages read back, and the input). */
  readKbPerBuild: number;
}

/** Rate and CPU per build over the band ending at `n` builds, interpolating between batch ends. */
function bandRate(trace: Trace, n: number): { rate: number; cpu: number; written: number; read: number } {
  const at = (k: number): number[] => {
    if (k <= 0) return [0, 0, 0, 0];
    for (let i = 0; i < trace.length; i++) {
      const now = trace[i]!;
      if (now[0] < k) continue;
      const before = i === 0 ? [0, 0, 0, 0, 0] : trace[i - 1]!;
      const f = (k - before[0]!) / (now[0] - before[0]!);
      return [1, 2, 3, 4].map((j) => before[j]! + f * (now[j]! - before[j]!));
    }
    return trace[trace.length - 1]!.slice(1);
  };
  const [t1, c1, w1, r1] = at(n);
  const [t0, c0, w0, r0] = at(n - bandOf(n));
  const band = bandOf(n);
  return { rate: band / ((t1! - t0!) / 1000), cpu: (c1! - c0!) / band, written: (w1! - w0!) / band, read: (r1! - r0!) / band };
}

interface Result {
  dialect: string;
  builds: number;
  seconds: number;
  buildsPerSecond: number;
  bytes: number;
  bytesPerMillionBuilds: number;
  /** CPU time of this process per build (user + system, all its threads), a figure less sensitive to a busy machine. */
  cpuMicrosPerBuild: number;
  peerBuildsPerSecond: number;
  ratioToPeer: number;
  /** Rates at each size of --builds (SQLite). */
  bands: Band[];
  /** Peak RSS of the process after the store's ingest (MB). */
  maxRssMb: number;
  /** Highest RSS seen after a batch (MB). */
  sampledRssMb: number;
  /** With --tables: bytes per build of each B-tree of the store (SQLite dbstat), largest first. */
  tables?: { name: string; bytesPerBuild: number }[];
  /** With several sizes (SQLite, with the worker): the paired rounds after the fill. */
  rounds?: Rounds;
}

/** One size's bulk loads in the paired rounds, in round order. */
interface RoundSize {
  /** Builds in the store when its load starts (the largest store: at the first round). */
  builds: number;
  /** Builds loaded into it in each round. */
  band: number;
  rates: number[];
  /** CPU µs per build of this process (all its threads) over each load. */
  cpuMicros: number[];
  /**
   * Of which in the kernel (page reads, WAL writes and checkpoints), for each load: one far above
   * the others of its size had its page cache grow into memory the machine freed shortly before,
   * a noise of the machine (docs/store.md, "Rounds of builds that follow the stored ones").
   */
  systemMicros: number[];
  /** KB written per build by the process over each load (WAL appends and checkpoint copies). */
  writtenKb: number[];
  /** KB read per build by the process over each load (pages read back, and the input). */
  readKb: number[];
  medianBuildsPerSecond: number;
  /** This size's median over the first size's median. */
  ratioToFirst: number;
}

interface Rounds {
  sizes: RoundSize[];
  /** Per round: its rate at the largest size over its rate at the smallest. */
  pairedRatios: number[];
  pairedRatioMedian: number;
}

/** The halves of an accept-then-index ingest (SQLite), measured apart. */
interface AcceptPath {
  /** CPU µs per line to parse, validate, encode and hash it (no derivation). */
  prepareMicrosPerLine: number;
  /** One thread writing prepared lines: encoded events plus a queue row per line. */
  writerBuildsPerSecond: number;
  /** min(1e6 / prepare µs, writer rate): each half on a core of its own. */
  boundOneHalfPerCore: number;
  /** 2e6 / (prepare µs + writer µs): both cores shared perfectly, before reading and splitting lines and handing them across threads. */
  boundTwoCoresBalanced: number;
}

/** Per label, the count at which a log file gets its next progress line. */
const nextLogged = new Map<string, number>();

function progress(label: string, done: number, total: number): void {
  if (!process.stderr.isTTY) {
    // A log file gets a line every 50,000 builds (long runs in the background). Batches are not
    // always whole (a stalled input is committed early), so crossing the mark counts.
    const next = nextLogged.get(label) ?? 50_000;
    if (done >= next || done >= total) {
      process.stderr.write(`${label}: ${done}/${total} at ${new Date().toISOString()}\n`);
      nextLogged.set(label, (Math.floor(done / 50_000) + 1) * 50_000);
    }
    return;
  }
  process.stderr.write(`\r${label}: ${done}/${total}`);
  if (done >= total) process.stderr.write('\n');
}

if (memoryMb !== undefined) {
  await memoryRun(memoryMb);
  process.exit(0);
}

/**
 * Writes about `megabytes` MB of demo builds to a file and ingests it with `buildscope ingest
 * FILE` (the compiled command, dist/), reporting the command's peak RSS and the ingest's rate.
 */
async function memoryRun(megabytes: number): Promise<void> {
  const { spawnSync } = await import('node:child_process');
  const dir = mkdtempSync(join(tmpdir(), 'bs-bench-memory-'));
  try {
    const file = join(dir, 'builds.ndjson');
    // About 4.9 KB of NDJSON per demo build.
    const lines = Math.ceil((megabytes * 1e6) / 4900);
    const { bytes } = writeInput(file, demoBuilds({ builds: lines, seed: 3, now: Date.now() }), []);
    process.stderr.write(`ingesting ${(bytes / 1e6).toFixed(0)} MB (${lines} builds) with buildscope ingest...\n`);
    const rssFile = join(dir, 'max-rss');
    const started = performance.now();
    const r = spawnSync(process.execPath, ['--import', new URL('./support/max-rss.mjs', import.meta.url).href, 'bin/buildscope.js', 'ingest', file, '--data', join(dir, 'data'), '--no-progress'], {
      env: { ...process.env, BUILDSCOPE_MAX_RSS_FILE: rssFile },
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
    });
    const seconds = (performance.now() - started) / 1000;
    if (r.status !== 0) throw new Error(`buildscope ingest failed (${r.status}): ${r.stderr}`);
    const maxRssMb = Math.round(Number(readFileSync(rssFile, 'utf8')) / 1000);
    const result = { inputMegabytes: Math.round(bytes / 1e6), builds: lines, seconds: Math.round(seconds * 10) / 10, buildsPerSecond: Math.round(lines / seconds), maxRssMb };
    console.log(`\nbuildscope ingest FILE, memory\n`);
    console.log('| input | builds | time | builds/s | peak RSS (maxRSS) |');
    console.log('|---|---|---|---|---|');
    console.log(`| ${result.inputMegabytes} MB | ${lines} | ${result.seconds} s | ${result.buildsPerSecond} | ${maxRssMb} MB |`);
    mkdirSync('bench/results', { recursive: true });
    writeFileSync(
      'bench/results/ingest-memory.json',
      JSON.stringify({ date: new Date().toISOString(), node: process.version, loadAverage: os.loadavg(), cores: os.cpus().length, goalMaxRssMb: 300, ...result }, null, 2) + '\n',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An NDJSON file of demo builds, and where some of its lines start. */
interface InputFile {
  path: string;
  bytes: number;
  /** Line index -> byte offset of its start (the line count -> the file's size), for the marks asked for. */
  offsets: Map<number, number>;
}

/**
 * Writes `lines` to `path` a few MB at a time (a million builds need no memory), noting the byte
 * offset at which each line index of `marks` starts, so that a run of lines can be read back as a
 * plain file stream (lineRange).
 */
function writeInput(path: string, lines: Iterable<string>, marks: Iterable<number>): InputFile {
  const wanted = new Set(marks);
  const offsets = new Map<number, number>();
  const fd = openSync(path, 'w');
  let bytes = 0;
  let count = 0;
  let buf = '';
  for (const l of lines) {
    if (wanted.has(count)) offsets.set(count, bytes);
    buf += l + '\n';
    bytes += Buffer.byteLength(l) + 1;
    count++;
    if (buf.length >= 1 << 22) {
      writeSync(fd, buf);
      buf = '';
    }
  }
  if (wanted.has(count)) offsets.set(count, bytes);
  writeSync(fd, buf);
  closeSync(fd);
  return { path, bytes, offsets };
}

/** Lines [from, to) of an input as a read stream of just their bytes, as `buildscope ingest FILE` reads a file. */
function lineRange(input: InputFile, from: number, to: number): AsyncIterable<Uint8Array> {
  const start = input.offsets.get(from);
  const end = input.offsets.get(to);
  if (start === undefined || end === undefined) throw new Error(`no offset of line ${start === undefined ? from : to} in ${input.path}`);
  return createReadStream(input.path, { start, end: end - 1, highWaterMark: 1 << 20 });
}

/**
 * The demo builds' clocks (their start times spread over the 30 days before it): the rounds'
 * fresh builds start after every build of the fill, as builds sent to a server start after the
 * ones it stores, so that at every size a round's builds follow the stored ones in the indexes
 * and rollups keyed by start time. (With one clock for both, a round at a million builds sent
 * builds of the 30 days the store already held: a back-fill into the middle of those B-trees,
 * 10-15% slower at 1M than the same builds after them, docs/store.md.)
 */
const roundsNow = Date.now();
const fillNow = roundsNow - DEMO_WINDOW_MS;

// The input goes to a temporary file first (not timed), so a million builds need no memory.
process.stderr.write(`generating ${builds} demo builds...\n`);
const workDir = mkdtempSync(join(tmpdir(), 'bs-bench-input-'));
const inputFile = join(workDir, 'builds.ndjson');
// Where each size ends: the rounds' smaller stores hold the first N builds.
const fillInput = writeInput(inputFile, demoBuilds({ builds, seed: 1, now: fillNow }), [0, ...sizes]);
const avgBytes = Math.round(fillInput.bytes / builds);
const avgEvents = 30;
process.on('exit', () => rmSync(workDir, { recursive: true, force: true }));

const input = (): AsyncIterable<Uint8Array> => createReadStream(inputFile, { highWaterMark: 1 << 20 });

/** The input's lines in batches, for the peers. */
async function* lineBatches(size: number): AsyncGenerator<string[]> {
  let batch: string[] = [];
  for await (const l of createInterface({ input: createReadStream(inputFile, { highWaterMark: 1 << 20 }), crlfDelay: Infinity })) {
    batch.push(l);
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

let cpuMicros = 0;
let storeTrace: Trace = [];
let maxRssMb = 0;
let sampledRssMb = 0;
const mb = (bytes: number): number => Math.round(bytes / 1e6);

/** Every line of a committed batch must be stored (the inputs hold only new, valid builds). */
function allStored(rs: readonly IngestLineResult[]): void {
  for (const r of rs) if (r.status !== 'stored') throw new Error(`line ${r.line}: ${JSON.stringify(r)}`);
}

/** As the `ingest` command loads a file (src/store/ingest/batches.ts), unless --batch-size says otherwise. */
const bulkLoad = (onResults: (rs: readonly IngestLineResult[]) => void): IngestOptions => ({
  keepResults: false,
  bulk: true,
  ...(batchSize !== undefined ? { batchSize } : {}),
  onResults,
});

async function ingestRate(handle: DatabaseHandle, label: string, ingestWorker = true): Promise<number> {
  const store = await openBuildStore(handle, { ingestWorker });
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  let done = 0;
  const [w0, r0] = ioBytes();
  storeTrace = [];
  sampledRssMb = 0;
  await store.ingestNdjson(
    input(),
    bulkLoad((rs) => {
      allStored(rs);
      done += rs.length;
      const cpu = process.cpuUsage(cpu0);
      const [w, r] = ioBytes();
      storeTrace.push([done, performance.now() - started, cpu.user + cpu.system, w - w0, r - r0]);
      sampledRssMb = Math.max(sampledRssMb, mb(process.memoryUsage.rss()));
      progress(label, done, builds);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  cpuMicros = cpu.user + cpu.system;
  // maxRSS is in kilobytes, for the whole process (every thread) since it started.
  maxRssMb = Math.round(process.resourceUsage().maxRSS / 1000);
  await store.close();
  return seconds;
}

/** `withRounds`: the paired rounds follow the fill, in its store (see pairedRounds). */
async function sqliteRun(ingestWorker: boolean, valueIndex = false, withRounds = false): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'bs-bench-'));
  try {
    const handle = await openDatabase({ data: dir });
    if (valueIndex) {
      // The layout before search migration 0004: the schema as today, plus the custom values'
      // (value, seq) index that migration dropped, exactly as migration 0001 made it.
      await (await openBuildStore(handle, { ingestWorker: false })).close();
      handle.sqlite!.exec('CREATE INDEX build_custom_values_value_idx ON build_custom_values (value, seq)');
    }
    const seconds = await ingestRate(handle, 'sqlite', ingestWorker);
    handle.sqlite!.pragma('wal_checkpoint(TRUNCATE)');
    const tables = args.includes('--tables')
      ? (handle.sqlite!.prepare('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC').all() as { name: string; bytes: number }[]).map(
          (t) => ({ name: t.name, bytesPerBuild: round(t.bytes / builds, 1) }),
        )
      : undefined;
    await handle.close();
    const file = join(dir, 'buildscope.db');
    const bytes = statSync(file).size + (existsSync(file + '-wal') ? statSync(file + '-wal').size : 0);
    // Peer: raw JSON lines into a two-column table, same pragmas, same batch size.
    const peerDir = mkdtempSync(join(tmpdir(), 'bs-bench-peer-'));
    const db = new BetterSqlite3(join(peerDir, 'peer.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE raw (id TEXT PRIMARY KEY, line TEXT NOT NULL)');
    const ins = db.prepare('INSERT INTO raw VALUES (?, ?)');
    const batch = db.transaction((part: string[], from: number) => {
      for (let i = 0; i < part.length; i++) ins.run(String(from + i).padStart(13, '0'), part[i]);
    });
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const peerTrace: Trace = [];
    const [pw0, pr0] = ioBytes();
    let from = 0;
    for await (const part of lineBatches(SQLITE_BULK_BATCH_SIZE)) {
      batch(part, from);
      from += part.length;
      const c = process.cpuUsage(c0);
      const [w, r] = ioBytes();
      peerTrace.push([from, performance.now() - t0, c.user + c.system, w - pw0, r - pr0]);
      progress('raw-insert floor', from, builds);
    }
    const peerSeconds = (performance.now() - t0) / 1000;
    db.close();
    rmSync(peerDir, { recursive: true, force: true });
    const label = `${ingestWorker ? 'sqlite' : 'sqlite, one thread'}${valueIndex ? ', with the dropped (value, seq) index' : ''}`;
    const filled = result(label, seconds, bytes, peerSeconds, bands(storeTrace, peerTrace));
    // After the fill's figures are taken: the rounds grow the store.
    const paired = withRounds ? await pairedRounds(dir) : undefined;
    return { ...filled, ...(tables ? { tables } : {}), ...(paired ? { rounds: paired } : {}) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One timed bulk load of the paired rounds. */
interface RoundLoad {
  rate: number;
  cpuMicrosPerBuild: number;
  systemMicrosPerBuild: number;
  writtenKbPerBuild: number;
  readKbPerBuild: number;
}

/**
 * After the fill: each size measured again in `rounds` rounds of one bulk load each, the sizes in
 * ascending order in even rounds and descending in odd ones (see the top). `largest` is the
 * fill's store (closed, checkpointed); it grows through the rounds. The smaller sizes load into
 * copies of snapshots of the fill's first N builds, so they stay at their size.
 */
async function pairedRounds(largest: string): Promise<Rounds> {
  const dir = mkdtempSync(join(tmpdir(), 'bs-bench-rounds-'));
  // One ingest worker for all the loads, warmed up by the snapshots' ingest: a store of its own
  // would start a new thread in every timed load, a fixed cost that weighs on a 10k band five
  // times as much as on a 50k one and so would flatter the largest size.
  const pool = new PreparePool();
  try {
    const distinct = [...new Set(sizes)];
    const maxBand = bandOf(builds);
    // Round r loads lines [r * maxBand, r * maxBand + bandOf(N)) at size N: fresh builds, the same
    // leading ones at every size within a round.
    const marks = Array.from({ length: rounds }, (_, r) => distinct.flatMap((n) => [r * maxBand, r * maxBand + bandOf(n)])).flat();
    process.stderr.write(`generating ${rounds * maxBand} demo builds for ${rounds} paired rounds...\n`);
    const fresh = writeInput(join(dir, 'rounds.ndjson'), demoBuilds({ builds: rounds * maxBand, seed: 2, now: roundsNow }), marks);
    const stores = new Map<number, string>();
    for (const n of distinct) stores.set(n, n === builds ? largest : await snapshot(n, join(dir, `snapshot-${n}`), pool));
    const loads = new Map<number, RoundLoad[]>(distinct.map((n) => [n, []]));
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? distinct : [...distinct].reverse();
      for (const n of order) {
        const band = bandOf(n);
        process.stderr.write(`round ${r + 1}/${rounds}: ${n} stored, ${band} builds ...`);
        const target = n === builds ? largest : copyStore(stores.get(n)!, join(dir, `round-${r}-${n}`));
        try {
          const load = await timedLoad(target, lineRange(fresh, r * maxBand, r * maxBand + band), band, pool);
          loads.get(n)!.push(load);
          process.stderr.write(` ${Math.round(load.rate).toLocaleString('en-US')} builds/s\n`);
        } finally {
          if (target !== largest) rmSync(target, { recursive: true, force: true });
        }
      }
    }
    return roundsSummary(distinct, loads);
  } finally {
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A store of the fill's first `n` builds in `dir` (not timed), its WAL checkpointed into
 * buildscope.db before it closes, so that its files can be copied as they are.
 */
async function snapshot(n: number, dir: string, pool: PreparePool): Promise<string> {
  const label = `snapshot of ${n} builds`;
  const handle = await openDatabase({ data: dir });
  const store = await openBuildStore(handle, { ingestWorker: pool });
  let done = 0;
  await store.ingestNdjson(
    lineRange(fillInput, 0, n),
    bulkLoad((rs) => {
      allStored(rs);
      done += rs.length;
      progress(label, done, n);
    }),
  );
  await store.close();
  handle.sqlite!.pragma('wal_checkpoint(TRUNCATE)');
  await handle.close();
  if (done !== n) throw new Error(`${label}: ${done} lines stored`);
  return dir;
}

/**
 * A copy of a snapshot's files in a new directory, flushed to the disk before the load is timed:
 * otherwise the copy's dirty pages would be written back during the load and slow the smaller
 * size alone.
 */
function copyStore(from: string, to: string): string {
  mkdirSync(to);
  for (const name of ['buildscope.db', 'buildscope.db-wal', 'buildscope.db-shm']) {
    if (!existsSync(join(from, name))) continue;
    copyFileSync(join(from, name), join(to, name));
    const fd = openSync(join(to, name), 'r+');
    fsyncSync(fd);
    closeSync(fd);
  }
  return to;
}

/**
 * One complete bulk load into the store in `dir`, as `buildscope ingest FILE` does it (but with the
 * rounds' running worker thread): timed from just before the ingest to its end, which includes the
 * checkpoint a bulk load runs when it ends; opening (migrations, catalog) and closing are not timed.
 */
async function timedLoad(dir: string, input: AsyncIterable<Uint8Array>, lines: number, pool: PreparePool): Promise<RoundLoad> {
  const handle = await openDatabase({ data: dir });
  const store = await openBuildStore(handle, { ingestWorker: pool });
  let done = 0;
  const cpu0 = process.cpuUsage();
  const [w0, r0] = ioBytes();
  const started = performance.now();
  await store.ingestNdjson(
    input,
    bulkLoad((rs) => {
      allStored(rs);
      done += rs.length;
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const [w, r] = ioBytes();
  await store.close();
  await handle.close();
  if (done !== lines) throw new Error(`${dir}: ${done} of ${lines} lines stored`);
  return {
    rate: lines / seconds,
    cpuMicrosPerBuild: (cpu.user + cpu.system) / lines,
    systemMicrosPerBuild: cpu.system / lines,
    writtenKbPerBuild: (w - w0) / 1000 / lines,
    readKbPerBuild: (r - r0) / 1000 / lines,
  };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Per size its loads in round order; the paired ratios of the largest size to the smallest. */
function roundsSummary(distinct: readonly number[], loads: ReadonlyMap<number, readonly RoundLoad[]>): Rounds {
  const of = (n: number): readonly RoundLoad[] => loads.get(n)!;
  const firstMedian = median(of(distinct[0]!).map((l) => l.rate));
  const out: RoundSize[] = distinct.map((n) => {
    const ls = of(n);
    const m = median(ls.map((l) => l.rate));
    return {
      builds: n,
      band: bandOf(n),
      rates: ls.map((l) => Math.round(l.rate)),
      cpuMicros: ls.map((l) => Math.round(l.cpuMicrosPerBuild)),
      systemMicros: ls.map((l) => Math.round(l.systemMicrosPerBuild)),
      writtenKb: ls.map((l) => round(l.writtenKbPerBuild, 1)),
      readKb: ls.map((l) => round(l.readKbPerBuild, 1)),
      medianBuildsPerSecond: Math.round(m),
      ratioToFirst: round(m / firstMedian, 3),
    };
  });
  const smallest = of(distinct[0]!);
  const ratios = of(distinct[distinct.length - 1]!).map((l, r) => l.rate / smallest[r]!.rate);
  return { sizes: out, pairedRatios: ratios.map((x) => round(x, 3)), pairedRatioMedian: round(median(ratios), 3) };
}

async function acceptPath(): Promise<AcceptPath> {
  const dir = mkdtempSync(join(tmpdir(), 'bs-bench-accept-'));
  try {
    const handle = await openDatabase({ data: dir });
    await (await openBuildStore(handle, { ingestWorker: false })).close();
    const db = handle.sqlite!;
    db.exec('CREATE TABLE accept_queue (id INTEGER PRIMARY KEY, build_id TEXT NOT NULL)');
    // Whether the build exists is a look-up of its ID in builds; its events are keyed by the next
    // events_key (store migration 0014), as the ingest stores them.
    const known = db.prepare('SELECT events_key FROM builds WHERE id = ?');
    // The rowid packs (events_key, chunk) (store migration 0018): chunk 0 of the next key.
    const chunk = db.prepare(`INSERT INTO build_events (id, event_count, events) VALUES (? * ${CHUNK_SPAN}, ?, ?)`);
    let lastKey = 0;
    const queue = db.prepare('INSERT INTO accept_queue (build_id) VALUES (?)');
    type Accepted = readonly [id: string, hash: string, count: number, events: string];
    const write = db.transaction((part: readonly Accepted[]) => {
      for (const [id, , count, events] of part) {
        // An accepting ingest must know whether the build exists (re-sends, parts).
        known.get(id);
        queue.run(id);
        chunk.run(++lastKey, count, events);
      }
    });
    let prepareMicros = 0;
    let writeMs = 0;
    let done = 0;
    for await (const part of lineBatches(SQLITE_BULK_BATCH_SIZE)) {
      const cpu0 = process.cpuUsage();
      const prepared = part.map((text): Accepted => {
        const p = prepareLine(text, { derive: false });
        if (!p.ok) throw new Error(`${p.path}: ${p.error}`);
        return [p.buildId ?? newBuildId(), p.hash, p.eventCount, eventsJsonOf(p)];
      });
      const cpu = process.cpuUsage(cpu0);
      prepareMicros += cpu.user + cpu.system;
      const t0 = performance.now();
      write(prepared);
      writeMs += performance.now() - t0;
      done += part.length;
      progress('accept path', done, builds);
    }
    await handle.close();
    const prepareMicrosPerLine = prepareMicros / builds;
    const writerBuildsPerSecond = builds / (writeMs / 1000);
    return {
      prepareMicrosPerLine: round(prepareMicrosPerLine, 1),
      writerBuildsPerSecond: Math.round(writerBuildsPerSecond),
      boundOneHalfPerCore: Math.round(Math.min(1e6 / prepareMicrosPerLine, writerBuildsPerSecond)),
      boundTwoCoresBalanced: Math.round(2e6 / (prepareMicrosPerLine + 1e6 / writerBuildsPerSecond)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresRun(): Promise<Result | undefined> {
  let server: RunningPostgres | undefined;
  let admin = process.env['BUILDSCOPE_BENCH_PG_URL'];
  if (!admin) {
    try {
      server = await startPostgres();
      admin = server.url;
    } catch (e) {
      process.stderr.write(`PostgreSQL unavailable, skipped: ${(e as Error).message}\n`);
      return undefined;
    }
  }
  const name = `bench_${process.pid}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  try {
    const handle = await openDatabase({ url: url.toString() });
    const seconds = await ingestRate(handle, 'postgres');
    const size = await handle.pool!.query('SELECT pg_database_size(current_database()) AS b');
    const empty = await c.query(`SELECT pg_database_size('template1') AS b`);
    const bytes = Number(size.rows[0].b) - Number(empty.rows[0].b);
    await handle.close();
    // Peer: raw JSON lines, one multi-row INSERT per batch in one transaction each.
    const p = new pg.Client({ connectionString: url.toString() });
    await p.connect();
    await p.query('CREATE TABLE raw (id text PRIMARY KEY, line text NOT NULL)');
    const t0 = performance.now();
    let i = 0;
    for await (const part of lineBatches(DEFAULT_BATCH_SIZE)) {
      const params: string[] = [];
      const values = part.map((l, k) => {
        params.push(String(i + k).padStart(13, '0'), l);
        return `($${2 * k + 1}, $${2 * k + 2})`;
      });
      await p.query('BEGIN');
      await p.query(`INSERT INTO raw VALUES ${values.join(',')}`, params);
      await p.query('COMMIT');
      i += part.length;
    }
    const peerSeconds = (performance.now() - t0) / 1000;
    await p.end();
    return result('postgres', seconds, bytes, peerSeconds);
  } finally {
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
    await server?.stop();
  }
}

function bands(store: Trace, peer: Trace): Band[] {
  const out: Band[] = [];
  for (const n of sizes) {
    const s = bandRate(store, n);
    const p = bandRate(peer, n);
    out.push({
      builds: n,
      band: bandOf(n),
      buildsPerSecond: Math.round(s.rate),
      cpuMicrosPerBuild: Math.round(s.cpu),
      peerBuildsPerSecond: Math.round(p.rate),
      ratioToPeer: round(s.rate / p.rate, 3),
      ratioToFirst: out.length === 0 ? 1 : round(s.rate / out[0]!.buildsPerSecond, 3),
      wallMicrosPerBuild: Math.round(1e6 / s.rate),
      writtenKbPerBuild: round(s.written / 1000, 1),
      readKbPerBuild: round(s.read / 1000, 1),
    });
  }
  return out;
}

function result(dialect: string, seconds: number, bytes: number, peerSeconds: number, perBand: Band[] = []): Result {
  const rate = builds / seconds;
  const peer = builds / peerSeconds;
  return {
    dialect,
    builds,
    seconds: round(seconds, 2),
    buildsPerSecond: Math.round(rate),
    bytes,
    bytesPerMillionBuilds: Math.round((bytes / builds) * 1e6),
    cpuMicrosPerBuild: Math.round(cpuMicros / builds),
    peerBuildsPerSecond: Math.round(peer),
    ratioToPeer: round(rate / peer, 3),
    bands: perBand,
    maxRssMb,
    sampledRssMb,
  };
}

const round = (x: number, d: number): number => Math.round(x * 10 ** d) / 10 ** d;

const results: Result[] = [];
// The store prepares the batches of a long input in a worker thread; the same ingest without it
// shows what the second core adds.
if (dialects.includes('sqlite')) {
  // --value-index-peer: first the same ingest into the layout before search migration 0004.
  if (args.includes('--value-index-peer')) results.push(await sqliteRun(true, true));
  results.push(await sqliteRun(true, false, rounds > 0));
  if (!args.includes('--worker-only')) results.push(await sqliteRun(false));
}
const accept = dialects.includes('sqlite') && args.includes('--accept-path') ? await acceptPath() : undefined;
if (dialects.includes('postgres')) {
  const r = await postgresRun();
  if (r) results.push(r);
}

const gb = (b: number): string => `${(b / 1e9).toFixed(2)} GB`;
const thousands = (x: number): string => x.toLocaleString('en-US');

function printRounds(dialect: string, paired: Rounds): void {
  const count = paired.pairedRatios.length;
  console.log(`\n${dialect}: paired rounds after the fill, ${count} bulk loads of fresh builds at each size (ascending, then descending)\n`);
  console.log('| builds stored | band | builds/s by round | median builds/s | min-max | CPU µs/build (median) | of which system, by round | KB written/build (median) | median / median at first size |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const z of paired.sizes) {
    const range = `${thousands(Math.min(...z.rates))}-${thousands(Math.max(...z.rates))}`;
    console.log(
      `| ${z.builds} | ${z.band} | ${z.rates.map(thousands).join(' / ')} | ${thousands(z.medianBuildsPerSecond)} | ${range} | ${Math.round(median(z.cpuMicros))} | ${z.systemMicros.join(' / ')} | ${round(median(z.writtenKb), 1)} | ${z.ratioToFirst} |`,
    );
  }
  const first = paired.sizes[0]!.builds;
  const last = paired.sizes[paired.sizes.length - 1]!.builds;
  const met = paired.pairedRatioMedian >= GOAL_PAIRED_RATIO ? 'met' : 'not met';
  console.log(
    `\npaired ratios, ${last} / ${first} stored, by round: ${paired.pairedRatios.join(' / ')}; median ${paired.pairedRatioMedian} (min ${Math.min(...paired.pairedRatios)}, max ${Math.max(...paired.pairedRatios)}); goal ${GOAL_PAIRED_RATIO}x: ${met}`,
  );
}

console.log(`\ningest: ${builds} demo builds, ~${avgEvents} events, ~${avgBytes} bytes of NDJSON each\n`);
console.log('| database | builds/s (average) | time | CPU µs/build (this process) | size per 1M builds | raw-insert peer builds/s | store / peer | peak RSS (maxRSS; sampled) |');
console.log('|---|---|---|---|---|---|---|---|');
for (const r of results) {
  console.log(
    `| ${r.dialect} | ${r.buildsPerSecond} | ${r.seconds} s | ${r.cpuMicrosPerBuild} | ${gb(r.bytesPerMillionBuilds)} | ${r.peerBuildsPerSecond} | ${r.ratioToPeer} | ${r.maxRssMb} MB; ${r.sampledRssMb} MB |`,
  );
}
for (const r of results.filter((x) => x.bands.length > 0)) {
  console.log(`\n${r.dialect}: rate at N builds stored (over the band of builds just before N)\n`);
  console.log('| builds stored | band | builds/s | CPU µs/build | wall µs/build | KB written/build | KB read/build | raw-insert floor builds/s | store / floor | rate / rate at first size |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const b of r.bands) {
    console.log(
      `| ${b.builds} | ${b.band} | ${b.buildsPerSecond} | ${b.cpuMicrosPerBuild} | ${b.wallMicrosPerBuild} | ${b.writtenKbPerBuild} | ${b.readKbPerBuild} | ${b.peerBuildsPerSecond} | ${b.ratioToPeer} | ${b.ratioToFirst} |`,
    );
  }
  if (r.rounds) printRounds(r.dialect, r.rounds);
}
for (const r of results.filter((x) => x.tables !== undefined)) {
  console.log(`\n${r.dialect}: bytes per build of each B-tree (dbstat), largest first\n`);
  console.log('| table or index | bytes/build |');
  console.log('|---|---|');
  const shown = r.tables!.slice(0, 25);
  for (const t of shown) console.log(`| ${t.name} | ${t.bytesPerBuild} |`);
  const rest = r.tables!.slice(shown.length).reduce((sum, t) => sum + t.bytesPerBuild, 0);
  console.log(`| ${r.tables!.length - shown.length} others | ${round(rest, 1)} |`);
  console.log(`| all | ${round(r.tables!.reduce((sum, t) => sum + t.bytesPerBuild, 0), 1)} |`);
}
if (accept) {
  console.log('\naccept-then-index halves (SQLite; the store does not ingest this way, see docs/store.md):\n');
  console.log('| prepare CPU µs/line (parse, validate, encode, hash) | writer builds/s (events + queue row) | bound, a half per core | bound, two cores balanced |');
  console.log('|---|---|---|---|');
  console.log(`| ${accept.prepareMicrosPerLine} | ${accept.writerBuildsPerSecond} | ${accept.boundOneHalfPerCore} | ${accept.boundTwoCoresBalanced} |`);
}
console.log(`\nload average at the end: ${os.loadavg().map((x) => x.toFixed(1)).join(' ')} on ${os.cpus().length} cores`);
const s = results.find((r) => r.dialect === 'sqlite');
const p = results.find((r) => r.dialect === 'postgres');
if (s && p) console.log(`\npostgres / sqlite ingest rate: ${round(p.buildsPerSecond / s.buildsPerSecond, 3)}`);
mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/ingest.json',
  JSON.stringify({ date: new Date().toISOString(), node: process.version, loadAverage: os.loadavg(), cores: os.cpus().length, builds, sizes, avgLineBytes: avgBytes, goalSqliteBuildsPerSecond: 20_000, results, acceptPath: accept }, null, 2) + '\n',
);
