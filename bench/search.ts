// Search latency per query shape on SQLite and PostgreSQL, against the naive alternative in the
// same run: the same builds in memory, filtered by liqe.
//
//   node --import tsx bench/search.ts [--quick] [--builds N] [--million] [--no-pg] [--via-ingest] [--sqlite-data DIR] [--shapes a,b]
//
// --sqlite-data DIR keeps the SQLite corpus in DIR and reuses it when DIR already holds one of the
// same size (loading a million builds takes minutes; the corpus is deterministic). Likewise a
// PostgreSQL database given by BUILDSCOPE_BENCH_PG_URL that already holds the corpus is reused.
//
// Corpus: demo builds of all six tools (src/store/demo/demo-data.ts) in the store's tables with the
// search indexes. By default the rows are written directly (attributes derived by the store's own
// deriveAttributes, events not stored): ingest speed is measured by the store's benchmark, and a
// direct load makes 1M builds feasible. --via-ingest loads through BuildStore.ingestNdjson instead.
// Two measures per query: `page` = the first 100 matches in availability order through
// BuildStore.listBuilds (what the REST listing does), and `count` = count(*) of all matches
// (every match visited). In memory, `page` tests builds in order until 100 match, `count` filters all.
// Writes bench/results/search.json.
//
// Peer for the custom values (search migration 0004 dropped their `(value, seq)` index): the
// terms with a name pattern and a literal value start are also timed the way they ran before, the
// old SQL (`c.name … AND c.value …` in one subquery) with the old index created for the occasion,
// next to today's walk over the distinct names, both as raw statements in the same process; the
// old index's size per build is reported. `--shapes a,b` times only those shapes.

import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { parse as liqeParse, test as liqeTest, filter as liqeFilter } from 'liqe';
import { parseQuery } from '../src/query/index.js';
import type { CheckedExpr } from '../src/query/checked.js';
import { compileQuery, explainPlan } from '../src/sql/index.js';
import { valueFieldCode } from '../src/sql/value-fields.js';
import { openBuildStore } from '../src/store/build-store.js';
import { openDatabase, type DatabaseHandle } from '../src/db/database.js';
import { demoBuilds } from '../src/store/demo/demo-data.js';
import { deriveAttributes } from '../src/store/events/derive.js';
import { ATTRIBUTE_COLUMNS } from '../src/store/schema/columns.js';
import type { ToolType } from '../src/query/catalog.js';
import { SEE_EVERYTHING, type BuildStore, type BuildWithAttributes } from '../src/store/types.js';
import { findPostgresBin, startPostgres, type RunningPostgres } from '../test/support/postgres-server.js';
import { flag, option } from './support/args.js';

const quick = flag('--quick');
const BUILDS = Number(option('--builds') ?? (flag('--million') ? 1_000_000 : quick ? 10_000 : 100_000));
const ITER = quick ? 10 : 30;
const MEM_ITER = quick ? 3 : 5;
const PAGE = 100;
const NOW = Date.UTC(2026, 10, 1);
const DAY = 86_400_000;

const log = (s: string): void => void process.stderr.write(`${s}\n`);

interface Shape {
  readonly shape: string;
  readonly query: string;
  /** The same intent in liqe's language over flattened documents (see toDoc). */
  readonly liqe: string;
  readonly selective: boolean;
}

function shapes(sample: readonly BuildWithAttributes[]): Shape[] {
  const commit = (sample[Math.floor(sample.length / 2)]!.attributes['value'] as { name: string; value: string }[]).find((v) => v.name === 'Git commit id')!.value;
  const duration = sample[Math.floor(sample.length / 3)]!.attributes['buildDuration'] as number;
  const day = new Date(NOW - 10 * DAY).toISOString().slice(0, 10);
  const week = new Date(NOW - 16 * DAY).toISOString().slice(0, 10);
  return [
    { shape: 'exact', query: `value:"Git commit id=${commit}"`, liqe: `value:"git commit id=${commit}"`, selective: true },
    { shape: 'exact (user)', query: 'user:Renée', liqe: 'user:"renée"', selective: false },
    { shape: 'prefix', query: `value:"git commit id=${commit.slice(0, 5)}*"`, liqe: `value:/^git commit id=${commit.slice(0, 5)}/`, selective: true },
    { shape: 'prefix (host)', query: 'hostname:laptop*', liqe: 'hostname:/^laptop/', selective: false },
    { shape: 'infix', query: 'project:*ventor*', liqe: 'project:/ventor/', selective: false },
    { shape: 'infix (requested)', query: 'requested:*bundle*', liqe: 'requested:/bundle/', selective: false },
    { shape: 'range', query: `buildStartTime:[${day}T10:00 to ${day}T10:30]`, liqe: `buildStartTime:[${Date.parse(`${day}T10:00Z`)} TO ${Date.parse(`${day}T10:31Z`) - 1}]`, selective: true },
    // A week of start times: about a quarter of the builds, read as a range of the index that leads
    // with the start time (builds_trend since search migration 0007).
    { shape: 'range (week)', query: `buildStartTime:[${week} to ${day}]`, liqe: `buildStartTime:[${Date.parse(`${week}T00:00Z`)} TO ${Date.parse(`${day}T00:00Z`) + DAY - 1}]`, selective: false },
    // Durations (search migration 0006): the index `(bucket, seq, buildduration)` sought by the
    // bucket, the value tested on its entries; a selective tail, a band inside one bucket, an exact value.
    { shape: 'duration (tail)', query: 'buildDuration>4m', liqe: 'buildDuration:>240000', selective: true },
    { shape: 'duration (band)', query: 'buildDuration:[30s to 30.5s]', liqe: 'buildDuration:[30000 TO 30500]', selective: false },
    { shape: 'duration (exact)', query: `buildDuration:${duration}ms`, liqe: `buildDuration:${duration}`, selective: true },
    { shape: 'tag', query: 'tag:flaky-retry', liqe: 'tag:"flaky-retry"', selective: false },
    // A multi-valued prefix: the IP addresses of the JVM tools' builds (build_values, field then value range).
    { shape: 'prefix (IP)', query: 'jvmbuild.environment.localIPAddress:10.0.3.*', liqe: 'jvmbuild_environment_localIPAddress:/^10\\.0\\.3\\./', selective: false },
    { shape: 'key-value', query: 'value:"CI Provider=GitHub*"', liqe: 'value:/^ci provider=github/', selective: false },
    // A value under any name, or under a name prefix: the distinct names walked on (name, value, seq).
    { shape: 'any name', query: `value:*=${commit}`, liqe: `value:/=${commit}$/`, selective: true },
    { shape: 'any name prefix', query: `value:*=${commit.slice(0, 5)}*`, liqe: `value:/=${commit.slice(0, 5)}/`, selective: true },
    { shape: 'name prefix', query: `value:git*=${commit}`, liqe: `value:/^git[^=]*=${commit}$/`, selective: true },
    { shape: 'boolean', query: 'buildOutcome:failed hasNonVerificationFailure', liqe: 'buildOutcome:"failed" AND hasNonVerificationFailure:true', selective: false },
    { shape: 'negation', query: '-user:ci -tag:CI', liqe: 'NOT user:"ci" AND NOT tag:"ci"', selective: false },
    { shape: 'or', query: 'project:billing or project:docs-site', liqe: 'project:"billing" OR project:"docs-site"', selective: false },
  ];
}

/** A liqe document: attribute names without dots (liqe reads dots as paths), strings lower-cased. */
function toDoc(b: BuildWithAttributes): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(b.attributes)) {
    const key = k.replace(/\./g, '_');
    if (k === 'value') doc[key] = (v as { name: string; value: string }[]).map((x) => `${x.name}=${x.value}`.toLowerCase());
    else if (Array.isArray(v)) doc[key] = v.map((x) => (typeof x === 'string' ? x.toLowerCase() : x));
    else doc[key] = typeof v === 'string' ? v.toLowerCase() : v;
  }
  return doc;
}

function stats(samples: number[]): { p50: number; p95: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(p * (s.length - 1)))]!;
  return { p50: at(0.5), p95: at(0.95) };
}

interface Timing {
  readonly p50: number;
  readonly p95: number;
  /** Median CPU time of this process (user + system), ms: SQLite and liqe run in-process, so this
   * is their cost undisturbed by other load on the machine. Not meaningful for PostgreSQL. */
  readonly cpuP50: number;
}

async function time(n: number, f: () => Promise<unknown> | unknown): Promise<Timing> {
  await f();
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < n; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await f();
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  return { ...stats(wall), cpuP50: stats(cpu).p50 };
}

interface Backend {
  readonly name: 'sqlite' | 'postgres';
  readonly handle: DatabaseHandle;
  readonly store: BuildStore;
  readonly ingestPerSecond: number;
  readonly bytes: number;
  close(): Promise<void>;
}

async function* ndjsonChunks(): AsyncIterable<string> {
  let chunk: string[] = [];
  let done = 0;
  for (const line of demoBuilds({ builds: BUILDS, seed: 7, now: NOW })) {
    chunk.push(line);
    if (chunk.length === 2000) {
      yield `${chunk.join('\n')}\n`;
      done += chunk.length;
      chunk = [];
      if (done % 20_000 === 0) log(`  ${done} builds`);
    }
  }
  if (chunk.length) yield `${chunk.join('\n')}\n`;
}

function dirSize(dir: string): number {
  return readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}

interface DirectRow {
  readonly row: unknown[];
  readonly values: (readonly [string, string])[];
  readonly custom: (readonly [string, string])[];
  readonly attributes: string;
}

const DIRECT_COLUMNS = ['id', 'seq', 'available_at', 'tool_type', 'tool_version', 'agent_version', 'project_name', 'content_hash', 'attributes', 'received_at', ...ATTRIBUTE_COLUMNS.map((c) => c.column)];

function* directRows(): Iterable<DirectRow> {
  let seq = 0;
  for (const line of demoBuilds({ builds: BUILDS, seed: 7, now: NOW })) {
    const b = JSON.parse(line) as { buildId: string; toolType: ToolType; toolVersion: string; agentVersion: string; events: never[] };
    const d = deriveAttributes(b, b.events);
    seq++;
    // The attributes JSON goes to build_attributes, as the store writes it (store migration 0002).
    const row = [b.buildId, seq, NOW, b.toolType, b.toolVersion, b.agentVersion, d.project, b.buildId, '{}', NOW, ...d.columns];
    yield { row, values: [...d.values], custom: [...d.customValues], attributes: JSON.stringify(d.attributes) };
  }
}

/** Writes the corpus straight into the store's tables (the search triggers keep the trigram tables). */
async function loadDirect(handle: DatabaseHandle): Promise<void> {
  const cols = DIRECT_COLUMNS.map((c) => `"${c}"`).join(', ');
  if (handle.sqlite) {
    const db = handle.sqlite;
    const insertBuild = db.prepare(`INSERT INTO builds (${cols}) VALUES (${DIRECT_COLUMNS.map(() => '?').join(', ')})`);
    const insertValue = db.prepare('INSERT INTO build_values (seq, field, value) VALUES (?, ?, ?)');
    const insertCustom = db.prepare('INSERT INTO build_custom_values (seq, name, value) VALUES (?, ?, ?)');
    const insertAttributes = db.prepare('INSERT INTO build_attributes (seq, attributes) VALUES (?, ?)');
    let batch: DirectRow[] = [];
    const flush = db.transaction((rows: DirectRow[]) => {
      for (const r of rows) {
        insertBuild.run(...r.row);
        for (const [f, v] of r.values) insertValue.run(r.row[1], valueFieldCode(f), v);
        for (const [n, v] of r.custom) insertCustom.run(r.row[1], n, v);
        insertAttributes.run(r.row[1], r.attributes);
      }
    });
    let done = 0;
    for (const r of directRows()) {
      batch.push(r);
      if (batch.length === 5000) {
        flush(batch);
        done += batch.length;
        batch = [];
        if (done % 50_000 === 0) log(`  ${done} builds`);
      }
    }
    flush(batch);
    return;
  }
  const pool = handle.pool!;
  const client = await pool.connect();
  try {
    let batch: DirectRow[] = [];
    let done = 0;
    const flush = async (rows: DirectRow[]) => {
      if (rows.length === 0) return;
      await client.query('BEGIN');
      const params: unknown[] = [];
      const tuples = rows.map((r) => `(${r.row.map((v) => (params.push(v), `$${params.length}`)).join(', ')})`);
      await client.query(`INSERT INTO builds (${cols}) VALUES ${tuples.join(', ')}`, params);
      const vs = rows.flatMap((r) => r.values.map(([f, v]) => [r.row[1], valueFieldCode(f), v] as const));
      const cs = rows.flatMap((r) => r.custom.map(([n, v]) => [r.row[1], n, v] as const));
      await client.query('INSERT INTO build_values (seq, field, value) SELECT * FROM unnest($1::bigint[], $2::smallint[], $3::text[])', [vs.map((x) => x[0]), vs.map((x) => x[1]), vs.map((x) => x[2])]);
      await client.query('INSERT INTO build_custom_values (seq, name, value) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])', [cs.map((x) => x[0]), cs.map((x) => x[1]), cs.map((x) => x[2])]);
      await client.query('INSERT INTO build_attributes (seq, attributes) SELECT * FROM unnest($1::bigint[], $2::text[])', [rows.map((r) => r.row[1]), rows.map((r) => r.attributes)]);
      await client.query('COMMIT');
    };
    for (const r of directRows()) {
      batch.push(r);
      if (batch.length === 400) {
        await flush(batch);
        done += batch.length;
        batch = [];
        if (done % 50_000 === 0) log(`  ${done} builds`);
      }
    }
    await flush(batch);
  } finally {
    client.release();
  }
}

/** Loads the corpus into an empty database and analyses it; returns builds per second. */
async function load(name: 'sqlite' | 'postgres', handle: DatabaseHandle, store: BuildStore, viaIngest: boolean): Promise<number> {
  const t0 = performance.now();
  if (viaIngest) {
    const results = await store.ingestNdjson(ndjsonChunks());
    const rejected = results.filter((r) => r.status === 'rejected').length;
    if (rejected) throw new Error(`${rejected} lines rejected`);
  } else {
    await loadDirect(handle);
  }
  const secs = (performance.now() - t0) / 1000;
  if (name === 'sqlite') {
    handle.sqlite!.exec('ANALYZE');
    handle.sqlite!.pragma('wal_checkpoint(TRUNCATE)');
  } else {
    await sql`VACUUM ANALYZE`.execute(handle.db);
  }
  return BUILDS / secs;
}

async function openBackend(name: 'sqlite' | 'postgres', pgUrl?: string): Promise<Backend> {
  const kept = name === 'sqlite' ? option('--sqlite-data') : undefined;
  const dir = name === 'sqlite' ? (kept ?? mkdtempSync(join(tmpdir(), 'bench-search-'))) : undefined;
  const handle = await openDatabase(name === 'sqlite' ? { data: dir! } : { url: pgUrl! });
  const store = await openBuildStore(handle, { clock: () => NOW });
  const viaIngest = flag('--via-ingest');
  // A kept SQLite directory or a PostgreSQL database of one's own (BUILDSCOPE_BENCH_PG_URL) that
  // already holds the corpus is reused.
  const reusable = kept !== undefined || (name === 'postgres' && process.env['BUILDSCOPE_BENCH_PG_URL'] !== undefined);
  const stored = reusable ? Number((await sql<{ n: number }>`SELECT count(*) AS n FROM builds`.execute(handle.db)).rows[0]!.n) : 0;
  if (stored !== 0 && stored !== BUILDS) throw new Error(`${handle.describe} holds ${stored} builds, not ${BUILDS}`);
  log(`${name}: ${stored ? `reusing ${stored} builds in ${handle.describe}` : `loading ${BUILDS} builds ${viaIngest ? 'through ingest' : 'directly'}`}`);
  // A reused corpus was loaded and analysed when it was kept: nothing to load, no rate to report.
  const ingestPerSecond = stored ? 0 : await load(name, handle, store, viaIngest);
  const bytes =
    name === 'sqlite'
      ? dirSize(dir!)
      : Number((await sql<{ n: number }>`SELECT pg_database_size(current_database()) AS n`.execute(handle.db)).rows[0]!.n);
  return {
    name,
    handle,
    store,
    ingestPerSecond,
    bytes,
    async close() {
      await store.close();
      await handle.close();
      if (dir && kept === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function countMatches(h: DatabaseHandle, expr: CheckedExpr): Promise<number> {
  const r = await h.db
    .selectFrom('builds')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('builds.seq', 'is not', null)
    .where(compileQuery(expr, h.dialect))
    .executeTakeFirstOrThrow();
  return Number(r['n']);
}

/**
 * The custom value terms that the dropped `(value, seq)` index served, timed both ways on each
 * backend: `walk` = today's compiled SQL (the distinct names walked on `(name, value, seq)`),
 * `old` = the SQL the compiler wrote before search migration 0004, with that index recreated as
 * migration 0001 made it (and analysed), then dropped again. Raw statements, a page (ORDER BY seq
 * LIMIT 100) and a count. Also the old index's bytes per build.
 */
async function valueIndexPeer(backends: readonly Backend[], sample: readonly BuildWithAttributes[]): Promise<Record<string, unknown>[]> {
  const commit = (sample[0]!.attributes['value'] as { name: string; value: string }[]).find((v) => v.name === 'Git commit id')!.value.toLowerCase();
  const p5 = commit.slice(0, 5);
  const upper = (s: string) => s.slice(0, -1) + String.fromCodePoint(s.codePointAt(s.length - 1)! + 1);
  const cases = [
    { shape: 'any name', query: `value:*=${commit}`, old: { sqlite: ['c.name IS NOT NULL AND c.value = ?', [commit]], postgres: ['c.name IS NOT NULL AND c.value = $1', [commit]] } },
    { shape: 'any name prefix', query: `value:*=${p5}*`, old: { sqlite: ['c.name IS NOT NULL AND (c.value >= ? AND c.value < ?)', [p5, upper(p5)]], postgres: ["c.name IS NOT NULL AND c.value LIKE $1 ESCAPE '\\'", [`${p5}%`]] } },
    { shape: 'name prefix', query: `value:git*=${commit}`, old: { sqlite: ['(c.name >= ? AND c.name < ?) AND c.value = ?', ['git', 'giu', commit]], postgres: ["c.name LIKE $1 ESCAPE '\\' AND c.value = $2", ['git%', commit]] } },
  ] as const;
  const out: Record<string, unknown>[] = [];
  for (const b of backends) {
    const run = async (text: string, params: readonly unknown[]): Promise<unknown[]> =>
      b.name === 'sqlite' ? b.handle.sqlite!.prepare(text).all(...params) : (await b.handle.pool!.query(text, params as unknown[])).rows;
    const walk = cases.map((c) => {
      const compiled = b.handle.db.selectFrom('builds').select('builds.id').where(compileQuery(parseQuery(c.query, { now: NOW }).expr!, b.handle.dialect)).compile();
      const cond = compiled.sql.slice(compiled.sql.indexOf(' where ') + 7);
      return { text: cond, params: compiled.parameters };
    });
    const measure = async (cond: string, params: readonly unknown[]) => {
      const page = `SELECT builds.id FROM builds WHERE builds.seq IS NOT NULL AND ${cond} ORDER BY builds.seq LIMIT ${PAGE}`;
      const count = `SELECT count(*) AS n FROM builds WHERE builds.seq IS NOT NULL AND ${cond}`;
      return { matches: Number((await run(count, params) as { n: number }[])[0]!.n), page: await time(ITER, () => run(page, params)), count: await time(ITER, () => run(count, params)) };
    };
    const walked = [];
    for (const [i, c] of cases.entries()) walked.push(await measure(walk[i]!.text, walk[i]!.params));
    const create = b.name === 'sqlite' ? 'CREATE INDEX build_custom_values_value_idx ON build_custom_values (value, seq)' : 'CREATE INDEX build_custom_values_value_idx ON build_custom_values (value text_pattern_ops, seq)';
    const ddl = async (text: string) => (b.name === 'sqlite' ? void b.handle.sqlite!.exec(text) : void (await b.handle.pool!.query(text)));
    await ddl(create);
    await ddl('ANALYZE build_custom_values');
    const indexBytes =
      b.name === 'sqlite'
        ? Number((b.handle.sqlite!.prepare("SELECT sum(pgsize) AS n FROM dbstat WHERE name = 'build_custom_values_value_idx'").get() as { n: number }).n)
        : Number(((await run("SELECT pg_relation_size('build_custom_values_value_idx') AS n", [])) as { n: string }[])[0]!.n);
    const olds = [];
    for (const c of cases) {
      const [cond, params] = c.old[b.name];
      olds.push(await measure(`builds.seq IN (SELECT c.seq FROM build_custom_values AS c WHERE ${cond})`, params));
    }
    await ddl('DROP INDEX build_custom_values_value_idx');
    await ddl('ANALYZE build_custom_values');
    for (const [i, c] of cases.entries()) {
      if (walked[i]!.matches !== olds[i]!.matches) throw new Error(`${b.name} ${c.query}: ${walked[i]!.matches} matches walking the names, ${olds[i]!.matches} the old way`);
      out.push({ backend: b.name, shape: c.shape, query: c.query, matches: walked[i]!.matches, walk: { page: walked[i]!.page, count: walked[i]!.count }, old: { page: olds[i]!.page, count: olds[i]!.count }, oldIndexBytesPerBuild: indexBytes / BUILDS });
    }
    log(`  ${b.name}: value index peer done (old index ${(indexBytes / BUILDS).toFixed(1)} bytes per build)`);
  }
  console.log(`\nCustom values, ${BUILDS} builds: the name walk on (name, value, seq) vs. the old SQL on the dropped (value, seq) index (raw statements, ms p50 wall / cpu)`);
  for (const r of out) {
    const w = r['walk'] as { page: Timing; count: Timing };
    const o = r['old'] as { page: Timing; count: Timing };
    console.log(
      `${String(r['backend']).padEnd(8)} ${String(r['shape']).padEnd(17)} matches ${String(r['matches']).padStart(4)}  page walk ${fmt(w.page.p50)}/${fmt(w.page.cpuP50)} old ${fmt(o.page.p50)}/${fmt(o.page.cpuP50)}  count walk ${fmt(w.count.p50)}/${fmt(w.count.cpuP50)} old ${fmt(o.count.p50)}/${fmt(o.count.cpuP50)}  old index ${(r['oldIndexBytesPerBuild'] as number).toFixed(1)} B/build`,
    );
  }
  return out;
}

const fmt = (ms: number): string => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));

async function main(): Promise<void> {
  let pgServer: RunningPostgres | undefined;
  const backends: Backend[] = [await openBackend('sqlite')];
  if (!flag('--no-pg')) {
    const url = process.env['BUILDSCOPE_BENCH_PG_URL'] ?? (findPostgresBin() ? (pgServer = await startPostgres()).url : undefined);
    if (url) backends.push(await openBackend('postgres', url));
    else log('postgres: not available, skipped');
  }
  try {
    // The databases are timed first, with the in-memory corpus not yet loaded: a million liqe
    // documents in this process slow its garbage collection, which showed in PostgreSQL's wall
    // times (waiting on the socket) as 10-20x on millisecond pages.
    const middle = (await backends[0]!.store.listBuilds({ visibility: SEE_EVERYTHING, withAttributes: true, afterSeq: Math.floor(BUILDS / 2), maxBuilds: 1 })) as BuildWithAttributes[];
    const only = option('--shapes')?.split(',');
    const corpus = shapes(middle).filter((s) => only === undefined || only.includes(s.shape));
    const rows: Record<string, unknown>[] = [];
    for (const s of corpus) {
      const parsed = parseQuery(s.query, { now: NOW });
      if (!parsed.expr) throw new Error(`${s.query}: ${parsed.diagnostics.map((d) => d.message).join('; ')}`);
      const expr = parsed.expr;
      const row: Record<string, unknown> = { shape: s.shape, query: s.query, selective: s.selective };
      for (const b of backends) {
        row[`${b.name}Matches`] = await countMatches(b.handle, expr);
        row[`${b.name}Page`] = await time(ITER, () => b.store.listBuilds({ query: expr, visibility: SEE_EVERYTHING, maxBuilds: PAGE }));
        row[`${b.name}Count`] = await time(ITER, () => countMatches(b.handle, expr));
      }
      row['sqlitePlan'] = await explainPlan(backends[0]!.handle, expr);
      rows.push(row);
      log(`  ${s.shape}: databases done`);
    }
    const peer = await valueIndexPeer(backends, middle);
    const docs = ((await backends[0]!.store.listBuilds({ visibility: SEE_EVERYTHING, withAttributes: true })) as BuildWithAttributes[]).map(toDoc);
    for (const [i, s] of corpus.entries()) {
      const ast = liqeParse(s.liqe);
      const row = rows[i]!;
      row['memoryMatches'] = liqeFilter(ast, docs).length;
      row['memoryPage'] = await time(MEM_ITER, () => {
        let n = 0;
        for (const d of docs) if (liqeTest(ast, d) && ++n === PAGE) break;
      });
      row['memoryCount'] = await time(MEM_ITER, () => liqeFilter(ast, docs).length);
      log(`  ${s.shape}: in memory done`);
    }

    const p = (r: Record<string, unknown>, k: string) => r[k] as Timing | undefined;
    const header = [
      'shape', 'matches',
      'sqlite page p50/p95', 'cpu', 'sqlite count p50', 'cpu',
      ...(backends.length > 1 ? ['pg page p50/p95', 'pg count p50'] : []),
      'liqe page p50', 'cpu', 'liqe count p50', 'cpu',
      'page x (cpu)', 'count x (cpu)',
    ];
    const table = rows.map((r) => {
      const sp = p(r, 'sqlitePage')!;
      const sc = p(r, 'sqliteCount')!;
      const mp = p(r, 'memoryPage')!;
      const mc = p(r, 'memoryCount')!;
      const pp = p(r, 'postgresPage');
      const pc = p(r, 'postgresCount');
      return [
        String(r['shape']),
        String(r['sqliteMatches']),
        `${fmt(sp.p50)}/${fmt(sp.p95)}`, fmt(sp.cpuP50),
        fmt(sc.p50), fmt(sc.cpuP50),
        ...(pp && pc ? [`${fmt(pp.p50)}/${fmt(pp.p95)}`, fmt(pc.p50)] : []),
        fmt(mp.p50), fmt(mp.cpuP50),
        fmt(mc.p50), fmt(mc.cpuP50),
        `${(mp.cpuP50 / Math.max(sp.cpuP50, 0.001)).toFixed(1)}x`,
        `${(mc.cpuP50 / Math.max(sc.cpuP50, 0.001)).toFixed(1)}x`,
      ];
    });
    const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i]!.length)));
    const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
    const sum = (k: string, f: 'p50' | 'cpuP50' = 'p50') => rows.reduce((n, r) => n + p(r, k)![f], 0);
    console.log(`\nSearch latency, ${BUILDS} builds, ms (page = first ${PAGE} matches via listBuilds; count = all matches; cpu = in-process CPU time p50)`);
    console.log(line(header));
    for (const t of table) console.log(line(t));
    console.log(`\nacross the corpus (sum of p50, wall): sqlite page ${fmt(sum('sqlitePage'))} ms, count ${fmt(sum('sqliteCount'))} ms; liqe page ${fmt(sum('memoryPage'))} ms, count ${fmt(sum('memoryCount'))} ms`);
    console.log(`in-memory / sqlite, wall: page ${(sum('memoryPage') / sum('sqlitePage')).toFixed(1)}x, count ${(sum('memoryCount') / sum('sqliteCount')).toFixed(1)}x`);
    console.log(`in-memory / sqlite, cpu:  page ${(sum('memoryPage', 'cpuP50') / sum('sqlitePage', 'cpuP50')).toFixed(1)}x, count ${(sum('memoryCount', 'cpuP50') / sum('sqliteCount', 'cpuP50')).toFixed(1)}x`);
    if (backends.length > 1) {
      console.log(`in-memory / postgres, wall: page ${(sum('memoryPage') / sum('postgresPage')).toFixed(1)}x, count ${(sum('memoryCount') / sum('postgresCount')).toFixed(1)}x`);
    }
    console.log(`machine load average at the end: ${loadavg().map((x) => x.toFixed(1)).join(' ')} on ${cpus().length} cores`);
    for (const b of backends) {
      console.log(
        `${b.name}: loaded ${Math.round(b.ingestPerSecond)} builds/s (${flag('--via-ingest') ? 'ingest' : 'direct rows, no events'}), database ${(b.bytes / 1e6).toFixed(1)} MB (${((b.bytes / BUILDS) * 1e6 / 1e9).toFixed(2)} GB per million builds)`,
      );
    }
    mkdirSync('bench/results', { recursive: true });
    writeFileSync(
      'bench/results/search.json',
      `${JSON.stringify(
        {
          builds: BUILDS,
          page: PAGE,
          iterations: ITER,
          at: new Date().toISOString(),
          backends: backends.map((b) => ({ name: b.name, ingestPerSecond: Math.round(b.ingestPerSecond), bytes: b.bytes })),
          rows,
          valueIndexPeer: peer,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    for (const b of backends) await b.close();
    await pgServer?.stop();
  }
}

await main();
