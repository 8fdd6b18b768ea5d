// Comparison benchmark: two builds of N tasks and N tests each (default 10,000), compared through
// the store as GET /api/builds/{a}/compare/{b} does (both builds read, then compared), against
// the floor of the same run: reading the two builds' events as a stream (streamEvents, what the
// export and the pages of events do) and nothing else. Also the parts: the two builds' events
// read whole (readEvents, each chunk decoded at once, as the comparison reads them), the
// comparison in memory of the two builds' facts, and the answer's JSON.
//
//   node --import tsx bench/compare.ts [--quick] [--tasks N] [--runs N]
//
// SQLite in a temporary directory. Goal: the comparison under 500 ms p50. Writes
// bench/results/compare.json.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../src/db/database.js';
import { readBuildFacts } from '../src/services/build-facts.js';
import { compareBuilds, compareFacts } from '../src/services/compare.js';
import { openBuildStore } from '../src/store/build-store.js';
import { SEE_EVERYTHING, type BuildEvent } from '../src/store/types.js';
import { largeBuildLine } from '../test/services/compare-fixtures.js';
import { flag, option } from './support/args.js';

const quick = flag('--quick');
const N = Number(option('--tasks') ?? (quick ? 2_000 : 10_000));
const RUNS = Number(option('--runs') ?? (quick ? 5 : 15));
const GOAL_MS = 500;
const say = (s: string): void => void process.stderr.write(s + '\n');

const dir = mkdtempSync(join(tmpdir(), 'bs-compare-bench-'));
const database = await openDatabase({ data: dir });
const store = await openBuildStore(database);
const start = Date.UTC(2026, 0, 5);
say(`ingesting two builds of ${N} tasks and ${N} tests...`);
const results = await store.ingestNdjson([largeBuildLine('benchbuilda01', N, 0, start), largeBuildLine('benchbuildb01', N, 1, start + 3_600_000)].join('\n'));
if (results.some((r) => r.status !== 'stored')) throw new Error(`not stored: ${JSON.stringify(results)}`);

async function readEvents(id: string): Promise<number> {
  const events: BuildEvent[] = [];
  for await (const e of store.streamEvents(id)) events.push(e);
  return events.length;
}

const fa = await readBuildFacts(store, 'benchbuilda01', SEE_EVERYTHING);
const fb = await readBuildFacts(store, 'benchbuildb01', SEE_EVERYTHING);
const sample = compareFacts(fa, fb);
const json = JSON.stringify(sample);
const events = (await readEvents('benchbuilda01')) + (await readEvents('benchbuildb01'));

const measures: Record<string, () => Promise<unknown>> = {
  'floor: read both builds\' events (streamed)': () => Promise.all([readEvents('benchbuilda01'), readEvents('benchbuildb01')]),
  'read both builds\' events whole (readEvents, as the comparison does)': () => Promise.all([store.readEvents('benchbuilda01'), store.readEvents('benchbuildb01')]),
  'compare through the store (the route\'s work)': () => compareBuilds(store, 'benchbuilda01', 'benchbuildb01', SEE_EVERYTHING),
  'part: compare the facts in memory': async () => compareFacts(fa, fb),
  'part: the answer as JSON': async () => JSON.stringify(sample),
};

const p50 = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.ceil(xs.length / 2) - 1]!;
const rows: { measure: string; p50: number; min: number; max: number; runs: number }[] = [];
for (const [measure, run] of Object.entries(measures)) {
  await run(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await run();
    times.push(performance.now() - t0);
  }
  rows.push({ measure, p50: Math.round(p50(times) * 10) / 10, min: Math.round(Math.min(...times) * 10) / 10, max: Math.round(Math.max(...times) * 10) / 10, runs: RUNS });
}
await store.close();
await database.close();
rmSync(dir, { recursive: true, force: true });

const p50Of = (prefix: string): number => rows.find((r) => r.measure.startsWith(prefix))!.p50;
const floor = p50Of('floor:');
const compare = p50Of('compare through the store');
const differences = sample.sections.reduce((s, x) => s + x.differences.length, 0);
console.log(`\nTwo builds of ${N.toLocaleString('en-US')} tasks and ${N.toLocaleString('en-US')} tests each (${events.toLocaleString('en-US')} events in all), SQLite, ${RUNS} runs; ${differences.toLocaleString('en-US')} differences, answer ${(json.length / 1e6).toFixed(1)} MB of JSON`);
console.table(rows.map((r) => ({ ...r, 'x floor': Math.round((r.p50 / floor) * 100) / 100 })));
console.log(`comparison p50 ${compare} ms: ${(compare / floor).toFixed(2)}x the floor; goal under ${GOAL_MS} ms ${compare < GOAL_MS ? 'met' : 'NOT met'}`);
mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/compare.json',
  JSON.stringify({ date: new Date().toISOString(), node: process.version, cores: cpus().length, tasks: N, tests: N, events, differences, answerBytes: json.length, runs: rows, ratioToFloor: compare / floor, goalMs: GOAL_MS, goalMet: compare < GOAL_MS }, null, 2) + '\n',
);
