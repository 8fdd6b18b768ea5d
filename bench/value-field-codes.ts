// Bytes of build_values, its indexes and the value terms per build before and after store
// migration 0016 (the field stored as its code, src/store/schema/value-field-codes.ts), on the same
// database in one run, and the migration's time. The peer is the layout of 0015 (the field's
// column name), made by taking a store filled through the ingest back to it.
//
//   node --import tsx bench/value-field-codes.ts [--quick] [--builds N] [--dialects sqlite,postgres]
//
// SQLite: dbstat after VACUUM (every B-tree rebuilt, so both layouts are measured packed alike).
// PostgreSQL: pg_relation_size of each relation after VACUUM FULL (a throwaway server like the
// tests', fsync off; or BUILDSCOPE_BENCH_PG_URL). Writes bench/results/value-field-codes.json.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { sql } from 'kysely';
import { migrate, openDatabase, type DatabaseHandle } from '../src/db/database.js';
import { openBuildStore } from '../src/store/build-store.js';
import { demoBuilds } from '../src/store/demo/demo-data.js';
import { storeMigrations } from '../src/store/schema/migrations.js';
import { undoValueFieldCodes } from '../test/store/value-field-codes-rewind.js';
import { startPostgres, type RunningPostgres } from '../test/support/postgres-server.js';
import { flag, option } from './support/args.js';

const quick = flag('--quick');
const BUILDS = Number(option('--builds') ?? (quick ? 10_000 : 100_000));
const dialects = (option('--dialects') ?? 'sqlite,postgres').split(',');
const NOW = Date.UTC(2026, 10, 1);
const log = (s: string): void => void process.stderr.write(`${s}\n`);

/** The relations measured: build_values (table and indexes) and the value terms (table, key, trigram index). */
const SQLITE_NAMES = ['build_values', 'build_values_seq', 'build_value_terms', 'sqlite_autoindex_build_value_terms_1'];
const PG_NAMES = ['build_values', 'build_values_search_idx', 'build_values_seq', 'build_value_terms', 'build_value_terms_pkey', 'build_value_terms_trgm'];

async function fill(handle: DatabaseHandle): Promise<number> {
  log(`${handle.dialect}: loading ${BUILDS} demo builds through the ingest…`);
  const store = await openBuildStore(handle, { postings: false });
  async function* lines() {
    for (const l of demoBuilds({ builds: BUILDS, seed: 7, now: NOW })) yield l + '\n';
  }
  await store.ingestNdjson(lines(), { bulk: handle.dialect === 'sqlite', keepResults: false });
  await store.close();
  return Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM build_values`.execute(handle.db)).rows[0]!.n);
}

async function bytes(handle: DatabaseHandle): Promise<Record<string, number>> {
  if (handle.dialect === 'sqlite') {
    await sql`VACUUM`.execute(handle.db);
    const rows = (await sql<{ name: string; b: number }>`SELECT name, sum(pgsize) AS b FROM dbstat GROUP BY name`.execute(handle.db)).rows;
    return Object.fromEntries(SQLITE_NAMES.map((n) => [n, rows.find((r) => r.name === n)?.b ?? 0]));
  }
  await sql`VACUUM FULL build_values`.execute(handle.db);
  await sql`VACUUM FULL build_value_terms`.execute(handle.db);
  const out: Record<string, number> = {};
  for (const n of PG_NAMES) out[n] = Number((await sql<{ b: string }>`SELECT pg_relation_size(${n}::regclass) AS b`.execute(handle.db)).rows[0]!.b);
  return out;
}

interface Result {
  dialect: string;
  builds: number;
  rows: number;
  before: Record<string, number>;
  after: Record<string, number>;
  migrationMs: number;
}

async function measure(location: { data?: string; url?: string }): Promise<Result> {
  let handle = await openDatabase(location);
  const rows = await fill(handle);
  await undoValueFieldCodes(handle.db, handle.dialect);
  const before = await bytes(handle);
  log(`${handle.dialect}: migrating (0016_value_field_codes)…`);
  const started = performance.now();
  await migrate(handle, 'store', storeMigrations(handle.dialect), '0016_value_field_codes');
  const migrationMs = performance.now() - started;
  await handle.close();
  handle = await openDatabase(location);
  const after = await bytes(handle);
  await handle.close();
  return { dialect: handle.dialect, builds: BUILDS, rows, before, after, migrationMs };
}

const results: Result[] = [];
if (dialects.includes('sqlite')) {
  const dir = mkdtempSync(join(tmpdir(), 'bs-fcodes-bench-'));
  try {
    results.push(await measure({ data: dir }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
if (dialects.includes('postgres')) {
  let admin = process.env['BUILDSCOPE_BENCH_PG_URL'];
  let server: RunningPostgres | undefined;
  if (admin === undefined) {
    server = await startPostgres();
    admin = server.url;
  }
  const name = `bs_fcodes_bench_${process.pid}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  try {
    const url = new URL(admin);
    url.pathname = `/${name}`;
    results.push(await measure({ url: url.toString() }));
  } finally {
    await client.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await client.end();
    await server?.stop();
  }
}

for (const r of results) {
  const perBuild = (b: number) => (b / r.builds).toFixed(1);
  console.log(`\n${r.dialect}: build_values and value terms, bytes a build: ${r.builds.toLocaleString('en-US')} builds, ${r.rows.toLocaleString('en-US')} value rows, ${cpus().length} cores, ${process.version}`);
  console.log('| relation | before (field name, 0015) | after (field code, 0016) | ratio |');
  console.log('|---|---:|---:|---:|');
  let sb = 0;
  let sa = 0;
  for (const n of Object.keys(r.before)) {
    sb += r.before[n]!;
    sa += r.after[n]!;
    console.log(`| ${n} | ${perBuild(r.before[n]!)} | ${perBuild(r.after[n]!)} | ${r.before[n] ? (r.after[n]! / r.before[n]!).toFixed(2) : '-'} |`);
  }
  console.log(`| all | ${perBuild(sb)} | ${perBuild(sa)} | ${(sa / sb).toFixed(2)} |`);
  console.log(`\n${r.dialect}: migration 0016: ${(r.migrationMs / 1000).toFixed(2)} s for ${r.rows.toLocaleString('en-US')} rows (${r.builds.toLocaleString('en-US')} builds)`);
}

mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/value-field-codes.json', JSON.stringify({ date: new Date().toISOString(), node: process.version, cores: cpus().length, results }, null, 2) + '\n');
