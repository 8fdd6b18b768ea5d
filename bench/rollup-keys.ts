// Bytes of the rollup tables per build before and after store migration 0013 (rollup rows keyed by
// an integer key ID, src/store/schema/rollup-keys.ts), on the same SQLite database in one run, and the
// migration's time: the peer is the layout of migrations 0009 and 0011 (every row keyed by the
// JSON text of its dimension values, the values stored again).
//
//   node --import tsx bench/rollup-keys.ts [--quick] [--builds N] [--sqlite-data DIR]
//
// Corpus: demo builds (seed 7, as bench/trends.ts) loaded through the ingest, or the builds of
// --sqlite-data DIR. A database already migrated is first taken back to the old layout (the
// tables of 0009 and 0011, filled as those migrations fill them); one still in the old layout (a
// copy made by an older release) is measured as it is. Writes bench/results/rollup-keys.json.

import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { migrate, openDatabase, type DatabaseHandle } from '../src/db/database.js';
import { openBuildStore } from '../src/store/build-store.js';
import { demoBuilds } from '../src/store/demo/demo-data.js';
import { storeMigrations } from '../src/store/schema/migrations.js';
import { BUILD_ROLLUPS, DURATION_ROLLUPS, FACET_ROLLUPS, ROLLUP_KEYS, TASK_ROLLUPS } from '../src/store/analytics/rollups.js';
import { undoEventsKey } from '../test/store/events-key-rewind.js';
import { rollupKeysBefore0013 } from '../test/store/rollup-keys-rewind.js';
import { flag, option } from './support/args.js';

const quick = flag('--quick');
const BUILDS = Number(option('--builds') ?? (quick ? 10_000 : 100_000));
const NOW = Date.UTC(2026, 10, 1);
const log = (s: string): void => void process.stderr.write(`${s}\n`);
const TABLES = [TASK_ROLLUPS, DURATION_ROLLUPS, BUILD_ROLLUPS, FACET_ROLLUPS, ROLLUP_KEYS];

const keep = option('--sqlite-data');
const dir = keep ?? mkdtempSync(join(tmpdir(), 'bs-rollup-keys-bench-'));
if (keep) mkdirSync(keep, { recursive: true });
let handle = await openDatabase({ data: dir });
const hasTable = async (name: string) => (await sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_schema WHERE name = ${name}`.execute(handle.db)).rows[0]!.n > 0;
const count = async (q: string) => Number((await sql<{ n: number }>`${sql.raw(q)}`.execute(handle.db)).rows[0]!.n);

if (!(await hasTable('builds')) || (await count('SELECT count(*) AS n FROM builds')) === 0) {
  log(`loading ${BUILDS} demo builds through the ingest (bulk)…`);
  const store = await openBuildStore(handle, { postings: false });
  async function* lines() {
    for (const l of demoBuilds({ builds: BUILDS, seed: 7, now: NOW })) yield l + '\n';
  }
  await store.ingestNdjson(lines(), { bulk: true, keepResults: false });
  await store.close();
}
const builds = await count('SELECT count(*) AS n FROM builds WHERE seq IS NOT NULL');

/** Bytes of each rollup B-tree (table and its indexes), from dbstat. */
async function bytes(h: DatabaseHandle): Promise<Record<string, number>> {
  const rows = (await sql<{ name: string; tbl: string; b: number }>`SELECT s.name AS name, m.tbl_name AS tbl, sum(s.pgsize) AS b FROM dbstat AS s JOIN sqlite_schema AS m ON m.name = s.name GROUP BY s.name`.execute(h.db)).rows;
  const out: Record<string, number> = {};
  for (const t of TABLES) out[t] = rows.filter((r) => r.tbl === t).reduce((a, r) => a + r.b, 0);
  return out;
}

if (await hasTable(ROLLUP_KEYS)) {
  log('taking the rollups back to the layout of migrations 0009 and 0011 (0015 and 0014 undone first)…');
  const t = performance.now();
  await undoEventsKey(handle.db, 'sqlite');
  await rollupKeysBefore0013(handle, 'coded');
  log(`  filled in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}
await sql`VACUUM`.execute(handle.db);
const before = await bytes(handle);
const rowsBefore = await count(`SELECT count(*) AS n FROM ${TASK_ROLLUPS}`);

log('migrating (0013_rollup_keys)…');
const started = performance.now();
await migrate(handle, 'store', storeMigrations('sqlite'), '0013_rollup_keys');
const migrationMs = performance.now() - started;
await handle.close();
handle = await openDatabase({ data: dir });
await sql`VACUUM`.execute(handle.db);
const after = await bytes(handle);
const keys = await count(`SELECT count(*) AS n FROM ${ROLLUP_KEYS}`);
const rowsAfter = await count(`SELECT count(*) AS n FROM ${TASK_ROLLUPS}`);
if (rowsAfter !== rowsBefore) throw new Error(`${TASK_ROLLUPS}: ${rowsBefore} rows before, ${rowsAfter} after`);

const perBuild = (b: number) => +(b / builds).toFixed(1);
console.log(`\nRollup tables on SQLite, bytes a build (dbstat, after VACUUM): ${builds.toLocaleString('en-US')} builds, ${rowsAfter.toLocaleString('en-US')} task rollup rows, ${keys} keys, ${cpus().length} cores, ${process.version}`);
console.log('| table | before (key text + dimension columns) | after (kid) | ratio |');
console.log('|---|---:|---:|---:|');
let sumBefore = 0;
let sumAfter = 0;
for (const t of TABLES) {
  sumBefore += before[t]!;
  sumAfter += after[t]!;
  console.log(`| ${t} | ${perBuild(before[t]!)} | ${perBuild(after[t]!)} | ${before[t] ? (after[t]! / before[t]!).toFixed(2) : '-'} |`);
}
console.log(`| all | ${perBuild(sumBefore)} | ${perBuild(sumAfter)} | ${(sumAfter / sumBefore).toFixed(2)} |`);
console.log(`\nmigration 0013: ${(migrationMs / 1000).toFixed(2)} s for ${builds.toLocaleString('en-US')} builds`);

mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/rollup-keys.json',
  JSON.stringify({ date: new Date().toISOString(), node: process.version, cores: cpus().length, builds, keys, taskRollupRows: rowsAfter, bytesBefore: before, bytesAfter: after, migrationMs: Math.round(migrationMs) }, null, 2) + '\n',
);
await handle.close();
if (!keep && existsSync(dir)) rmSync(dir, { recursive: true, force: true });
