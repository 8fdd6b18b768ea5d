// Deletion benchmark: builds deleted per second by age and by "oldest first" in batches of 100
// (store/prune.ts), and the slowest batch (how long a batch holds the writer), next to the ingest
// rate of the same builds in the same run (the peer: deleting should not be slower than storing).
//
//   node --import tsx bench/prune.ts [--quick] [--builds N]
//
// SQLite, in a temporary directory.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/database.js';
import { openBuildStore } from '../src/store/build-store.js';
import { demoBuilds } from '../src/store/demo/demo-data.js';
import type { PruneSelection } from '../src/store/types.js';
import { DEFAULT_PRUNE_BATCH } from '../src/store/prune.js';

const args = process.argv.slice(2);
const at = args.indexOf('--builds');
const BUILDS = at >= 0 ? Number(args[at + 1]) : args.includes('--quick') ? 5000 : 20_000;
const NOW = Date.UTC(2026, 0, 31);
const DAY = 86_400_000;

const dir = mkdtempSync(join(tmpdir(), 'bench-prune-'));
const handle = await openDatabase({ data: dir });
const store = await openBuildStore(handle, { ingestWorker: false });
let t = performance.now();
await store.ingestNdjson([...demoBuilds({ builds: BUILDS, seed: 2, now: NOW })].join('\n'), { keepResults: false, bulk: true });
const ingestRate = Math.round(BUILDS / ((performance.now() - t) / 1000));

async function run(name: string, selection: PruneSelection, maxBatches: number) {
  const batches: number[] = [];
  let deleted = 0;
  const started = performance.now();
  for (let i = 0; i < maxBatches; i++) {
    const b = performance.now();
    const gone = await store.deleteBuilds(selection, DEFAULT_PRUNE_BATCH);
    batches.push(performance.now() - b);
    if (gone.length === 0) break;
    deleted += gone.length;
  }
  const seconds = (performance.now() - started) / 1000;
  batches.sort((a, b) => a - b);
  return { run: name, deleted, 'builds/s': Math.round(deleted / seconds), 'median batch ms': +batches[batches.length >> 1]!.toFixed(1), 'slowest batch ms': +batches.at(-1)!.toFixed(1) };
}

// The demo builds start over the 30 days before NOW: half are older than 15 days.
const rows = [await run('by age (older than 15 days)', { kind: 'startedBefore', instant: NOW - 15 * DAY }, Infinity), await run('oldest first (20 batches)', { kind: 'oldest' }, 20)];
console.log(`${BUILDS} demo builds (SQLite), ingested at ${ingestRate} builds/s in the same run:`);
console.table(rows);
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/prune.json', JSON.stringify({ date: new Date().toISOString(), node: process.version, builds: BUILDS, ingestRate, runs: rows }, null, 2) + '\n');
await store.close();
await handle.close();
rmSync(dir, { recursive: true, force: true });
