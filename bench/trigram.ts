// The SQLite trigram tables without positions (search migration 0005, `detail=none`) against the
// layout before it (`detail=full`, the phrase with a column filter), in the same run on the same
// builds: bytes per build of each table (dbstat), the infix queries' times (a page of 100 in
// availability order and the count of all matches, as raw statements from the compiler), the
// candidates each table hands the LIKE, and the time of migration 0005 itself.
//
//   node --import tsx bench/search.ts --no-pg --sqlite-data DIR --shapes infix   (loads the corpus once)
//   node --import tsx bench/trigram.ts --sqlite-data DIR [--quick]
//
// The peer tables (`…_full`) are created for the occasion from the same content with the options
// of search migration 0002 and dropped at the end. Writes bench/results/trigram.json.

import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { sql } from 'kysely';
import { parseQuery } from '../src/query/index.js';
import { compileQuery } from '../src/sql/index.js';
import { ftsPhrase, ftsTrigrams } from '../src/sql/pattern.js';
import { BUILDS_TRIGRAM, CUSTOM_VALUES_TRIGRAM } from '../src/sql/layout.js';
import { migrateSearchIndexes, NO_PROGRESS_LOG } from '../src/sql/indexes.js';
import { openBuildStore } from '../src/store/build-store.js';
import { openDatabase } from '../src/db/database.js';
import { flag, option } from './support/args.js';

const ITER = flag('--quick') ? 5 : 20;
const dir = option('--sqlite-data');
if (dir === undefined) throw new Error('--sqlite-data DIR (a corpus kept by bench/search.ts) is required');
const log = (s: string): void => void process.stderr.write(`${s}\n`);
const fmt = (ms: number): string => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

interface Shape {
  readonly query: string;
  /** The literal the compiler asks the trigram table for, and the column a phrase would filter on. */
  readonly literal: string;
  readonly column: string;
  readonly table: string;
}

const handle = await openDatabase({ data: dir });
const store = await openBuildStore(handle);
const db = handle.sqlite!;
const builds = Number(db.prepare('SELECT count(*) FROM builds WHERE seq IS NOT NULL').pluck().get());
const customRows = Number(db.prepare('SELECT count(*) FROM build_custom_values').pluck().get());
log(`${builds} builds, ${customRows} custom values in ${dir}`);

// A commit ID from the middle of the corpus: an infix of it names a handful of builds.
const commits = Number(db.prepare("SELECT count(*) FROM build_custom_values WHERE name = 'git commit id'").pluck().get());
const commit = String(db.prepare("SELECT value FROM build_custom_values WHERE name = 'git commit id' ORDER BY rowid LIMIT 1 OFFSET ?").pluck().get(Math.floor(commits / 2)));
const SHAPES: Shape[] = [
  { query: 'hostname:*ci-r*', literal: 'ci-r', column: 'hostname', table: BUILDS_TRIGRAM },
  { query: 'hostname:*runner*', literal: 'runner', column: 'hostname', table: BUILDS_TRIGRAM },
  { query: 'hostname:*.ci.*', literal: '.ci.', column: 'hostname', table: BUILDS_TRIGRAM },
  { query: 'project:*ventor*', literal: 'ventor', column: 'project', table: BUILDS_TRIGRAM },
  { query: 'user:*ren*', literal: 'ren', column: 'user', table: BUILDS_TRIGRAM },
  { query: 'user:*an*', literal: 'an', column: 'user', table: BUILDS_TRIGRAM },
  { query: 'value:*=*fd9f*', literal: 'fd9f', column: 'value', table: CUSTOM_VALUES_TRIGRAM },
  { query: `value:*=*${commit.slice(4, 12)}*`, literal: commit.slice(4, 12), column: 'value', table: CUSTOM_VALUES_TRIGRAM },
  // A whole commit ID: 38 trigrams in the AND.
  { query: `value:*=*${commit}*`, literal: commit, column: 'value', table: CUSTOM_VALUES_TRIGRAM },
  { query: 'value:*commit*=*', literal: 'commit', column: 'name', table: CUSTOM_VALUES_TRIGRAM },
];

const columnsOf = (t: string): string[] => (db.prepare('SELECT name FROM pragma_table_info(?)').all(t) as { name: string }[]).map((r) => r.name);
const bytesOf = (t: string): number =>
  Number(db.prepare("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN (? || '_data', ? || '_idx', ? || '_config', ? || '_docsize')").pluck().get(t, t, t, t));

function timed(f: () => void): number {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
}

// The peers: the tables as search migration 0002 made them (positions and columns kept).
const FULL = (t: string): string => `${t}_full`;
const peerFill: Record<string, number> = {};
for (const [t, content, key] of [
  [BUILDS_TRIGRAM, 'builds', 'seq'],
  [CUSTOM_VALUES_TRIGRAM, 'build_custom_values', 'rowid'],
] as const) {
  const cols = columnsOf(t).map((c) => `"${c}"`).join(', ');
  db.exec(`DROP TABLE IF EXISTS ${FULL(t)}`);
  db.exec(`CREATE VIRTUAL TABLE ${FULL(t)} USING fts5(${cols}, content='${content}', content_rowid='${key}', tokenize='trigram case_sensitive 1', columnsize=0)`);
  peerFill[t] = timed(() => db.exec(`INSERT INTO ${FULL(t)}(rowid, ${cols}) SELECT ${key}, ${cols} FROM ${content} WHERE ${key} IS NOT NULL`));
  log(`peer ${FULL(t)} filled in ${fmt(peerFill[t])} ms`);
}

// The alternative: one detail=none table per column (column-exact candidates, each trigram of a
// row stored once per column that has it). Bytes and candidates only.
const PER = (t: string, c: string): string => `${t}_col_${c}`;
const perColumn: Record<string, string[]> = {};
for (const [t, content, key] of [
  [BUILDS_TRIGRAM, 'builds', 'seq'],
  [CUSTOM_VALUES_TRIGRAM, 'build_custom_values', 'rowid'],
] as const) {
  perColumn[t] = columnsOf(t);
  for (const c of perColumn[t]!) {
    db.exec(`DROP TABLE IF EXISTS ${PER(t, c)}`);
    db.exec(`CREATE VIRTUAL TABLE ${PER(t, c)} USING fts5("${c}", content='${content}', content_rowid='${key}', tokenize='trigram case_sensitive 1', columnsize=0, detail=none)`);
    db.exec(`INSERT INTO ${PER(t, c)}(rowid, "${c}") SELECT ${key}, "${c}" FROM ${content} WHERE ${key} IS NOT NULL`);
  }
}

// Migration 0005 itself, on this corpus: forgotten and run again (drop, recreate, refill in batches).
await sql`DELETE FROM search_migration WHERE name = '0005_trigram_without_positions'`.execute(handle.db);
const t0 = performance.now();
await migrateSearchIndexes(handle, NO_PROGRESS_LOG);
const migrationMs = performance.now() - t0;
log(`migration 0005: ${fmt(migrationMs)} ms`);

const sizes = (): Record<string, { none: number; full: number; perColumn: number }> =>
  Object.fromEntries(
    [BUILDS_TRIGRAM, CUSTOM_VALUES_TRIGRAM].map((t) => [
      t,
      { none: bytesOf(t) / builds, full: bytesOf(FULL(t)) / builds, perColumn: perColumn[t]!.reduce((n, c) => n + bytesOf(PER(t, c)), 0) / builds },
    ]),
  );
const asFilled = sizes();
for (const t of [BUILDS_TRIGRAM, CUSTOM_VALUES_TRIGRAM]) for (const x of [t, FULL(t), ...perColumn[t]!.map((c) => PER(t, c))]) db.exec(`INSERT INTO ${x}(${x}) VALUES ('optimize')`);
const optimized = sizes();

function median(n: number, f: () => unknown): number {
  f();
  const s: number[] = [];
  for (let i = 0; i < n; i++) s.push(timed(() => void f()));
  s.sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)]!;
}

const rows: Record<string, unknown>[] = [];
for (const s of SHAPES) {
  const expr = parseQuery(s.query).expr!;
  const where = compileQuery(expr, 'sqlite');
  const page = handle.db.selectFrom('builds').select('builds.id').where('builds.seq', 'is not', null).where(where).orderBy('builds.seq').limit(100).compile();
  const count = handle.db.selectFrom('builds').select((eb) => eb.fn.countAll().as('n')).where('builds.seq', 'is not', null).where(where).compile();
  const match = ftsTrigrams(s.literal);
  // The old statement: the peer table, the phrase with its column filter.
  const old = (q: { sql: string; parameters: readonly unknown[] }) => ({
    sql: q.sql.replaceAll(`"${s.table}"`, `"${FULL(s.table)}"`),
    parameters: q.parameters.map((p) => (p === match ? ftsPhrase(s.literal, s.column) : p)),
  });
  const run = (q: { sql: string; parameters: readonly unknown[] }) => db.prepare(q.sql).all(...(q.parameters as unknown[]));
  const matches = Number((run(count)[0] as { n: number }).n);
  const oldMatches = Number((run(old(count))[0] as { n: number }).n);
  if (matches !== oldMatches) throw new Error(`${s.query}: ${matches} matches without positions, ${oldMatches} with`);
  const candidates = (t: string, m: string | undefined): number => (m === undefined ? 0 : Number(db.prepare(`SELECT count(*) FROM ${t} WHERE ${t} MATCH ?`).pluck().get(m)));
  const row = {
    query: s.query,
    matches,
    usesTrigram: match !== undefined && page.sql.includes(s.table),
    candidatesNone: candidates(s.table, match),
    candidatesFull: candidates(FULL(s.table), match === undefined ? undefined : ftsPhrase(s.literal, s.column)),
    candidatesPerColumn: candidates(PER(s.table, s.column), match),
    pageNone: median(ITER, () => run(page)),
    pageFull: median(ITER, () => run(old(page))),
    countNone: median(ITER, () => run(count)),
    countFull: median(ITER, () => run(old(count))),
  };
  rows.push(row);
  log(`  ${s.query}: done`);
}

for (const t of [BUILDS_TRIGRAM, CUSTOM_VALUES_TRIGRAM]) for (const x of [FULL(t), ...perColumn[t]!.map((c) => PER(t, c))]) db.exec(`DROP TABLE ${x}`);
await store.close();
await handle.close();

console.log(`\nTrigram tables at ${builds} builds (${customRows} custom values): bytes per build (dbstat: _data, _idx, _config)`);
console.log('table                         detail=full  detail=none  none per column  (after optimize: full / none / per column)');
for (const t of [BUILDS_TRIGRAM, CUSTOM_VALUES_TRIGRAM]) {
  const a = asFilled[t]!;
  const o = optimized[t]!;
  console.log(`${t.padEnd(30)}${a.full.toFixed(0).padStart(11)}  ${a.none.toFixed(0).padStart(11)}  ${a.perColumn.toFixed(0).padStart(15)}  (${o.full.toFixed(0)} / ${o.none.toFixed(0)} / ${o.perColumn.toFixed(0)})`);
}
console.log(`migration 0005: ${fmt(migrationMs)} ms (peer: one INSERT … SELECT per table with positions, ${Object.values(peerFill).map(fmt).join(' + ')} ms)`);
console.log(`\nInfix queries, ms (median of ${ITER}; page = first 100 in seq order, count = all matches; candidates = rows the trigram table names)`);
const header = ['query', 'matches', 'cand full', 'cand none', 'cand per col', 'page full', 'page none', 'count full', 'count none'];
const table = rows.map((r) => [
  String(r['query']), String(r['matches']),
  r['usesTrigram'] ? String(r['candidatesFull']) : '-', r['usesTrigram'] ? String(r['candidatesNone']) : '-', r['usesTrigram'] ? String(r['candidatesPerColumn']) : '-',
  fmt(r['pageFull'] as number), fmt(r['pageNone'] as number), fmt(r['countFull'] as number), fmt(r['countNone'] as number),
]);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i]!.length)));
for (const cells of [header, ...table]) console.log(cells.map((c, i) => c.padEnd(widths[i]!)).join('  '));

mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/trigram.json',
  `${JSON.stringify({ builds, customRows, cpus: cpus().length, loadavg: loadavg(), migrationMs, peerFillMs: peerFill, bytesPerBuild: { asFilled, optimized }, queries: rows }, null, 2)}\n`,
);
