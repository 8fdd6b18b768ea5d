// The ingest's write path on PostgreSQL (see ingest.ts): a transaction per batch under an
// advisory lock that also orders `seq` across server processes, each part under a savepoint,
// the stored state of a part's builds loaded in two queries, and multi-row inserts as unnest()
// of one array per column.

import { addIngestedToRollupsAsync } from '../analytics/rollups.js';
import { sql, type ControlledTransaction } from 'kysely';
import { newBuildId } from './build-id.js';
import { BUILD_ROW_COLUMNS, chunkRowText, planBatch, type TaskWrite } from './plan.js';
import type { IngestContext, IngestWriter, PartWritten, WriterOptions } from './writer.js';
import { LAST_EVENTS_KEY_SQL, maxSeqSql } from './seq.js';
import type { PreparedLine } from './prepare.js';
import { keysToRead, namedBuildIds, STORED_BUILD_COLUMNS, storedBuilds, type StoredBuildRow, type StoredChunkRow } from './stored-build.js';
import type { FieldDef } from '../../query/catalog.js';
import { ATTRIBUTE_COLUMNS, columnKind, sqlType } from '../schema/columns.js';
import { TASK_COUNT_COLUMNS } from '../events/tasks.js';
import { writeTestRowsPostgres } from './test-rows-postgres.js';

export const NOTIFY_CHANNEL = 'buildscope_builds';
// Key of the PostgreSQL advisory lock that serialises ingest transactions (and so `seq` order).
const LOCK_KEY = 4_711_000_001;

const COLUMN_FIELDS: ReadonlyMap<string, FieldDef> = new Map(ATTRIBUTE_COLUMNS.map((c) => [c.column, c.field]));

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Trx = ControlledTransaction<any>;

export function postgresWriter(ctx: IngestContext, { visibility }: WriterOptions): IngestWriter {
  const db = ctx.handle.db;
  let trx: Trx | undefined;
  // Task path ids (store migration 0012) this ingest need not look up again: those read or added
  // by a transaction of it that committed (dictionary rows are never changed or deleted), and
  // those of the open transaction's parts that were written (a part rolled back to its savepoint
  // contributes none; a rolled-back transaction's are dropped). A long input's parts then send
  // only the paths they are the first to meet.
  const committedPaths = new Map<string, number>();
  let openPaths = new Map<string, number>();
  const knownPath = (path: string): number | undefined => committedPaths.get(path) ?? openPaths.get(path);
  let partPaths: Map<string, number> | undefined;

  const load = async (t: Trx, lines: readonly PreparedLine[]): Promise<ReturnType<typeof storedBuilds>> => {
    const ids = namedBuildIds(lines);
    if (ids.length === 0) return new Map();
    const rows = (await t.selectFrom('builds').select([...STORED_BUILD_COLUMNS]).where('id', 'in', ids).execute()) as StoredBuildRow[];
    const readable = keysToRead(rows, visibility);
    const chunks =
      readable.length === 0
        ? []
        : ((await t
            .selectFrom('build_events')
            .select(['events_key', 'hash', 'events', 'events_packed'])
            .where('events_key', 'in', readable)
            .orderBy('events_key')
            .orderBy('chunk')
            .execute()) as StoredChunkRow[]);
    return storedBuilds(rows, chunks);
  };

  const part = async (t: Trx, lines: readonly PreparedLine[]): Promise<PartWritten> => {
    const stored = await load(t, lines);
    const max = (await sql<{ m: number | string }>`${sql.raw(maxSeqSql('greatest'))} AS m`.execute(t)).rows[0]!;
    const lastEventsKey = Number((await sql<{ last: number | string }>`${sql.raw(LAST_EVENTS_KEY_SQL)}`.execute(t)).rows[0]!.last);
    const { results, writes } = planBatch(lines, {
      load: (id) => stored.get(id),
      now: ctx.clock,
      newId: newBuildId,
      maxSeq: Number(max.m),
      lastEventsKey,
      ...(visibility ? { visibility } : {}),
    });
    // The counter row, under the advisory lock like seq: keys are handed out in commit order.
    if (writes.lastEventsKey !== lastEventsKey) await t.updateTable('events_key_counter').set({ last: writes.lastEventsKey }).execute();
    // Multi-row inserts as unnest() of one array per column: a handful of parameters however
    // many rows, so neither the statement builder nor the protocol grows with the part.
    await unnestInsert(t, 'builds', BUILD_COLUMN_TYPES, writes.insertBuilds);
    for (const row of writes.updateBuilds) {
      const set = Object.fromEntries(BUILD_ROW_COLUMNS.slice(1).map((c, i) => [c, row[i + 1]]));
      await t.updateTable('builds').set(set).where('id', '=', row[0]).execute();
    }
    // New chunks and attributes are stored compressed (store migration 0008) unless asked not to.
    const pack = ctx.packEvents !== false;
    await unnestInsert(
      t,
      'build_events',
      CHUNK_COLUMN_TYPES,
      writes.chunks.map((c) => [c.events_key, c.chunk, c.hash, c.event_count, pack ? '' : chunkRowText(c), pack ? c.packed : null]),
    );
    // A (field, value, seq) row is stored once (store migration 0015): derive.ts lists each value
    // of a build once; a row left behind under a reused seq is kept rather than failing the batch.
    await unnestInsert(t, 'build_values', VALUE_COLUMN_TYPES, writes.values, sql`ON CONFLICT DO NOTHING`);
    await unnestInsert(t, 'build_custom_values', CUSTOM_COLUMN_TYPES, writes.customValues);
    if (writes.attributes.length > 0) {
      // Upsert, as on SQLite: a row of a deleted build with the same seq is replaced.
      await sql`INSERT INTO build_attributes (seq, attributes, attributes_packed)
        SELECT * FROM unnest(${writes.attributes.map((a) => a[0])}::bigint[], ${writes.attributes.map((a) => (pack ? '' : a[1]))}::text[], ${writes.attributes.map((a) => (pack ? a[2] : null))}::bytea[])
        ON CONFLICT (seq) DO UPDATE SET attributes = excluded.attributes, attributes_packed = excluded.attributes_packed`.execute(t);
    }
    // Task rows of a new seq: only inserted, as on SQLite, their paths by dictionary id.
    if (writes.tasks.length > 0) {
      const ids = await taskPathIds(t, writes.tasks, knownPath);
      partPaths = ids;
      await unnestInsert(t, 'build_tasks', TASK_COLUMN_TYPES, writes.tasks.map((r) => [r[0], r[1], ids.get(r[2]) ?? knownPath(r[2])!, r[3], r[4], r[5], r[6]]));
    }
    await unnestInsert(t, 'build_task_counts', TASK_COUNT_COLUMN_TYPES, writes.taskCounts);
    await writeTestRowsPostgres(t, writes);
    await addIngestedToRollupsAsync(t, 'postgres', Number(max.m), writes.maxSeq);
    // Delivered to every listener (all server processes) when the transaction commits.
    if (writes.maxSeq > 0) await sql`SELECT pg_notify(${NOTIFY_CHANNEL}, ${String(writes.maxSeq)})`.execute(t);
    return { results, maxSeq: writes.maxSeq };
  };

  const commit = async (): Promise<void> => {
    const t = trx;
    trx = undefined;
    const paths = openPaths;
    openPaths = new Map();
    await t?.commit().execute();
    for (const [path, id] of paths) committedPaths.set(path, id);
  };

  return {
    // Always under a savepoint, `guarded` or not (the interface allows it): ingest.ts writes
    // unguarded parts only on SQLite, where the savepoints' cost was measured.
    async part(lines, andCommit) {
      if (trx === undefined) {
        const t = await db.startTransaction().execute();
        try {
          await sql`SELECT pg_advisory_xact_lock(${LOCK_KEY})`.execute(t);
        } catch (e) {
          await t.rollback().execute().catch(() => undefined);
          throw e;
        }
        trx = t;
      }
      const t = trx;
      await sql`SAVEPOINT ingest_part`.execute(t);
      let written: PartWritten;
      partPaths = undefined;
      try {
        written = await part(t, lines);
        await sql`RELEASE SAVEPOINT ingest_part`.execute(t);
        // (Set by part(): a closure's assignment TypeScript's narrowing does not see.)
        for (const [path, id] of (partPaths as Map<string, number> | undefined) ?? []) openPaths.set(path, id);
      } catch (e) {
        await sql`ROLLBACK TO SAVEPOINT ingest_part`.execute(t);
        await sql`RELEASE SAVEPOINT ingest_part`.execute(t);
        throw e;
      }
      if (andCommit) await commit();
      return written;
    },
    commit,
    async rollback() {
      const t = trx;
      trx = undefined;
      openPaths = new Map();
      await t?.rollback().execute();
    },
  };
}

type ColumnTypes = readonly (readonly [name: string, type: string])[];

const BOOKKEEPING_TYPES: Readonly<Record<string, string>> = {
  id: 'text',
  seq: 'bigint',
  available_at: 'bigint',
  tool_type: 'text',
  tool_version: 'text',
  agent_version: 'text',
  project_name: 'text',
  content_hash: 'bytea',
  attributes: 'text',
  received_at: 'bigint',
  events_key: 'bigint',
};
const BUILD_COLUMN_TYPES: ColumnTypes = BUILD_ROW_COLUMNS.map((c) => {
  const field = COLUMN_FIELDS.get(c);
  return [c, field === undefined ? BOOKKEEPING_TYPES[c]! : sqlType(columnKind(field.type))] as const;
});
const CHUNK_COLUMN_TYPES: ColumnTypes = [
  ['events_key', 'bigint'],
  ['chunk', 'integer'],
  ['hash', 'bytea'],
  ['event_count', 'integer'],
  ['events', 'text'],
  ['events_packed', 'bytea'],
];
const VALUE_COLUMN_TYPES: ColumnTypes = [
  ['seq', 'bigint'],
  ['field', 'smallint'],
  ['value', 'text'],
];
const TASK_COLUMN_TYPES: ColumnTypes = [
  ['seq', 'bigint'],
  ['ord', 'integer'],
  ['path_id', 'bigint'],
  ['outcome', 'smallint'],
  ['start_ms', 'double precision'],
  ['duration_ms', 'double precision'],
  ['cacheable', 'smallint'],
];

/**
 * The dictionary ids of the tasks' paths that `known` does not give (store migration 0012), the
 * new ones added: two statements for the whole part, whatever its number of tasks, none when
 * every path is known. In path order, so that two transactions adding the same new paths (the
 * advisory lock aside) wait on each other in one order rather than deadlock; after ON CONFLICT
 * DO NOTHING, the read sees a path another transaction committed meanwhile (READ COMMITTED:
 * each statement its own snapshot).
 */
async function taskPathIds(t: Trx, tasks: readonly TaskWrite[], known: (path: string) => number | undefined): Promise<Map<string, number>> {
  const paths = [...new Set(tasks.map((r) => r[2]))].filter((p) => known(p) === undefined).sort();
  if (paths.length === 0) return new Map();
  await sql`INSERT INTO task_paths (path) SELECT p FROM unnest(${paths}::text[]) AS u(p) ORDER BY p ON CONFLICT (path) DO NOTHING`.execute(t);
  const rows = (await sql<{ id: string | number; path: string }>`SELECT id, path FROM task_paths WHERE path = ANY(${paths}::text[])`.execute(t)).rows;
  return new Map(rows.map((r) => [r.path, Number(r.id)]));
}
const TASK_COUNT_COLUMN_TYPES: ColumnTypes = [['seq', 'bigint'], ...TASK_COUNT_COLUMNS.map((c) => [c, 'integer'] as const)];
const CUSTOM_COLUMN_TYPES: ColumnTypes = [
  ['seq', 'bigint'],
  ['name', 'text'],
  ['value', 'text'],
];

async function unnestInsert(t: Trx, table: string, columns: ColumnTypes, rows: readonly (readonly unknown[])[], onConflict = sql``): Promise<void> {
  if (rows.length === 0) return;
  const arrays = columns.map((_, i) => rows.map((r) => r[i] ?? null));
  const names = sql.join(columns.map(([n]) => sql.ref(n)));
  const unnest = sql.join(columns.map(([, type], i) => sql`${arrays[i]}::${sql.raw(type)}[]`));
  await sql`INSERT INTO ${sql.table(table)} (${names}) SELECT * FROM unnest(${unnest}) ${onConflict}`.execute(t);
}
