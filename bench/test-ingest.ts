// Ingest with 200 tests per build against the same builds without tests, in the same run: the
// price of the test dimension (store migration 0020: a row per test attempt in test_runs, each
// test once in tests, failure groups) together with the 400 more events a build carries. Each case
// loads demo builds into a fresh SQLite data directory as `buildscope ingest` does (bulk), the
// cases alternating over --rounds rounds so that a drift of the shared machine hits both alike;
// the figure is the median ratio of the rates. Then the bytes per test execution: the pages of
// test_runs and its indexes (dbstat), of the dictionaries and of test_packs, over the executions stored.
// Last, the floor: the steps of the preparation that any store keeping the events as sent takes
// for every byte of them (parse, encode, compress), timed alone in this thread for the lines with
// and without tests, and the best ratio those steps alone leave on two cores.
//
//   node --import tsx bench/test-ingest.ts [--builds 2000] [--rounds 3] [--quick]
//
// Writes bench/results/test-ingest.json.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/database.js';
import { openBuildStore } from '../src/store/build-store.js';
import { encodeEvents, packEvents } from '../src/store/events/event-codec.js';
import { prepareLines } from '../src/store/ingest/prepare.js';
import type { BuildEvent } from '../src/store/types.js';
import { timed } from './support/timing.js';
import { demoBuilds } from '../src/store/demo/demo-data.js';
import { flag, option } from './support/args.js';
import { draw, withTests, type TestRule } from './support/tested-builds.js';

const quick = flag('--quick');
const builds = Number(option('--builds') ?? (quick ? 300 : 2000));
const rounds = Number(option('--rounds') ?? (quick ? 1 : 3));
const TESTS = 200;
const now = Date.now();

/** ~2% of attempts fail, evenly over the tests; a retry passes half of them. */
const spread: TestRule = {
  fails: (a) => {
    if (a.attempt > 1) return undefined;
    const h = draw(a.build, a.test);
    return h < 20 ? `expected ${h} but was ${h + 1}` : undefined;
  },
  retry: (a) => draw(a.build, a.test) % 2 === 0,
};

const plain = [...demoBuilds({ builds, seed: 5, now })];
const tested = plain.map((text, b) => withTests(text, b, TESTS, spread));

interface Load {
  readonly seconds: number;
  readonly executions: number;
  readonly testRunBytes: number;
  readonly dictionaryBytes: number;
  readonly packBytes: number;
  readonly fileBytes: number;
}

async function load(lines: readonly string[]): Promise<Load> {
  const dir = mkdtempSync(join(os.tmpdir(), 'bs-test-ingest-'));
  try {
    const handle = await openDatabase({ data: dir });
    const store = await openBuildStore(handle, {});
    const started = performance.now();
    await store.ingestNdjson(lines.join('\n') + '\n', { bulk: true });
    const seconds = (performance.now() - started) / 1000;
    await store.close();
    const db = handle.sqlite!;
    const executions = Number(db.prepare('SELECT count(*) FROM test_runs').pluck().get());
    const bytesOf = (names: readonly string[]) => Number(db.prepare(`SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN (${names.map(() => '?').join(', ')})`).pluck().get(...names));
    const testRunBytes = bytesOf(['test_runs', 'test_runs_test', 'test_runs_group']);
    const dictionaryBytes = bytesOf(['tests', 'failure_groups', 'sqlite_autoindex_tests_1', 'sqlite_autoindex_failure_groups_1']);
    const packBytes = bytesOf(['test_packs']);
    const fileBytes = Number(db.prepare('SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()').pluck().get());
    await handle.close();
    return { seconds, executions, testRunBytes, dictionaryBytes, packBytes, fileBytes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const ratios: number[] = [];
const runs: { round: number; without: Load; with: Load }[] = [];
for (let r = 0; r < rounds; r++) {
  // Alternate which case goes first.
  const first = r % 2 === 0 ? await load(plain) : await load(tested);
  const second = r % 2 === 0 ? await load(tested) : await load(plain);
  const without = r % 2 === 0 ? first : second;
  const withT = r % 2 === 0 ? second : first;
  runs.push({ round: r, without, with: withT });
  ratios.push(without.seconds / withT.seconds);
  console.error(`round ${r + 1}/${rounds}: without tests ${(builds / without.seconds).toFixed(0)} builds/s, with ${TESTS} tests ${(builds / withT.seconds).toFixed(0)} builds/s`);
}
const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]!;
const last = runs[runs.length - 1]!.with;
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
console.log(`\n${builds} demo builds, SQLite, bulk load; ${TESTS} tests a build (${last.executions} executions stored)\n`);
console.log('| case | builds/s (per round) | executions/s |');
console.log('|---|---|---|');
console.log(`| without tests | ${runs.map((x) => round(builds / x.without.seconds, 0)).join(', ')} | - |`);
console.log(`| with ${TESTS} tests a build | ${runs.map((x) => round(builds / x.with.seconds, 0)).join(', ')} | ${runs.map((x) => round(x.with.executions / x.with.seconds, 0)).join(', ')} |`);
console.log(`\nrate with tests / without (median of ${rounds}): ${round(median, 3)} (goal >= 0.5)`);
console.log(`bytes per test execution: test_runs and its indexes ${round(last.testRunBytes / last.executions, 1)}, with the dictionaries ${round((last.testRunBytes + last.dictionaryBytes) / last.executions, 1)}; test_packs ${round(last.packBytes / last.executions, 1)}; whole file ${round((last.fileBytes - runs[runs.length - 1]!.without.fileBytes) / last.executions, 1)} more per execution (events included)`);

// The floor: µs a build of each step in this thread, over the same lines (at most 300 of each).
const sample = Math.min(builds, 300);
async function steps(lines: readonly string[]): Promise<Record<'parse' | 'encode' | 'compress' | 'prepare', number>> {
  const some = lines.slice(0, sample);
  const parsed = some.map((l) => (JSON.parse(l) as { events: BuildEvent[] }).events);
  const encoded = parsed.map((e) => encodeEvents(e));
  const each = async (fn: () => void) => ((await timed(async () => fn(), 5)).p50 * 1000) / some.length;
  return {
    parse: await each(() => some.forEach((l) => JSON.parse(l))),
    encode: await each(() => parsed.forEach((e) => encodeEvents(e))),
    compress: await each(() => encoded.forEach((e) => packEvents(e))),
    prepare: await each(() => prepareLines(some.map((text, i) => ({ line: i + 1, text })))),
  };
}
const plainSteps = await steps(plain);
const testedSteps = await steps(tested);
const essential = (x: typeof plainSteps) => x.parse + x.encode + x.compress;
const extra = essential(testedSteps) - essential(plainSteps);
// Wall µs a build without tests (median round): both threads busy, so a build's extra CPU costs half of it in wall time at best.
const plainWall = 1e6 / [...runs.map((x) => builds / x.without.seconds)].sort((a, b) => a - b)[Math.floor(runs.length / 2)]!;
const bound = plainWall / (plainWall + extra / 2);
console.log(`\nOne thread, µs a build (${sample} lines of each):\n`);
console.log('| step | without tests | with tests | extra |');
console.log('|---|---:|---:|---:|');
for (const k of ['parse', 'encode', 'compress', 'prepare'] as const) console.log(`| ${k === 'prepare' ? 'the whole preparation' : k} | ${round(plainSteps[k], 0)} | ${round(testedSteps[k], 0)} | ${round(testedSteps[k] - plainSteps[k], 0)} |`);
const prepared = testedSteps.prepare - plainSteps.prepare;
const preparedBound = plainWall / (plainWall + prepared / 2);
console.log(`\nA build without tests takes ${round(plainWall, 0)} µs of wall time. On two cores, the ratio is at most:`);
console.log(`- ${round(bound, 2)} for parse, encode and compress alone (${round(extra, 0)} µs more a build with tests);`);
console.log(`- ${round(preparedBound, 2)} for the whole preparation alone (${round(prepared, 0)} µs more), before any row is written.`);
mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/test-ingest.json',
  JSON.stringify(
    { date: new Date().toISOString(), node: process.version, loadAverage: os.loadavg(), cores: os.cpus().length, builds, tests: TESTS, ratios, medianRatio: median, runs, steps: { without: plainSteps, with: testedSteps, extraEssential: extra, plainWallMicros: plainWall, essentialBound: bound, preparedBound } },
    null,
    2,
  ) + '\n',
);
