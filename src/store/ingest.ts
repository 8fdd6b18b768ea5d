// NDJSON ingest (see the event model and docs/store.md). Lines are read in batches; each batch is
// prepared without the database (prepare.ts: parsed, validated, encoded, derived; in a worker
// thread for long inputs, prepare-pool.ts), planned against the stored state (ingest-plan.ts),
// then written in ONE transaction: on SQLite one
// synchronous better-sqlite3 transaction with prepared statements, on PostgreSQL one transaction
// with multi-row inserts under an advisory lock that also orders `seq` across server processes.
// If a batch fails in the database, its lines are retried one per transaction, so one bad build
// cannot take the others down. Results are reported only after their transaction committed.

import type BetterSqlite3 from 'better-sqlite3';
import { sql, type Transaction } from 'kysely';
import { newBuildId } from './build-id.js';
import type { DatabaseHandle } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { BUILD_ROW_COLUMNS, planBatch, type BatchWrites, type BuildRow, type StoredBuild } from './ingest-plan.js';
import { numberedLines, type NumberedLine } from './lines.js';
import { prepareLines, type PreparedLine } from './prepare.js';
import type { PreparePool } from './prepare-pool.js';
import type { IngestLineResult, IngestOptions, Visibility } from './types.js';
import { batchSizeFor } from './batches.js';
import { projectVisible } from './visibility.js';
import { TOOL_TYPES, type FieldDef, type ToolType } from '../query/catalog.js';
import { ATTRIBUTE_COLUMNS, columnKind, sqlType } from './columns.js';
import { TASK_COUNT_COLUMNS } from './tasks.js';
import { packAttributes, packEvents, storedEvents } from './event-codec.js';
import { addIngestedToRollups, addIngestedToRollupsAsync } from './rollups.js';

const COLUMN_FIELDS: ReadonlyMap<string, FieldDef> = new Map(ATTRIBUTE_COLUMNS.map((c) => [c.column, c.field]));
const TOOL_TYPE_INDEX = BUILD_ROW_COLUMNS.indexOf('tool_type');

export const NOTIFY_CHANNEL = 'buildscope_builds';
// Key of the PostgreSQL advisory lock that serialises ingest transactions (and so `seq` order).
const LOCK_KEY = 4_711_000_001;

/** The highest seq ever used, by a stored or a deleted build (deleted_builds, store migration 0005). */
const maxSeqSql = (larger: 'max' | 'greatest'): string =>
  `SELECT ${larger}(coalesce((SELECT max(seq) FROM builds), 0), coalesce((SELECT max(seq) FROM deleted_builds), 0))`;

export interface IngestContext {
  readonly handle: DatabaseHandle;
  readonly clock: () => number;
  /** Called after a commit that made builds available, with the highest new seq. */
  readonly onAvailable: (maxSeq: number) => void;
  /**
   * SQLite: bulk upkeep of the search trigram tables per batch (src/sql/indexes.ts), or undefined
   * when the search indexes are absent or keep themselves by triggers.
   */
  readonly trigram?: (sqlite: BetterSqlite3.Database) => SearchBatch | undefined;
  /** Worker thread that prepares the batches of long inputs; without it they are prepared inline. */
  readonly pool?: PreparePool;
  /** Whether new chunks are stored compressed (default true; false only to have stores of the old form). */
  readonly packEvents?: boolean;
}

/** What the ingest needs of the search indexes' bulk upkeep (src/sql/indexes.ts `trigramBatch`). */
export interface SearchBatch {
  begin(): void;
  finish(maxSeqBefore: number): void;
}

/**
 * Batches prepared ahead of the one being written. Two keep the worker busy while this thread
 * both writes a batch and reads the input for the next.
 */
const PREPARED_AHEAD = 2;

/** Whether a publisher of this visibility may append to a build of this project (absent: anyone). */
function mayAppend(visibility: Visibility | undefined, project: string | null): boolean {
  return visibility === undefined || projectVisible(visibility, project);
}

type Executor = (lines: readonly PreparedLine[]) => Promise<{ results: IngestLineResult[]; maxSeq: number }>;

export async function ingestNdjson(
  ctx: IngestContext,
  input: string | AsyncIterable<string | Uint8Array>,
  options: IngestOptions = {},
): Promise<IngestLineResult[]> {
  const execute = ctx.handle.dialect === 'sqlite' ? sqliteExecutor(ctx, options.visibility) : postgresExecutor(ctx, options.visibility);
  const batchSize = options.batchSize ?? batchSizeFor(ctx.handle.dialect, options.bulk === true);
  const keep = options.keepResults !== false;
  const all: IngestLineResult[] = [];
  let done = 0;
  const flush = async (lines: readonly PreparedLine[]): Promise<void> => {
    if (lines.length === 0) return;
    let out: IngestLineResult[];
    let maxSeq = 0;
    try {
      ({ results: out, maxSeq } = await execute(lines));
    } catch (batchError) {
      if (lines.length === 1) {
        out = [notStored(lines[0]!, batchError)];
      } else {
        out = [];
        for (const l of lines) await flushOne(l, out);
      }
    }
    if (maxSeq > 0) ctx.onAvailable(maxSeq);
    done += out.length;
    options.onResults?.(out);
    options.onProgress?.(done);
    if (keep) for (const r of out) all.push(r);
  };

  const flushOne = async (l: PreparedLine, out: IngestLineResult[]): Promise<void> => {
    try {
      const r = await execute([l]);
      if (r.maxSeq > 0) ctx.onAvailable(r.maxSeq);
      out.push(...r.results);
    } catch (e) {
      out.push(notStored(l, e));
    }
  };

  // Batches are prepared (parsed, validated, encoded, derived) ahead of their writing: from the
  // second batch on, a long input's batches go to the worker thread, so that preparing one
  // overlaps writing another. A short input never waits for a worker to start.
  const ahead: Promise<PreparedLine[]>[] = [];
  let texts: NumberedLine[] = [];
  let submitted = 0;
  const submit = (): void => {
    const lines = texts;
    texts = [];
    const pool = submitted++ > 0 ? ctx.pool : undefined;
    // Should the worker fail, the batch is prepared here instead: same function, same results.
    ahead.push(pool === undefined ? Promise.resolve(prepareLines(lines)) : pool.prepare(lines).catch(() => prepareLines(lines)));
  };
  for await (const l of numberedLines(input)) {
    texts.push(l);
    if (texts.length < batchSize) continue;
    submit();
    while (ahead.length > PREPARED_AHEAD) await flush(await ahead.shift()!);
  }
  if (texts.length > 0) submit();
  while (ahead.length > 0) await flush(await ahead.shift()!);
  return all;
}

function notStored({ line, prepared }: PreparedLine, e: unknown): IngestLineResult {
  return {
    line,
    status: 'rejected',
    path: '$',
    error: `The build could not be stored: ${(e as Error).message}`,
    ...(prepared.buildId !== undefined ? { buildId: prepared.buildId } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// SQLite: synchronous, prepared statements, one IMMEDIATE transaction per batch.

function sqliteExecutor(ctx: IngestContext, visibility: Visibility | undefined): Executor {
  const db = ctx.handle.sqlite!;
  const cols = BUILD_ROW_COLUMNS;
  const q = (c: string): string => `"${c}"`;
  // One INSERT per tool type naming only the columns a build of that tool can fill: a third of
  // the parameters to bind, the other tools' columns stay NULL by default.
  const insertBuild = new Map(
    TOOL_TYPES.map((tool) => {
      const own = cols.flatMap((c, i) => {
        const field = COLUMN_FIELDS.get(c);
        return field === undefined || field.tool === null || field.tool === tool ? [i] : [];
      });
      const tuple = `(${own.map(() => '?').join(',')})`;
      const insert = `INSERT INTO builds (${own.map((i) => q(cols[i]!)).join(',')}) VALUES `;
      // Several builds per statement, like the child rows (rowInserter): the builds table's
      // search triggers make every statement pay for the FTS5 tables they name.
      const many = db.prepare(insert + Array.from({ length: BUILDS_PER_INSERT }, () => tuple).join(','));
      const one = db.prepare(insert + tuple);
      const params = new Array<string | number | null>(BUILDS_PER_INSERT * own.length);
      const width = own.length;
      return [
        tool,
        (rows: readonly BuildRow[]) => {
          let r = 0;
          for (; r + BUILDS_PER_INSERT <= rows.length; r += BUILDS_PER_INSERT) {
            for (let k = 0; k < BUILDS_PER_INSERT; k++) {
              const row = rows[r + k]!;
              for (let j = 0; j < width; j++) params[k * width + j] = row[own[j]!]!;
            }
            many.run(params);
          }
          for (; r < rows.length; r++) one.run(own.map((i) => rows[r]![i]));
        },
      ] as const;
    }),
  );
  const updateBuild = db.prepare(`UPDATE builds SET ${cols.slice(1).map((c) => `${q(c)} = ?`).join(', ')} WHERE id = ?`);
  const insertChunk = db.prepare('INSERT INTO build_events (build_id, chunk, hash, event_count, events, events_packed) VALUES (?, ?, ?, ?, ?, ?)');
  const pack = ctx.packEvents !== false;
  const insertValues = rowInserter(db, 'INSERT INTO build_values (seq, field, value) VALUES');
  const insertCustoms = rowInserter(db, 'INSERT INTO build_custom_values (seq, name, value) VALUES');
  // Upsert: a row left behind by a deleted build (seq reused after deleting the newest builds)
  // is replaced rather than failing the batch.
  const insertAttributes = db.prepare(
    'INSERT INTO build_attributes (seq, attributes, attributes_packed) VALUES (?, ?, ?) ON CONFLICT (seq) DO UPDATE SET attributes = excluded.attributes, attributes_packed = excluded.attributes_packed',
  );
  const insertTask = db.prepare('INSERT INTO build_tasks (seq, path, outcome, start_ms, duration_ms, cacheable) VALUES (?, ?, ?, ?, ?, ?)');
  const upsertTaskCounts = db.prepare(
    `INSERT INTO build_task_counts (seq, ${TASK_COUNT_COLUMNS.join(', ')}) VALUES (?${', ?'.repeat(TASK_COUNT_COLUMNS.length)})
     ON CONFLICT (seq) DO UPDATE SET ${TASK_COUNT_COLUMNS.map((c) => `${c} = excluded.${c}`).join(', ')}`,
  );
  const selectBuild = db.prepare(
    'SELECT id, seq, tool_type, tool_version, agent_version, content_hash, received_at, project_name FROM builds WHERE id = ?',
  );
  const selectChunks = db.prepare('SELECT hash, events, events_packed FROM build_events WHERE build_id = ? ORDER BY chunk');
  // The highest seq ever used: a deleted build's seq is never handed out again (deleted_builds).
  const selectMaxSeq = db.prepare(maxSeqSql('max')).pluck();
  const search = ctx.trigram?.(db);

  const load = (id: string): StoredBuild | undefined => {
    const row = selectBuild.get(id) as Record<string, unknown> | undefined;
    if (row === undefined) return undefined;
    const base = {
      id,
      toolType: row['tool_type'] as ToolType,
      toolVersion: row['tool_version'] as string,
      agentVersion: row['agent_version'] as string,
      seq: row['seq'] === null ? null : Number(row['seq']),
      contentHash: row['content_hash'] as string,
      receivedAt: Number(row['received_at']),
      project: row['project_name'] as string | null,
    };
    // A build the publisher may not see is refused on its header alone (ingest-plan.ts): its
    // events are not read, so the time of the answer does not grow with them either.
    if (!mayAppend(visibility, base.project)) return { ...base, chunkHashes: [], chunkEvents: [] };
    const chunks = selectChunks.all(id) as { hash: string; events: string; events_packed: Buffer | null }[];
    return { ...base, chunkHashes: chunks.map((c) => c.hash), chunkEvents: chunks.map((c) => storedEvents(c.events, c.events_packed)) };
  };

  const write = (w: BatchWrites): void => {
    const byTool = new Map<ToolType, BuildRow[]>();
    for (const row of w.insertBuilds) {
      const tool = row[TOOL_TYPE_INDEX] as ToolType;
      const list = byTool.get(tool);
      if (list === undefined) byTool.set(tool, [row]);
      else list.push(row);
    }
    for (const [tool, rows] of byTool) insertBuild.get(tool)!(rows);
    for (const row of w.updateBuilds) updateBuild.run([...row.slice(1), row[0]]);
    for (const c of w.chunks) {
      if (pack) insertChunk.run(c.build_id, c.chunk, c.hash, c.event_count, '', packEvents(c.events));
      else insertChunk.run(c.build_id, c.chunk, c.hash, c.event_count, c.events, null);
    }
    insertValues(w.values);
    insertCustoms(w.customValues);
    for (const [seq, json] of w.attributes) {
      if (pack) insertAttributes.run(seq, '', packAttributes(json));
      else insertAttributes.run(seq, json, null);
    }
    // A new seq every time (a deleted build's seq is never reused, and prune deletes its task
    // rows), so task rows are only ever inserted.
    for (const t of w.tasks) insertTask.run(t);
    for (const c of w.taskCounts) upsertTaskCounts.run(c);
  };

  const run = db.transaction((lines: readonly PreparedLine[]) => {
    const maxSeq = Number(selectMaxSeq.get());
    const { results, writes } = planBatch(lines, { load, now: ctx.clock, newId: newBuildId, maxSeq, ...(visibility ? { visibility } : {}) });
    search?.begin();
    write(writes);
    addIngestedToRollups(ctx.handle, maxSeq, writes.maxSeq);
    search?.finish(maxSeq);
    return { results, maxSeq: writes.maxSeq };
  });
  // IMMEDIATE: take the write lock up front, so max(seq) cannot change under us.
  return async (lines) => run.immediate(lines);
}

/** Builds per multi-row INSERT into builds (each has up to ~70 columns to bind). */
const BUILDS_PER_INSERT = 16;
/** Rows per multi-row INSERT of child rows. */
const ROWS_PER_INSERT = 64;

/**
 * Inserts [a, b, c] rows `ROWS_PER_INSERT` at a time with one multi-row INSERT, the rest one by
 * one. Per statement, not per row: SQLite's own statement overhead and, because the tables'
 * search triggers name FTS5 tables, the virtual tables' begin/savepoint calls (about 9 µs a
 * statement even when the triggers stand aside), which made child rows the costliest part of
 * the ingest's writes.
 */
function rowInserter(db: BetterSqlite3.Database, insert: string): (rows: readonly (readonly [number, string, string])[]) => void {
  const many = db.prepare(`${insert} ${Array.from({ length: ROWS_PER_INSERT }, () => '(?, ?, ?)').join(', ')}`);
  const one = db.prepare(`${insert} (?, ?, ?)`);
  const params = new Array<number | string>(ROWS_PER_INSERT * 3);
  return (rows) => {
    let i = 0;
    for (; i + ROWS_PER_INSERT <= rows.length; i += ROWS_PER_INSERT) {
      for (let k = 0; k < ROWS_PER_INSERT; k++) {
        const r = rows[i + k]!;
        params[3 * k] = r[0];
        params[3 * k + 1] = r[1];
        params[3 * k + 2] = r[2];
      }
      many.run(params);
    }
    for (; i < rows.length; i++) one.run(rows[i]![0], rows[i]![1], rows[i]![2]);
  };
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: one transaction per batch; state of the batch's builds loaded in two queries.

function postgresExecutor(ctx: IngestContext, visibility: Visibility | undefined): Executor {
  const db = ctx.handle.db;

  return async (lines) =>
    db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${LOCK_KEY})`.execute(trx);
      const ids = [...new Set(lines.flatMap((l) => (l.prepared.buildId !== undefined ? [l.prepared.buildId] : [])))];
      const stored = new Map<string, StoredBuild>();
      if (ids.length > 0) {
        const rows = await trx
          .selectFrom('builds')
          .select(['id', 'seq', 'tool_type', 'tool_version', 'agent_version', 'content_hash', 'received_at', 'project_name'])
          .where('id', 'in', ids)
          .execute();
        // As on SQLite: the events of builds the publisher may not see are not read.
        const readable = rows.filter((r) => mayAppend(visibility, r.project_name as string | null)).map((r) => r.id as string);
        if (rows.length > 0) {
          const chunks =
            readable.length === 0
              ? []
              : await trx
                  .selectFrom('build_events')
                  .select(['build_id', 'chunk', 'hash', 'events', 'events_packed'])
                  .where('build_id', 'in', readable)
                  .orderBy('build_id')
                  .orderBy('chunk')
                  .execute();
          const byBuild = new Map<string, { hash: string; events: string }[]>();
          for (const c of chunks) {
            const list = byBuild.get(c.build_id as string) ?? [];
            list.push({ hash: c.hash as string, events: storedEvents(c.events as string, c.events_packed as Buffer | null) });
            byBuild.set(c.build_id as string, list);
          }
          for (const r of rows) {
            const cs = byBuild.get(r.id as string) ?? [];
            const seq = r.seq === null ? null : Number(r.seq);
            stored.set(r.id as string, {
              id: r.id as string,
              toolType: r.tool_type as ToolType,
              toolVersion: r.tool_version as string,
              agentVersion: r.agent_version as string,
              seq,
              contentHash: r.content_hash as string,
              receivedAt: Number(r.received_at),
              project: r.project_name as string | null,
              chunkHashes: cs.map((c) => c.hash),
              chunkEvents: cs.map((c) => c.events),
            });
          }
        }
      }
      const max = (await sql<{ m: number | string }>`${sql.raw(maxSeqSql('greatest'))} AS m`.execute(trx)).rows[0]!;
      const { results, writes } = planBatch(lines, {
        load: (id) => stored.get(id),
        now: ctx.clock,
        newId: newBuildId,
        maxSeq: Number(max.m),
        ...(visibility ? { visibility } : {}),
      });
      // Multi-row inserts as unnest() of one array per column: a handful of parameters however
      // many rows, so neither the statement builder nor the protocol grows with the batch.
      await unnestInsert(trx, 'builds', BUILD_COLUMN_TYPES, writes.insertBuilds);
      for (const row of writes.updateBuilds) {
        const set = Object.fromEntries(BUILD_ROW_COLUMNS.slice(1).map((c, i) => [c, row[i + 1]]));
        await trx.updateTable('builds').set(set).where('id', '=', row[0] as string).execute();
      }
      const pack = ctx.packEvents !== false;
      await unnestInsert(
        trx,
        'build_events',
        CHUNK_COLUMN_TYPES,
        writes.chunks.map((c) => [c.build_id, c.chunk, c.hash, c.event_count, pack ? '' : c.events, pack ? packEvents(c.events) : null]),
      );
      await unnestInsert(trx, 'build_values', VALUE_COLUMN_TYPES, writes.values);
      await unnestInsert(trx, 'build_custom_values', CUSTOM_COLUMN_TYPES, writes.customValues);
      if (writes.attributes.length > 0) {
        // Upsert, as on SQLite: a row of a deleted build with the same seq is replaced.
        await sql`INSERT INTO build_attributes (seq, attributes, attributes_packed)
          SELECT * FROM unnest(${writes.attributes.map((a) => a[0])}::bigint[], ${writes.attributes.map((a) => (pack ? '' : a[1]))}::text[], ${writes.attributes.map((a) => (pack ? packAttributes(a[1]) : null))}::bytea[])
          ON CONFLICT (seq) DO UPDATE SET attributes = excluded.attributes, attributes_packed = excluded.attributes_packed`.execute(trx);
      }
      // Task rows of a new seq: only inserted, as on SQLite.
      await unnestInsert(trx, 'build_tasks', TASK_COLUMN_TYPES, writes.tasks);
      await unnestInsert(trx, 'build_task_counts', TASK_COUNT_COLUMN_TYPES, writes.taskCounts);
      await addIngestedToRollupsAsync(trx, 'postgres', Number(max.m), writes.maxSeq);
      // Delivered to every listener (all server processes) when the transaction commits.
      if (writes.maxSeq > 0) await sql`SELECT pg_notify(${NOTIFY_CHANNEL}, ${String(writes.maxSeq)})`.execute(trx);
      return { results, maxSeq: writes.maxSeq };
    });
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
  content_hash: 'text',
  attributes: 'text',
  received_at: 'bigint',
};
const BUILD_COLUMN_TYPES: ColumnTypes = BUILD_ROW_COLUMNS.map((c) => {
  const field = COLUMN_FIELDS.get(c);
  return [c, field === undefined ? BOOKKEEPING_TYPES[c]! : sqlType(columnKind(field.type))] as const;
});
const CHUNK_COLUMN_TYPES: ColumnTypes = [
  ['build_id', 'text'],
  ['chunk', 'integer'],
  ['hash', 'text'],
  ['event_count', 'integer'],
  ['events', 'text'],
  ['events_packed', 'bytea'],
];
const VALUE_COLUMN_TYPES: ColumnTypes = [
  ['seq', 'bigint'],
  ['field', 'text'],
  ['value', 'text'],
];
const TASK_COLUMN_TYPES: ColumnTypes = [
  ['seq', 'bigint'],
  ['path', 'text'],
  ['outcome', 'text'],
  ['start_ms', 'double precision'],
  ['duration_ms', 'double precision'],
  ['cacheable', 'integer'],
];
const TASK_COUNT_COLUMN_TYPES: ColumnTypes = [['seq', 'bigint'], ...TASK_COUNT_COLUMNS.map((c) => [c, 'integer'] as const)];
const CUSTOM_COLUMN_TYPES: ColumnTypes = [
  ['seq', 'bigint'],
  ['name', 'text'],
  ['value', 'text'],
];

async function unnestInsert(trx: Transaction<Database>, table: keyof Database, columns: ColumnTypes, rows: readonly (readonly unknown[])[]): Promise<void> {
  if (rows.length === 0) return;
  const arrays = columns.map((_, i) => rows.map((r) => r[i] ?? null));
  const names = sql.join(columns.map(([n]) => sql.ref(n)));
  const unnest = sql.join(columns.map(([, type], i) => sql`${arrays[i]}::${sql.raw(type)}[]`));
  await sql`INSERT INTO ${sql.table(table)} (${names}) SELECT * FROM unnest(${unnest})`.execute(trx);
}
