// Migrations of the `store` component: the build tables of docs/store.md on SQLite and PostgreSQL.
// Migrations are frozen: they create what they created when they were written, whatever the field
// catalog holds today (0001 reads its attribute columns from frozen-schema.ts). The catalog's part
// of the schema (columns, indexes and derived values of fields added since) is reconciled after
// the migrations, every time the store opens (reconcile.ts). Adding a field needs no migration.

import { markTestBackfill, testDimension, testPacks } from './test-migration.js';
import { sql, type Kysely, type Migration } from 'kysely';
import { ATTRIBUTE_COLUMNS, BOOKKEEPING_COLUMNS } from './columns.js';
import { migrate, migrationRan, type DatabaseHandle } from '../../db/database.js';
import { COLUMNS_0001, FIELDS_0001 } from '../../db/frozen-schema.js';
import { decodeEvents } from '../events/event-codec.js';
import { COUNTED_TASK_OUTCOMES, TASK_COUNT_COLUMNS, tasksOf } from '../events/tasks.js';
import { backfillRollups, TASK_ROLLUPS, createFacetRollupTable, createFailureGroupRollupTables, createRollupTables, createTestRollupTable, failureGroupRollupAdditions, testRollupAdditions, textKeyedFacetRollupStatements, textKeyedRollupStatements } from '../analytics/rollups.js';
import { migrateRollupKeys } from './rollup-keys.js';
import { migrateTaskRollupPaths } from './task-rollup-paths.js';
import { createLogger } from '../../log.js';
import { compactTasks } from './compact-tasks.js';
import { migrateValuesKey } from './values-key.js';
import { migrateValueFieldCodes } from './value-field-codes.js';
import { migrateHashBytes } from './hash-bytes.js';
import { migrateEventsRowid } from './events-rowid.js';
import { migrateSearchIndexes, NO_PROGRESS_LOG, searchMigrations } from '../../sql/indexes.js';
import { layoutOf } from './layout.js';

// Migrations take Kysely<any>, not the typed Database (db/schema.ts): a migration must keep doing
// what it did when it was released, whatever the tables' types say today (kysely's own advice).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

for (const c of ATTRIBUTE_COLUMNS) {
  if ((BOOKKEEPING_COLUMNS as readonly string[]).includes(c.column)) {
    throw new Error(`Catalog column ${c.column} collides with a bookkeeping column of builds`);
  }
}

async function initial(db: Db): Promise<void> {
  let builds = db.schema
    .createTable('builds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // NULL while the build is incomplete; assigned when its BuildFinished is stored.
    .addColumn('seq', 'bigint', (c) => c.unique())
    .addColumn('available_at', 'bigint')
    .addColumn('tool_type', 'text', (c) => c.notNull())
    .addColumn('tool_version', 'text', (c) => c.notNull())
    .addColumn('agent_version', 'text', (c) => c.notNull())
    // The project in its original case, for project-level visibility (the `project` column is
    // the lower-cased search attribute).
    .addColumn('project_name', 'text')
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addColumn('attributes', 'text', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull());
  for (const [column, type] of COLUMNS_0001) builds = builds.addColumn(column, type);
  await builds.execute();
  await db.schema.createIndex('builds_available_at').on('builds').columns(['available_at', 'seq']).execute();
  await db.schema.createIndex('builds_project_name_seq').on('builds').columns(['project_name', 'seq']).execute();

  // The events of a build, one chunk per ingested line, in order. `hash` identifies the line's
  // content so that a re-sent part of a build is recognised as already stored.
  await db.schema
    .createTable('build_events')
    .addColumn('build_id', 'text', (c) => c.notNull())
    .addColumn('chunk', 'integer', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('event_count', 'integer', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('build_events_pk', ['build_id', 'chunk'])
    .execute();

  await db.schema
    .createTable('build_values')
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('field', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('build_custom_values')
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}

/**
 * 0002: the attributes JSON moves out of the `builds` row into `build_attributes`, keyed by seq
 * (only available builds have attributes). A search that checks a column visits `builds` rows;
 * without ~1.3 KB of JSON in the middle of each row it reads far fewer pages (4x less CPU per row
 * read at 100k builds). The `attributes` column of `builds` stays (NOT NULL, now always '{}'), so
 * older writers and readers keep working; readers prefer `build_attributes`.
 */
async function attributesTable(db: Db, dialect: DatabaseHandle['dialect']): Promise<void> {
  // SQLite: INTEGER PRIMARY KEY makes seq the rowid, so the table is its own index.
  await db.schema
    .createTable('build_attributes')
    .addColumn('seq', layoutOf(dialect).int64, (c) => c.primaryKey())
    .addColumn('attributes', 'text', (c) => c.notNull())
    .execute();
  await sql`INSERT INTO build_attributes (seq, attributes) SELECT seq, attributes FROM builds WHERE seq IS NOT NULL`.execute(db);
  await sql`UPDATE builds SET attributes = '{}' WHERE attributes <> '{}'`.execute(db);
}

/** Name of the SQLite index that covers a listing's summary columns by seq (0003). */
export const LISTING_INDEX = 'builds_listing';

/** 0006: builds by start time with outcome and duration (the trends; the analytics index reads outcomes and starts from it). */
export const TREND_INDEX = 'builds_trend';

/**
 * 0003 (SQLite): the summary columns of a listing, by seq, in one index. A page read through the
 * posting bitmaps fetches its builds by seq; from this index that is one B-tree lookup per build
 * instead of two (the unique index on seq, then the row), and the index's pages are dense.
 * PostgreSQL pages do not read builds by a list of seqs, so it has no such index.
 */
async function listingIndex(db: Db, dialect: DatabaseHandle['dialect']): Promise<void> {
  if (dialect !== 'sqlite') return;
  await db.schema
    .createIndex(LISTING_INDEX)
    .on('builds')
    .columns(['seq', 'id', 'available_at', 'tool_type', 'tool_version', 'agent_version', 'project_name'])
    .execute();
}

/** Table of the catalog fields whose values the stored builds carry (see reconcile.ts). */
export const STORE_FIELDS = 'store_fields';

/**
 * 0004: `store_fields` records which catalog fields the stored builds were derived with, so that
 * the reconciliation knows which fields are new to this database. Seeded with the fields of 0001:
 * every build stored until now was derived with exactly those.
 */
async function storeFields(db: Db): Promise<void> {
  await db.schema.createTable(STORE_FIELDS).addColumn('name', 'text', (c) => c.primaryKey()).execute();
  await db.insertInto(STORE_FIELDS).values(FIELDS_0001.map((name) => ({ name }))).execute();
}

/**
 * 0005: one row per finished task of every available build (store/events/tasks.ts), written at ingest,
 * so that trends count avoided tasks and rank slow and failing tasks in the database. Builds
 * stored before 0005 get their rows from their events here.
 */
async function buildTasks(db: Db, dialect: DatabaseHandle['dialect']): Promise<void> {
  await db.schema
    .createTable('build_tasks')
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('start_ms', 'double precision', (c) => c.notNull())
    .addColumn('duration_ms', 'double precision', (c) => c.notNull())
    .addColumn('cacheable', 'integer')
    .execute();
  await db.schema.createIndex('build_tasks_seq').on('build_tasks').columns(['seq']).execute();
  await backfillTasks(db, dialect);
}

async function backfillTasks(db: Db, _dialect: DatabaseHandle['dialect']): Promise<void> {
  let after = 0;
  for (;;) {
    const builds = (await db.selectFrom('builds').select(['id', 'seq']).where('seq', '>', after).orderBy('seq').limit(500).execute()) as { id: string; seq: number | string }[];
    if (builds.length === 0) return;
    for (const b of builds) {
      const chunks = (await db.selectFrom('build_events').select('events').where('build_id', '=', b.id).orderBy('chunk').execute()) as { events: string }[];
      const rows = tasksOf(chunks.flatMap((c) => decodeEvents(c.events))).map((t) => ({
        seq: Number(b.seq),
        path: t.path,
        outcome: t.outcome,
        start_ms: t.start,
        duration_ms: t.duration,
        cacheable: t.cacheable === null ? null : t.cacheable ? 1 : 0,
      }));
      for (let i = 0; i < rows.length; i += 500) await db.insertInto('build_tasks').values(rows.slice(i, i + 500)).execute();
    }
    after = Number(builds[builds.length - 1]!.seq);
  }
}

/**
 * 0006: what lets trends aggregate without sorting every task row: the builds' start time,
 * outcome and duration by start time (a 30-day trend of every build is one range scan of this
 * index); the tasks by path (slowest and failing tasks are read in path order, so grouping by
 * path needs no sort); and one row per build with its tasks counted by outcome
 * (build_task_counts, written at ingest with build_tasks), so the per-period task counts group
 * builds, not tasks.
 */
async function trendIndexes(db: Db, dialect: DatabaseHandle['dialect']): Promise<void> {
  await db.schema.createIndex(TREND_INDEX).ifNotExists().on('builds').columns(['buildstarttime', 'buildoutcome', 'buildduration', 'seq']).execute();
  await db.schema.createIndex('build_tasks_path').on('build_tasks').columns(['path', 'seq', 'outcome', 'duration_ms']).execute();
  let counts = db.schema.createTable('build_task_counts').addColumn('seq', layoutOf(dialect).int64, (c) => c.primaryKey());
  for (const c of TASK_COUNT_COLUMNS) counts = counts.addColumn(c, 'integer', (col) => col.notNull());
  await counts.execute();
  const sums = COUNTED_TASK_OUTCOMES.map((o, i) => sql`sum(CASE WHEN outcome = ${o} THEN 1 ELSE 0 END) AS ${sql.ref(TASK_COUNT_COLUMNS[i]!)}`);
  await sql`INSERT INTO build_task_counts (seq, ${sql.join(TASK_COUNT_COLUMNS.map((c) => sql.ref(c)))})
    SELECT seq, ${sql.join(sums)} FROM build_tasks GROUP BY seq`.execute(db);
}

/** Table of deleted builds (retention, prune): see deleted_builds in docs/store.md. */
export const DELETED_BUILDS = 'deleted_builds';

/**
 * 0007: `deleted_builds` remembers the builds that retention or `buildscope prune` deleted: their
 * ID (so that `GET /api/builds/{id}` says "build deleted" instead of "unknown"), their project
 * (the answer is given only to callers who could have seen the build) and their seq (an export
 * stream resuming at a deleted build continues after it, and seqs are never handed out again:
 * the ingest numbers new builds after the highest seq ever used, deleted or not). Also indexes
 * the child-row tables by seq, which a deletion looks them up by.
 */
async function deletedBuilds(db: Db): Promise<void> {
  await db.schema
    .createTable(DELETED_BUILDS)
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('seq', 'bigint')
    .addColumn('project_name', 'text')
    .addColumn('deleted_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('deleted_builds_seq').on(DELETED_BUILDS).column('seq').execute();
  // Deleting a build's child rows by seq: without these a batch scanned every row of both tables
  // (their search indexes lead with the field or value). New rows have the highest seqs, so ingest
  // appends to these indexes at their end.
  await db.schema.createIndex('build_values_seq').on('build_values').column('seq').execute();
  await db.schema.createIndex('build_custom_values_seq').on('build_custom_values').column('seq').execute();
}

/**
 * 0008: compressed event chunks and attributes (event-codec.ts, docs/store.md "Compact events").
 * New chunks are stored in `events_packed` with `events` empty, new attributes in
 * `attributes_packed` with `attributes` empty; readers take either form. Rows written before are
 * converted after the migrations, in batches with progress (compact-events.ts), so the migration
 * itself only adds the columns and the (partial) indexes of the rows left to convert.
 */
async function packedEvents(db: Db, dialect: DatabaseHandle['dialect']): Promise<void> {
  await db.schema
    .alterTable('build_events')
    .addColumn('events_packed', layoutOf(dialect).bytes)
    .execute();
  // The rows still to convert, and only those: the conversion finds them by this index, and once
  // every row is compressed it is empty, so opening a converted store costs one look-up in it.
  await sql`CREATE INDEX build_events_text ON build_events (build_id, chunk) WHERE events_packed IS NULL`.execute(db);
  // The derived attributes JSON likewise (event-codec.ts `packAttributes`), `attributes` left empty.
  await db.schema
    .alterTable('build_attributes')
    .addColumn('attributes_packed', layoutOf(dialect).bytes)
    .execute();
  await sql`CREATE INDEX build_attributes_text ON build_attributes (seq) WHERE attributes_packed IS NULL`.execute(db);
}

/**
 * 0009: the trend rollups (store/analytics/rollups.ts): per 15-minute slot, hour and UTC day, and per value
 * of the rollup dimensions, the builds, their task counts, a histogram of their durations and
 * their tasks' runs by path; maintained at ingest and prune from here on. An existing database
 * gets them from its builds here, in batches of seqs, with progress in the log.
 */
async function rollups(db: Db, dialect: DatabaseHandle['dialect']): Promise<void> {
  await createRollupTables(db, dialect);
  // The statements of this layout (key text and dimension columns), reading build_tasks as 0005
  // wrote it: 0012 compacts the task rows and 0013 converts the rollups later.
  await fillRollups(db, dialect, 'trend rollups', (d, di, selection, sign) => textKeyedRollupStatements(d, di, selection, sign, 'text'));
}

/** Least time between two progress lines of a migration that converts data. */
const PROGRESS_LOG_MS = 5000;

/**
 * The progress report of a migration that converts data, for every such migration: a line in the
 * log (`store`, made only when there is something to convert) at most every PROGRESS_LOG_MS, and
 * always the last of each table, so that a million builds do not make a thousand lines.
 */
function progressLog(what: string, unit: string): (done: number, total: number, table?: string) => void {
  let log: ReturnType<typeof createLogger> | undefined;
  let lastLog = -Infinity;
  return (done, total, table) => {
    if (done < total && performance.now() - lastLog < PROGRESS_LOG_MS) return;
    lastLog = done < total ? performance.now() : -Infinity;
    log ??= createLogger('store');
    log.info({ ...(table === undefined ? {} : { table }), done, total }, `${what}: ${table === undefined ? '' : `${table} `}${done} of ${total} ${unit}`);
  };
}

/** Fills rollups from the stored builds, with progress in the log. */
async function fillRollups(db: Db, dialect: DatabaseHandle['dialect'], what: string, statements: typeof textKeyedFacetRollupStatements): Promise<void> {
  await backfillRollups(db, dialect, progressLog(what, 'builds'), statements);
}

/**
 * 0022: the per-test rollups (rollups.ts, TEST_ROLLUPS), filled from the test rows stored so far,
 * 20,000 builds a statement with progress in the log. Builds the test backfill has not reached yet
 * (0021) are added when it writes their rows. The index of failed attempts by group gets the
 * test's id, so that the failure groups' counts read no row of test_runs.
 */
async function testRollups(db: Db, dialect: DatabaseHandle['dialect']): Promise<void> {
  await createTestRollupTable(db, dialect);
  // Empty before the fill, so that a store whose later migrations are run again is not counted twice.
  await sql`DELETE FROM test_rollups`.execute(db);
  await sql`DROP INDEX IF EXISTS test_runs_group`.execute(db);
  await sql`CREATE INDEX test_runs_group ON test_runs (group_id, seq, test_id) WHERE group_id IS NOT NULL`.execute(db);
  await fillRollups(db, dialect, 'test rollups', (d, dia, selection) => testRollupAdditions(d, dia, selection));
}

/**
 * 0023: the failure groups' rollups (rollups.ts, FAILURE_GROUP_ROLLUPS), filled from the failures
 * stored so far with progress in the log, like 0022's.
 */
async function failureGroupRollups(db: Db, dialect: DatabaseHandle['dialect']): Promise<void> {
  await createFailureGroupRollupTables(db, dialect);
  await sql`DELETE FROM failure_group_rollups`.execute(db);
  await sql`DELETE FROM failure_group_test_rollups`.execute(db);
  await fillRollups(db, dialect, 'failure group rollups', (d, dia, selection) => failureGroupRollupAdditions(d, dia, selection));
}

/**
 * 0010: the attestations the provenance service made from each build, so that the build's page can
 * list them (the attestation stores are addressed by package and digest, not by build). Keyed by
 * the attestation's URI (one envelope written to two stores is two rows); the seq lets a deletion
 * remove a build's rows with its other child rows.
 */
async function buildAttestations(db: Db): Promise<void> {
  await db.schema
    .createTable('build_attestations')
    .addColumn('attestation_uri', 'text', (c) => c.primaryKey())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('build_id', 'text', (c) => c.notNull())
    .addColumn('package_url', 'text', (c) => c.notNull())
    .addColumn('digest', 'text', (c) => c.notNull())
    .addColumn('predicate_type', 'text', (c) => c.notNull())
    .addColumn('store', 'text', (c) => c.notNull())
    .addColumn('published_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('build_attestations_seq').on('build_attestations').column('seq').execute();
}

/**
 * 0011: the facet rollups (store/analytics/rollups.ts): per value of the rollup dimensions, the available
 * builds by build tool, user and tag, so the list page's facets of the queries the trend rollups
 * answer read a few thousand rows instead of every build; maintained at ingest and prune from
 * here on. An existing database gets them from its builds here, in batches, with progress.
 */
async function facetRollups(db: Db, dialect: DatabaseHandle['dialect']): Promise<void> {
  await createFacetRollupTable(db, dialect);
  await fillRollups(db, dialect, 'facet rollups', textKeyedFacetRollupStatements);
}

/**
 * 0013: the rollups keyed by an integer key ID (store/schema/rollup-keys.ts): the distinct dimension
 * values once in `rollup_keys`, every rollup row naming them by `kid` instead of holding their
 * JSON text and the values again. Converts the tables of 0009 and 0011 in batches, with progress.
 */
async function rollupKeys(db: Db, dialect: DatabaseHandle['dialect']): Promise<void> {
  const report = progressLog('rollup keys', 'rows');
  await migrateRollupKeys(db, dialect, (table, done, total) => report(done, total, table));
}

/**
 * 0025: the task rollups name a path by its task_paths id instead of its text
 * (store/schema/task-rollup-paths.ts). Converts the table in batches, with progress.
 */
async function taskRollupPaths(db: Db, dialect: DatabaseHandle['dialect']): Promise<void> {
  const report = progressLog('task rollup paths', 'rows');
  await migrateTaskRollupPaths(db, dialect, (done, total) => report(done, total, TASK_ROLLUPS));
}

/** Table of the one row holding the last events_key handed out (0014). */
export const EVENTS_KEY_COUNTER = 'events_key_counter';
/** Builds per batch of migration 0014: their keys set and their chunks copied in one step. */
const EVENTS_KEY_BATCH = 1000;

/**
 * 0014: the events of a build are keyed by an integer the build gets when it is first stored, in
 * arrival order (`builds.events_key`, handed out from the one-row `events_key_counter`, which only
 * grows), instead of by its random ID: storing a build appends its chunks at the end of the
 * B-tree instead of inserting them at a random page (docs/store.md, "Events keyed in arrival
 * order"). SQLite: a WITHOUT ROWID table on (events_key, chunk), so the key is the table and no
 * second index is kept; PostgreSQL: that primary key. Existing builds get their seq as their key
 * (seqs are unique and never handed out again), incomplete builds keys after the highest seq ever
 * used; their chunks are copied into the new table in key order, a batch of builds at a time, with
 * progress in the log. Text rows stay text: compact-events.ts converts them after the migrations.
 */
async function eventsKey(db: Db, dialect: DatabaseHandle['dialect']): Promise<void> {
  const int = layoutOf(dialect).int64;
  // On SQLite every batch commits by itself (PostgreSQL runs the migration in one transaction): a
  // run that was interrupted left the column, the counter and a partial copy, and starts over.
  const added =
    dialect === 'sqlite' && (await sql`SELECT 1 FROM pragma_table_info('builds') WHERE name = 'events_key'`.execute(db)).rows.length > 0;
  if (!added) await db.schema.alterTable('builds').addColumn('events_key', int).execute();
  await db.schema.dropTable('build_events_keyed').ifExists().execute();
  await db.schema.dropTable(EVENTS_KEY_COUNTER).ifExists().execute();
  await db.schema.createTable(EVENTS_KEY_COUNTER).addColumn('last', int, (c) => c.notNull()).execute();
  let table = db.schema
    .createTable('build_events_keyed')
    .addColumn('events_key', int, (c) => c.notNull())
    .addColumn('chunk', 'integer', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('event_count', 'integer', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('events_packed', layoutOf(dialect).bytes)
    .addPrimaryKeyConstraint('build_events_key_pk', ['events_key', 'chunk']);
  const clustered = layoutOf(dialect).clustered;
  if (clustered !== '') table = table.modifyEnd(sql.raw(clustered));
  await table.execute();

  const count = async (where: ReturnType<typeof sql>): Promise<number> =>
    Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM builds WHERE ${where}`.execute(db)).rows[0]!.n);
  const total = await count(sql`true`);
  const report = progressLog('events keyed in arrival order', 'builds');
  let done = 0;
  const copy = async (range: ReturnType<typeof sql>, n: number): Promise<void> => {
    await sql`INSERT INTO build_events_keyed (events_key, chunk, hash, event_count, events, events_packed)
      SELECT b.events_key, e.chunk, e.hash, e.event_count, e.events, e.events_packed
      FROM builds b JOIN build_events e ON e.build_id = b.id WHERE ${range} ORDER BY b.events_key, e.chunk`.execute(db);
    done += n;
    report(done, total);
    // A turn of the event loop, so that a log line is written now.
    await new Promise((r) => setImmediate(r));
  };

  // Available builds: their seq is their key, in batches of seqs.
  const seqs = (await sql<{ lo: number | string | null; hi: number | string | null }>`SELECT min(seq) AS lo, max(seq) AS hi FROM builds`.execute(db)).rows[0]!;
  if (seqs.lo !== null && seqs.hi !== null) {
    for (let after = Number(seqs.lo) - 1; after < Number(seqs.hi); after += EVENTS_KEY_BATCH) {
      const range = sql`b.seq > ${after} AND b.seq <= ${after + EVENTS_KEY_BATCH}`;
      await sql`UPDATE builds SET events_key = seq WHERE seq > ${after} AND seq <= ${after + EVENTS_KEY_BATCH}`.execute(db);
      await copy(range, await count(sql`seq > ${after} AND seq <= ${after + EVENTS_KEY_BATCH}`));
    }
  }
  // Incomplete builds: keys after the highest seq ever used, in batches of IDs (their arrival
  // order is not indexed; the order among them only matters to where their later parts land).
  let last = Number((await sql<{ m: number | string }>`SELECT ${sql.raw(layoutOf(dialect).greatest)}(
      coalesce((SELECT max(seq) FROM builds), 0), coalesce((SELECT max(seq) FROM deleted_builds), 0)) AS m`.execute(db)).rows[0]!.m);
  let afterId = '';
  for (;;) {
    const ids = (await sql<{ id: string }>`SELECT id FROM builds WHERE seq IS NULL AND id > ${afterId} ORDER BY id LIMIT ${EVENTS_KEY_BATCH}`.execute(db)).rows.map((r) => r.id);
    if (ids.length === 0) break;
    const upTo = ids[ids.length - 1]!;
    await sql`UPDATE builds SET events_key = k.events_key
      FROM (SELECT id, ${sql.lit(last)} + row_number() OVER (ORDER BY id) AS events_key FROM builds WHERE seq IS NULL AND id > ${afterId} AND id <= ${upTo}) AS k
      WHERE builds.id = k.id`.execute(db);
    await copy(sql`b.seq IS NULL AND b.id > ${afterId} AND b.id <= ${upTo}`, ids.length);
    last += ids.length;
    afterId = upTo;
  }
  await db.insertInto(EVENTS_KEY_COUNTER).values({ last }).execute();

  await db.schema.dropTable('build_events').execute();
  await db.schema.alterTable('build_events_keyed').renameTo('build_events').execute();
  // The rows still to convert to the compressed form (0008's index, on the new key).
  await sql`CREATE INDEX build_events_text ON build_events (events_key, chunk) WHERE events_packed IS NULL`.execute(db);
}

/**
 * 0012: the task rows in a compact layout (compact-tasks.ts): each task path once in task_paths,
 * build_tasks keyed by (seq, ord) with the path's id and the outcome's code. An existing
 * database is converted here, in batches of seqs, with progress in the log.
 */
async function compactTaskRows(db: Db, dialect: DatabaseHandle['dialect']): Promise<void> {
  await compactTasks(db, dialect, progressLog('compact task rows', 'rows'));
}

/**
 * 0015: build_values keyed by its search key (field, value, seq), a value a build lists twice
 * stored once (store/schema/values-key.ts; docs/store.md "Multi-valued values keyed by their search
 * key"). SQLite: a WITHOUT ROWID table, copied in key order in batches with progress; PostgreSQL:
 * the search index becomes the unique key.
 */
async function valuesKey(db: Db, dialect: DatabaseHandle['dialect']): Promise<void> {
  await migrateValuesKey(db, dialect, progressLog('values keyed by their search key', 'rows'));
}

/**
 * 0016: build_values' and build_value_terms' field as the field's small integer code
 * (sql/value-fields.ts, store/schema/value-field-codes.ts; docs/store.md "Value fields by code"). SQLite:
 * build_values rebuilt in key order in batches with progress; PostgreSQL: smallint in place.
 */
async function valueFieldCodes(db: Db, dialect: DatabaseHandle['dialect']): Promise<void> {
  await migrateValueFieldCodes(db, dialect, progressLog('value fields by code', 'rows'));
}

/**
 * 0017: the content hashes (`builds.content_hash`, `build_events.hash`) stored as their 32 bytes
 * instead of base64url text (store/schema/hash-bytes.ts; docs/store.md "Content hashes as bytes").
 * SQLite: the rows rewritten in place in batches, with progress; PostgreSQL: the columns become bytea.
 */
async function hashBytes(db: Db, dialect: DatabaseHandle['dialect']): Promise<void> {
  const report = progressLog('content hashes as bytes', 'rows');
  await migrateHashBytes(db, dialect, (table, done, total) => report(done, total, table));
}

/**
 * 0018 (SQLite): build_events as a rowid table whose rowid packs (events_key, chunk)
 * (store/schema/events-rowid.ts; docs/store.md "Event chunks by rowid"), copied in key order in batches
 * with progress, then swapped. PostgreSQL: nothing to do.
 */
async function eventsRowid(db: Db, dialect: DatabaseHandle['dialect']): Promise<void> {
  await migrateEventsRowid(db, dialect, progressLog('event chunks by rowid', 'rows'));
}

/**
 * 0019: the child rows of the latest builds in arrival order (store/ingest/recent-rows.ts): the custom
 * values, with the search index of build_custom_values, and the values of spread fields, with the
 * key of build_values as a unique index; both indexed by seq too (deletions, `field:*` probes).
 * Created on both databases (one schema); only SQLite's ingest writes them. Only where missing:
 * the tests that take a store back to an older layout leave the tables, empty.
 */
export async function recentRowsTables(db: Db): Promise<void> {
  await db.schema
    .createTable('build_custom_values_recent')
    .ifNotExists()
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('build_custom_values_recent_seq').ifNotExists().on('build_custom_values_recent').column('seq').execute();
  await db.schema.createIndex('build_custom_values_recent_search').ifNotExists().on('build_custom_values_recent').columns(['name', 'value', 'seq']).execute();
  await db.schema
    .createTable('build_values_recent')
    .ifNotExists()
    .addColumn('field', 'smallint', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('build_values_recent_seq').ifNotExists().on('build_values_recent').column('seq').execute();
  await db.schema.createIndex('build_values_recent_search').ifNotExists().unique().on('build_values_recent').columns(['field', 'value', 'seq']).execute();
}

/**
 * The migrations of component `store`. Like every migration they take Kysely<any> and branch on
 * the dialect's name themselves: a migration must not depend on today's typed tables or today's
 * dialect hooks (kysely's advice), it does what it did when it was released.
 */
export function storeMigrations(dialect: DatabaseHandle['dialect']): Record<string, Migration> {
  return {
    '0001_builds': { up: initial },
    '0002_build_attributes': { up: (db) => attributesTable(db, dialect) },
    '0003_listing_index': { up: (db) => listingIndex(db, dialect) },
    '0004_store_fields': { up: storeFields },
    '0005_build_tasks': { up: (db) => buildTasks(db, dialect) },
    '0006_trend_aggregates': { up: (db) => trendIndexes(db, dialect) },
    '0007_deleted_builds': { up: deletedBuilds },
    '0008_packed_events': { up: (db) => packedEvents(db, dialect) },
    '0009_trend_rollups': { up: (db) => rollups(db, dialect) },
    '0010_build_attestations': { up: buildAttestations },
    '0011_facet_rollups': { up: (db) => facetRollups(db, dialect) },
    '0012_compact_tasks': { up: (db) => compactTaskRows(db, dialect) },
    '0013_rollup_keys': { up: (db) => rollupKeys(db, dialect) },
    '0014_events_key': { up: (db) => eventsKey(db, dialect) },
    '0015_values_key': { up: (db) => valuesKey(db, dialect) },
    '0016_value_field_codes': { up: (db) => valueFieldCodes(db, dialect) },
    '0017_hash_bytes': { up: (db) => hashBytes(db, dialect) },
    '0018_events_rowid': { up: (db) => eventsRowid(db, dialect) },
    '0019_recent_rows': { up: recentRowsTables },
    '0020_tests': { up: (db) => testDimension(db, dialect) },
    '0021_tests_backfill': { up: markTestBackfill },
    '0022_test_rollups': { up: (db) => testRollups(db, dialect) },
    '0023_failure_group_rollups': { up: (db) => failureGroupRollups(db, dialect) },
    '0024_test_packs': { up: (db) => testPacks(db, dialect, progressLog('test packs', 'seqs')) },
    '0025_task_rollup_paths': { up: (db) => taskRollupPaths(db, dialect) },
  };
}

/** The last store migration before 0015, which needs the search migrations up to 0003 run first. */
const BEFORE_VALUES_KEY = '0014_events_key';
const SEARCH_BEFORE_VALUES_KEY = '0003_value_terms';

/**
 * Runs the store migrations. 0015 rebuilds build_values as the search migrations 0001-0003 leave
 * it: their value-term triggers are recreated on the new table, and SQLite's search migrations
 * 0001-0002 made trigram tables over the rowid the new table no longer has. So while the search
 * migrations have not run that far (a new database, or one from before them), the store is
 * migrated up to 0014 only; `migrateStoreAndSearch` runs the rest after them. 0016 converts the
 * value terms of search migration 0003 along with build_values, so it waits for them the same way.
 */
export async function migrateStore(handle: DatabaseHandle): Promise<void> {
  const migrations = storeMigrations(handle.dialect);
  const ready =
    (await migrationRan(handle, 'store', migrations, '0015_values_key')) ||
    (await migrationRan(handle, 'search', searchMigrations(handle.dialect, NO_PROGRESS_LOG), SEARCH_BEFORE_VALUES_KEY));
  await migrate(handle, 'store', migrations, ready ? undefined : BEFORE_VALUES_KEY);
}

/** The store migrations, the search migrations (sql/indexes.ts), then the store migrations that wait for them. */
export async function migrateStoreAndSearch(handle: DatabaseHandle): Promise<void> {
  await migrateStore(handle);
  await migrateSearchIndexes(handle, () => createLogger('search'));
  await migrateStore(handle);
}
