// The search indexes (migration component `search`), run by openBuildStore right after the
// `store` migration that creates the tables. Which index serves which query shape is explained
// in docs/search-sql.md.

import type BetterSqlite3 from 'better-sqlite3';
import { sql, type Kysely, type Migration, type RawBuilder } from 'kysely';
import { migrate, type DatabaseHandle } from '../db/database.js';
import { INDEXED_0001, TRIGRAM_0001 } from '../db/frozen-schema.js';
import { bucketIndex } from './value-buckets.js';
import { BUILDS_TRIGRAM, BUILDS_TRIGRAM_COLUMNS, CUSTOM_VALUES_TRIGRAM, INDEXED_FIELDS, RECENT_VALUES, VALUE_TERMS, VALUE_TERMS_TRIGRAM, VALUES_TRIGRAM } from './layout.js';

export { INDEXED_FIELDS };

const q = (id: string): string => `"${id}"`;

async function run(db: Kysely<unknown>, statements: readonly string[]): Promise<void> {
  // Static DDL only: no user input ever reaches these strings.
  for (const s of statements) await sql.raw(s).execute(db);
}

function sqliteStatements(): string[] {
  const out: string[] = [];
  // (column, seq): an equality yields its builds already in availability order, so a listing
  // page (ORDER BY seq LIMIT n) stops after n index entries instead of sorting every match.
  for (const [column] of INDEXED_0001) out.push(sqliteColumnIndex(column));
  // Covering indexes: an EXISTS/IN over child rows is answered from the index alone.
  out.push('CREATE INDEX IF NOT EXISTS build_values_search_idx ON build_values (field, value, seq)');
  out.push('CREATE INDEX IF NOT EXISTS build_custom_values_search_idx ON build_custom_values (name, value, seq)');
  out.push('CREATE INDEX IF NOT EXISTS build_custom_values_value_idx ON build_custom_values (value, seq)');

  // FTS5 trigram tables over the already lower-cased columns (case_sensitive 1: no second
  // folding, so a trigram hit is a plain substring hit). External content: the text is not
  // stored twice. builds is keyed by seq, which only available builds have.
  const cols = TRIGRAM_0001.map(q).join(', ');
  const news = TRIGRAM_0001.map((c) => `new.${q(c)}`).join(', ');
  const olds = TRIGRAM_0001.map((c) => `old.${q(c)}`).join(', ');
  const T = BUILDS_TRIGRAM;
  out.push(`CREATE VIRTUAL TABLE IF NOT EXISTS ${T} USING fts5(${cols}, content='builds', content_rowid='seq', tokenize='trigram case_sensitive 1')`);
  out.push(`CREATE TRIGGER IF NOT EXISTS ${T}_ai AFTER INSERT ON builds WHEN new.seq IS NOT NULL BEGIN
    INSERT INTO ${T}(rowid, ${cols}) VALUES (new.seq, ${news});
  END`);
  out.push(`CREATE TRIGGER IF NOT EXISTS ${T}_ad AFTER DELETE ON builds WHEN old.seq IS NOT NULL BEGIN
    INSERT INTO ${T}(${T}, rowid, ${cols}) VALUES ('delete', old.seq, ${olds});
  END`);
  out.push(`CREATE TRIGGER IF NOT EXISTS ${T}_au AFTER UPDATE OF seq, ${cols} ON builds BEGIN
    INSERT INTO ${T}(${T}, rowid, ${cols}) SELECT 'delete', old.seq, ${olds} WHERE old.seq IS NOT NULL;
    INSERT INTO ${T}(rowid, ${cols}) SELECT new.seq, ${news} WHERE new.seq IS NOT NULL;
  END`);
  out.push(`INSERT INTO ${T}(rowid, ${cols}) SELECT seq, ${cols} FROM builds WHERE seq IS NOT NULL`);

  for (const [table, fts, columns] of [
    ['build_values', VALUES_TRIGRAM, ['value']],
    ['build_custom_values', CUSTOM_VALUES_TRIGRAM, ['name', 'value']],
  ] as const) {
    const c = columns.join(', ');
    const n = columns.map((x) => `new.${x}`).join(', ');
    const o = columns.map((x) => `old.${x}`).join(', ');
    out.push(`CREATE VIRTUAL TABLE IF NOT EXISTS ${fts} USING fts5(${c}, content='${table}', content_rowid='rowid', tokenize='trigram case_sensitive 1')`);
    out.push(`CREATE TRIGGER IF NOT EXISTS ${fts}_ai AFTER INSERT ON ${table} BEGIN
      INSERT INTO ${fts}(rowid, ${c}) VALUES (new.rowid, ${n});
    END`);
    out.push(`CREATE TRIGGER IF NOT EXISTS ${fts}_ad AFTER DELETE ON ${table} BEGIN
      INSERT INTO ${fts}(${fts}, rowid, ${c}) VALUES ('delete', old.rowid, ${o});
    END`);
    out.push(`CREATE TRIGGER IF NOT EXISTS ${fts}_au AFTER UPDATE ON ${table} BEGIN
      INSERT INTO ${fts}(${fts}, rowid, ${c}) VALUES ('delete', old.rowid, ${o});
      INSERT INTO ${fts}(rowid, ${c}) VALUES (new.rowid, ${n});
    END`);
    out.push(`INSERT INTO ${fts}(${fts}) VALUES ('rebuild')`);
  }
  return out;
}

/** text_pattern_ops on String columns: the same btree serves equality and LIKE 'abc%' whatever the collation. */
/** The name of the index of a catalog column (and seq), on both databases. */
export function columnIndexName(column: string): string {
  return `builds_${column}_idx`;
}

export function postgresColumnIndex(column: string, isString: boolean): string {
  return `CREATE INDEX IF NOT EXISTS ${columnIndexName(column)} ON builds (${q(column)}${isString ? ' text_pattern_ops' : ''}, seq)`;
}

export function postgresTrigramIndex(column: string): string {
  return `CREATE INDEX IF NOT EXISTS builds_${column}_trgm ON builds USING gin (${q(column)} gin_trgm_ops)`;
}

export function sqliteColumnIndex(column: string): string {
  return `CREATE INDEX IF NOT EXISTS ${columnIndexName(column)} ON builds (${q(column)}, seq)`;
}

function postgresStatements(): string[] {
  const out: string[] = ['CREATE EXTENSION IF NOT EXISTS pg_trgm'];
  for (const [column, isString] of INDEXED_0001) out.push(postgresColumnIndex(column, isString));
  out.push('CREATE INDEX IF NOT EXISTS build_values_search_idx ON build_values (field, value text_pattern_ops, seq)');
  out.push('CREATE INDEX IF NOT EXISTS build_custom_values_search_idx ON build_custom_values (name text_pattern_ops, value text_pattern_ops, seq)');
  out.push('CREATE INDEX IF NOT EXISTS build_custom_values_value_idx ON build_custom_values (value text_pattern_ops, seq)');
  for (const c of TRIGRAM_0001) out.push(postgresTrigramIndex(c));
  out.push('CREATE INDEX IF NOT EXISTS build_values_value_trgm ON build_values USING gin (value gin_trgm_ops)');
  out.push('CREATE INDEX IF NOT EXISTS build_custom_values_name_trgm ON build_custom_values USING gin (name gin_trgm_ops)');
  out.push('CREATE INDEX IF NOT EXISTS build_custom_values_value_trgm ON build_custom_values USING gin (value gin_trgm_ops)');
  return out;
}

/**
 * SQLite, migration 0002: the trigram tables filled in bulk by the ingest. A row-by-row FTS5
 * insert from a trigger costs about 20 µs (most of the SQLite ingest CPU); one
 * `INSERT … SELECT` of a batch's new rows costs about 4 µs a row. While the ingest's transaction
 * holds a row in `search_trigram_deferred`, the insert triggers stand aside and the ingest fills
 * the trigram tables itself before it commits (`trigramBatch`). The flag row never outlives the
 * transaction, so every other writer (and a database opened by another tool) keeps the triggers.
 * The tables are recreated with `columnsize=0`: nothing reads column sizes (no ranking), and the
 * `_docsize` row per entry was another B-tree insert.
 */
const DEFERRED = 'search_trigram_deferred';
const NOT_DEFERRED = `NOT EXISTS (SELECT 1 FROM ${DEFERRED})`;

/** The FTS5 options of a trigram table: with positions (0002) or without (0005 on). */
type TrigramDetail = 'full' | 'none';
const ftsDetail = (detail: TrigramDetail): string => (detail === 'none' ? ', detail=none' : '');

/**
 * The bulk-filled SQLite trigram table over the `builds` columns `columns`, with its triggers,
 * dropped first and (when `fill`) filled from the available builds in one statement: search
 * migration 0002 with the columns of that time (positions kept), migration 0005 (no positions,
 * filled by the migration in batches), and the schema reconciliation when the catalog's `infix`
 * fields change (no positions).
 */
export function sqliteBuildsTrigramStatements(columns: readonly string[], detail: TrigramDetail = 'none', fill = true): string[] {
  const out: string[] = [];
  const cols = columns.map(q).join(', ');
  const news = columns.map((c) => `new.${q(c)}`).join(', ');
  const olds = columns.map((c) => `old.${q(c)}`).join(', ');
  const T = BUILDS_TRIGRAM;
  for (const suffix of ['ai', 'ad', 'au']) out.push(`DROP TRIGGER IF EXISTS ${T}_${suffix}`);
  out.push(`DROP TABLE IF EXISTS ${T}`);
  out.push(`CREATE VIRTUAL TABLE ${T} USING fts5(${cols}, content='builds', content_rowid='seq', tokenize='trigram case_sensitive 1', columnsize=0${ftsDetail(detail)})`);
  out.push(`CREATE TRIGGER ${T}_ai AFTER INSERT ON builds WHEN new.seq IS NOT NULL AND ${NOT_DEFERRED} BEGIN
    INSERT INTO ${T}(rowid, ${cols}) VALUES (new.seq, ${news});
  END`);
  out.push(`CREATE TRIGGER ${T}_ad AFTER DELETE ON builds WHEN old.seq IS NOT NULL BEGIN
    INSERT INTO ${T}(${T}, rowid, ${cols}) VALUES ('delete', old.seq, ${olds});
  END`);
  // A build becoming available (seq NULL -> n) during a deferred ingest is indexed in bulk; any
  // change to an already available build is kept in sync here in every case.
  out.push(`CREATE TRIGGER ${T}_au AFTER UPDATE OF seq, ${cols} ON builds WHEN old.seq IS NOT NULL OR ${NOT_DEFERRED} BEGIN
    INSERT INTO ${T}(${T}, rowid, ${cols}) SELECT 'delete', old.seq, ${olds} WHERE old.seq IS NOT NULL;
    INSERT INTO ${T}(rowid, ${cols}) SELECT new.seq, ${news} WHERE new.seq IS NOT NULL;
  END`);
  if (fill) out.push(`INSERT INTO ${T}(rowid, ${cols}) SELECT seq, ${cols} FROM builds WHERE seq IS NOT NULL`);
  return out;
}

function sqliteBulkStatements(): string[] {
  const out: string[] = [`CREATE TABLE IF NOT EXISTS ${DEFERRED} (flag INTEGER PRIMARY KEY)`];
  out.push(...sqliteBuildsTrigramStatements(TRIGRAM_0001, 'full'));
  for (const t of [VALUES_TRIGRAM, CUSTOM_VALUES_TRIGRAM]) {
    for (const suffix of ['ai', 'ad', 'au']) out.push(`DROP TRIGGER IF EXISTS ${t}_${suffix}`);
    out.push(`DROP TABLE IF EXISTS ${t}`);
  }
  for (const [table, fts, columns] of [
    ['build_values', VALUES_TRIGRAM, ['value']],
    ['build_custom_values', CUSTOM_VALUES_TRIGRAM, ['name', 'value']],
  ] as const) {
    out.push(...sqliteChildTrigramStatements(table, fts, columns, 'full'));
    out.push(`INSERT INTO ${fts}(${fts}) VALUES ('rebuild')`);
  }
  return out;
}

/** A bulk-filled trigram table over child rows keyed by their implicit rowid, with its triggers (not filled). */
function sqliteChildTrigramStatements(table: string, fts: string, columns: readonly string[], detail: TrigramDetail): string[] {
  const out: string[] = [];
  const c = columns.join(', ');
  const n = columns.map((x) => `new.${x}`).join(', ');
  const o = columns.map((x) => `old.${x}`).join(', ');
  out.push(`CREATE VIRTUAL TABLE ${fts} USING fts5(${c}, content='${table}', content_rowid='rowid', tokenize='trigram case_sensitive 1', columnsize=0${ftsDetail(detail)})`);
  out.push(`CREATE TRIGGER ${fts}_ai AFTER INSERT ON ${table} WHEN ${NOT_DEFERRED} BEGIN
      INSERT INTO ${fts}(rowid, ${c}) VALUES (new.rowid, ${n});
    END`);
  out.push(`CREATE TRIGGER ${fts}_ad AFTER DELETE ON ${table} BEGIN
      INSERT INTO ${fts}(${fts}, rowid, ${c}) VALUES ('delete', old.rowid, ${o});
    END`);
  out.push(`CREATE TRIGGER ${fts}_au AFTER UPDATE ON ${table} BEGIN
      INSERT INTO ${fts}(${fts}, rowid, ${c}) VALUES ('delete', old.rowid, ${o});
      INSERT INTO ${fts}(rowid, ${c}) VALUES (new.rowid, ${n});
    END`);
  return out;
}

/**
 * Migration 0003: the values of multi-valued fields are searched by wildcard through their
 * distinct terms (layout.ts VALUE_TERMS). At 1M builds build_values holds 5.3M rows but only
 * ~38k distinct (field, value) pairs (`requested` has 28 values over 1.4M rows): a trigram table
 * per row made `requested:*bundle*` look up 57k candidate rows at random (~90 ms); through the
 * terms it reads one term's builds in order from the covering index (field, value, seq). Ingest
 * indexes a new term once instead of every row.
 *
 * SQLite: the terms table is filled from build_values by a trigger (standing aside during a
 * bulk ingest, which fills it per batch, see trigramBatch), and keeps its FTS5 table by trigger.
 * Terms are never removed: a term without rows matches no build. Its `id` is an INTEGER PRIMARY
 * KEY, stable across VACUUM (unlike the implicit rowids the old table was keyed by). The `field`
 * made here is the column name; store migration 0016 turns it into the field's code in both tables
 * (store/schema/value-field-codes.ts).
 */
function sqliteValueTermsStatements(): string[] {
  const out: string[] = [];
  for (const suffix of ['ai', 'ad', 'au']) out.push(`DROP TRIGGER IF EXISTS ${VALUES_TRIGRAM}_${suffix}`);
  out.push(`DROP TABLE IF EXISTS ${VALUES_TRIGRAM}`);
  out.push(`CREATE TABLE ${VALUE_TERMS} (id INTEGER PRIMARY KEY, field TEXT NOT NULL, value TEXT NOT NULL, UNIQUE (field, value))`);
  const F = VALUE_TERMS_TRIGRAM;
  out.push(`CREATE VIRTUAL TABLE ${F} USING fts5(value, content='${VALUE_TERMS}', content_rowid='id', tokenize='trigram case_sensitive 1', columnsize=0)`);
  out.push(`CREATE TRIGGER ${F}_ai AFTER INSERT ON ${VALUE_TERMS} BEGIN
    INSERT INTO ${F}(rowid, value) VALUES (new.id, new.value);
  END`);
  out.push(`CREATE TRIGGER ${F}_ad AFTER DELETE ON ${VALUE_TERMS} BEGIN
    INSERT INTO ${F}(${F}, rowid, value) VALUES ('delete', old.id, old.value);
  END`);
  out.push(`CREATE TRIGGER ${VALUE_TERMS}_ai AFTER INSERT ON build_values WHEN ${NOT_DEFERRED} BEGIN
    INSERT OR IGNORE INTO ${VALUE_TERMS} (field, value) VALUES (new.field, new.value);
  END`);
  out.push(`CREATE TRIGGER ${VALUE_TERMS}_au AFTER UPDATE OF field, value ON build_values BEGIN
    INSERT OR IGNORE INTO ${VALUE_TERMS} (field, value) VALUES (new.field, new.value);
  END`);
  out.push(`INSERT OR IGNORE INTO ${VALUE_TERMS} (field, value) SELECT DISTINCT field, value FROM build_values ORDER BY field, value`);
  return out;
}

/**
 * PostgreSQL: a statement-level trigger adds a statement's new terms (one INSERT … SELECT DISTINCT
 * per ingest batch, in a fixed order so concurrent writers cannot deadlock on them); the GIN
 * trigram index moves from every row of build_values to the terms.
 */
function postgresValueTermsStatements(): string[] {
  return [
    'DROP INDEX IF EXISTS build_values_value_trgm',
    `CREATE TABLE ${VALUE_TERMS} (field text NOT NULL, value text NOT NULL, PRIMARY KEY (field, value))`,
    `CREATE INDEX ${VALUE_TERMS}_trgm ON ${VALUE_TERMS} USING gin (value gin_trgm_ops)`,
    `CREATE FUNCTION ${VALUE_TERMS}_add() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO ${VALUE_TERMS} (field, value) SELECT DISTINCT field, value FROM new_rows ORDER BY field, value ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$`,
    `CREATE TRIGGER ${VALUE_TERMS}_ai AFTER INSERT ON build_values REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${VALUE_TERMS}_add()`,
    `CREATE TRIGGER ${VALUE_TERMS}_au AFTER UPDATE ON build_values REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${VALUE_TERMS}_add()`,
    `INSERT INTO ${VALUE_TERMS} (field, value) SELECT DISTINCT field, value FROM build_values ORDER BY field, value ON CONFLICT DO NOTHING`,
  ];
}

/**
 * Bulk upkeep of the SQLite trigram tables and value terms for one ingest transaction: `begin()`
 * right after the transaction started (notes where the new rows will start and sets the flag that
 * turns the insert triggers off), `finish(maxSeqBefore)` after the batch's rows are written and
 * before the commit (indexes the builds with a seq above it, adds the new terms of their values,
 * in build_values or gathered apart, and indexes the custom values among the child rows added to
 * build_custom_values since `begin`, clears the flag).
 * Undefined when the database has no deferred-trigram support (search indexes not migrated).
 */
export interface TrigramBatch {
  begin(): void;
  finish(maxSeqBefore: number): void;
}

export function trigramBatch(sqlite: BetterSqlite3.Database): TrigramBatch | undefined {
  const exists = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").pluck();
  if (exists.get(DEFERRED) === undefined) return undefined;
  const T = BUILDS_TRIGRAM;
  const cols = BUILDS_TRIGRAM_COLUMNS.map(q).join(', ');
  const setFlag = sqlite.prepare(`INSERT INTO ${DEFERRED} (flag) VALUES (1)`);
  const clearFlag = sqlite.prepare(`DELETE FROM ${DEFERRED}`);
  // New rows get rowids above the highest one (no AUTOINCREMENT: max(rowid) + 1).
  const maxCustom = sqlite.prepare('SELECT coalesce(max(rowid), 0) FROM build_custom_values').pluck();
  const fillBuilds = sqlite.prepare(`INSERT INTO ${T}(rowid, ${cols}) SELECT seq, ${cols} FROM builds WHERE seq > ?`);
  // New terms only (the few not seen before); each new term's trigger indexes its trigrams. The
  // batch's value rows are those of its new builds, every one with a seq above the highest seq
  // ever used before the batch (ingest/plan.ts hands out seqs after it): read through the seq
  // index, which holds the key (field, value) too (store migration 0015: build_values has no rowid).
  // The values of spread fields gathered apart (store/ingest/recent-rows.ts) join the terms as they
  // arrive, like the others: a move into build_values then adds no term.
  const addTerms = [
    'build_values',
    ...(exists.get(RECENT_VALUES) === undefined ? [] : [RECENT_VALUES]),
  ].map((table) => sqlite.prepare(`INSERT OR IGNORE INTO ${VALUE_TERMS} (field, value) SELECT field, value FROM ${table} WHERE seq > ?`));
  const fillCustom = sqlite.prepare(`INSERT INTO ${CUSTOM_VALUES_TRIGRAM}(rowid, name, value) SELECT rowid, name, value FROM build_custom_values WHERE rowid > ?`);
  let customFrom = 0;
  return {
    begin() {
      customFrom = Number(maxCustom.get());
      setFlag.run();
    },
    finish(maxSeqBefore) {
      fillBuilds.run(maxSeqBefore);
      for (const add of addTerms) add.run(maxSeqBefore);
      fillCustom.run(customFrom);
      clearFlag.run();
    },
  };
}

/** Rows per statement when migration 0005 refills a trigram table (each its own commit on SQLite). */
const TRIGRAM_FILL_BATCH = 20_000;

/**
 * Migration 0005 (SQLite): the trigram tables of `builds` and of the custom values without
 * positions (`detail=none`). The compiler only asks them for candidates, always followed by the
 * exact LIKE on the real column, so positions and columns bought nothing but bytes: at 100k demo
 * builds the two tables fell from 181 + 196 to 38 + 56 bytes a build (docs/search-sql.md,
 * "Trigram tables without positions"). Both are dropped and recreated (columns of `builds_trigram`
 * as they stand: the catalog reconciliation may have changed them since 0002) and refilled a range
 * of keys at a time, with progress in the log. SQLite runs the search migrations without a
 * transaction: each batch commits by itself, and an interrupted run starts over from the drop.
 * The value terms' table (0003) keeps its positions: it is small (one row per distinct term).
 */
async function sqliteTrigramWithoutPositions(db: Kysely<unknown>, log: ProgressLog): Promise<void> {
  const indexed = (await sql<{ name: string }>`SELECT name FROM pragma_table_info(${BUILDS_TRIGRAM})`.execute(db)).rows.map((r) => r.name);
  const columns = indexed.length > 0 ? indexed : TRIGRAM_0001;
  const cols = columns.map(q).join(', ');
  await run(db, sqliteBuildsTrigramStatements(columns, 'none', false));
  await fillInBatches(db, log, 'builds', 'seq', (lo, hi) => sql`INSERT INTO ${sql.table(BUILDS_TRIGRAM)}(rowid, ${sql.raw(cols)}) SELECT seq, ${sql.raw(cols)} FROM builds WHERE seq > ${lo} AND seq <= ${hi}`);

  const C = CUSTOM_VALUES_TRIGRAM;
  await run(db, [...['ai', 'ad', 'au'].map((suffix) => `DROP TRIGGER IF EXISTS ${C}_${suffix}`), `DROP TABLE IF EXISTS ${C}`]);
  await run(db, sqliteChildTrigramStatements('build_custom_values', C, ['name', 'value'], 'none'));
  await fillInBatches(db, log, 'build_custom_values', 'rowid', (lo, hi) => sql`INSERT INTO ${sql.table(C)}(rowid, name, value) SELECT rowid, name, value FROM build_custom_values WHERE rowid > ${lo} AND rowid <= ${hi}`);
}

/**
 * Runs `insert(lo, hi)` over the key range of `table` in steps of TRIGRAM_FILL_BATCH keys, with a
 * log line per step (the logger made only when the table has rows).
 */
async function fillInBatches(db: Kysely<unknown>, progress: ProgressLog, table: string, key: string, insert: (lo: number, hi: number) => RawBuilder<unknown>): Promise<void> {
  const range = (await sql<{ lo: number | null; hi: number | null; n: number }>`SELECT min(${sql.ref(key)}) AS lo, max(${sql.ref(key)}) AS hi, count(${sql.ref(key)}) AS n FROM ${sql.table(table)}`.execute(db)).rows[0];
  if (range === undefined || range.lo === null || range.hi === null) return;
  const log = progress();
  const started = performance.now();
  log.info({ table, rows: range.n }, `trigram table of ${table}: indexing ${range.n} rows without positions`);
  let done = 0;
  for (let after = Number(range.lo) - 1; after < Number(range.hi); after += TRIGRAM_FILL_BATCH) {
    const hi = Math.min(after + TRIGRAM_FILL_BATCH, Number(range.hi));
    await insert(after, hi).execute(db);
    done += Number((await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)} WHERE ${sql.ref(key)} > ${after} AND ${sql.ref(key)} <= ${hi}`.execute(db)).rows[0]!.n);
    log.info({ table, done, total: range.n }, `trigram table of ${table}: ${done} of ${range.n} rows`);
    // A turn of the event loop, so that the log line is written now.
    await new Promise((r) => setImmediate(r));
  }
  log.info({ table, rows: range.n, ms: Math.round(performance.now() - started) }, `trigram table of ${table}: ${range.n} rows indexed`);
}

/**
 * Where a search migration writes its progress: a pino-like logger, made on first use (the store
 * passes its own; the search layer makes none).
 */
export type ProgressLog = () => { info(fields: object, message: string): void };

/** Progress nowhere, for a caller with no log. */
export const NO_PROGRESS_LOG: ProgressLog = () => ({ info: () => {} });

/**
 * The migrations of component `search` for one dialect. They choose their statements by the
 * dialect's name, not through the dialect hooks (sqlite.ts, postgres.ts): a released migration
 * must do what it did when it was written, whatever today's hooks do.
 */
export function searchMigrations(dialect: DatabaseHandle['dialect'], log: ProgressLog): Record<string, Migration> {
  return {
    '0001_search_indexes': {
      up: (db) => run(db, dialect === 'sqlite' ? sqliteStatements() : postgresStatements()),
    },
    '0002_bulk_trigram': {
      up: (db) => run(db, dialect === 'sqlite' ? sqliteBulkStatements() : []),
    },
    '0003_value_terms': {
      up: (db) => run(db, dialect === 'sqlite' ? sqliteValueTermsStatements() : postgresValueTermsStatements()),
    },
    // Custom values served by one index: the (value, seq) index only answered key-value terms
    // whose name is a pattern (`value:*=abc`); the compiler now walks the distinct names of
    // (name, value, seq) for those (compile.ts `byCustomNames`). The index cost a random-position
    // key per build (a commit ID) in every ingest commit. Same statement on both databases; an
    // index drop frees its pages without reading the rows, so there is nothing to batch.
    '0004_custom_values_one_index': {
      up: (db) => run(db, ['DROP INDEX IF EXISTS build_custom_values_value_idx']),
    },
    // Trigram tables without positions (SQLite; see sqliteTrigramWithoutPositions). PostgreSQL's
    // pg_trgm GIN indexes keep no positions anyway: nothing to do there.
    '0005_trigram_without_positions': {
      up: async (db) => {
        if (dialect === 'sqlite') await sqliteTrigramWithoutPositions(db, log);
      },
    },
    // SQLite: the duration's `(value, seq)` btree gives way to the bucketed one (value-buckets.ts;
    // the schema reconciliation makes the same for a field added later). Building it reads the
    // column once and sorts: ~2 s at a million builds.
    '0006_duration_by_bucket': {
      up: (db) => run(db, dialect === 'sqlite' ? ['DROP INDEX IF EXISTS builds_buildduration_idx', bucketIndex('buildduration')] : []),
    },
  };
}

/** Creates the search indexes (component `search`); call after the `store` migration. */
export async function migrateSearchIndexes(handle: DatabaseHandle, log: ProgressLog): Promise<void> {
  await migrate(handle, 'search', searchMigrations(handle.dialect, log));
}

/**
 * Rebuilds the SQLite trigram tables from their content. Needed for the custom values' table
 * after a VACUUM, which may renumber the implicit rowids it is keyed by (the builds table's is
 * keyed by seq, the value terms' by an INTEGER PRIMARY KEY).
 */
export function rebuildTrigramTables(handle: DatabaseHandle): void {
  if (!handle.sqlite) return;
  const T = BUILDS_TRIGRAM;
  const cols = BUILDS_TRIGRAM_COLUMNS.map(q).join(', ');
  handle.sqlite.transaction(() => {
    // Not 'rebuild' for builds: it would index incomplete builds (seq NULL) too.
    handle.sqlite!.exec(`INSERT INTO ${T}(${T}) VALUES ('delete-all')`);
    handle.sqlite!.exec(`INSERT INTO ${T}(rowid, ${cols}) SELECT seq, ${cols} FROM builds WHERE seq IS NOT NULL`);
    for (const t of [VALUE_TERMS_TRIGRAM, CUSTOM_VALUES_TRIGRAM]) handle.sqlite!.exec(`INSERT INTO ${t}(${t}) VALUES ('rebuild')`);
  })();
}
