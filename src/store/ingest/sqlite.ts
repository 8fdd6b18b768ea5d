// The ingest's write path on SQLite (see ingest.ts): synchronous better-sqlite3 statements, one
// IMMEDIATE transaction per batch, each part of it under a savepoint. A part is planned
// (ingest/plan.ts) against the stored state, including the parts before it in the transaction,
// and its rows are written sorted by the key they are inserted under, so that consecutive
// inserts into the same B-tree land on the same or neighbouring pages.

import { addIngestedToRollups, rollupKeyIds } from '../analytics/rollups.js';
import type { TestRunRow } from '../analytics/test-rollup-sums.js';
import type BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { newBuildId } from './build-id.js';
import { BUILD_ROW_COLUMNS, chunkRowText, planBatch, type BatchWrites, type BuildRow, type TaskWrite } from './plan.js';
import type { IngestContext, IngestWriter, PartWritten, WriterOptions } from './writer.js';
import { LAST_EVENTS_KEY_SQL, maxSeqSql } from './seq.js';
import type { PreparedLine } from './prepare.js';
import { keysToRead, namedBuildIds, STORED_BUILD_COLUMNS, storedBuilds, type StoredBuildRow, type StoredChunkRow } from './stored-build.js';
import { TOOL_TYPES, type FieldDef, type ToolType } from '../../query/catalog.js';
import { ATTRIBUTE_COLUMNS } from '../schema/columns.js';
import { TASK_COUNT_COLUMNS } from '../events/tasks.js';
import { eventsId, eventsRange } from '../schema/events-rowid.js';
import { recentRowsMove } from './recent-rows.js';
import { RECENT_CUSTOM_VALUES, RECENT_VALUES } from '../../sql/layout.js';
import { SPREAD_VALUE_FIELDS } from '../../sql/value-fields.js';
import { sqliteTestRows } from './test-rows-sqlite.js';

const COLUMN_FIELDS: ReadonlyMap<string, FieldDef> = new Map(ATTRIBUTE_COLUMNS.map((c) => [c.column, c.field]));
const TOOL_TYPE_INDEX = BUILD_ROW_COLUMNS.indexOf('tool_type');

/** Builds per multi-row INSERT into builds (each has up to ~70 columns to bind). */
const BUILDS_PER_INSERT = 16;
/** Rows per multi-row INSERT of child rows. */
const ROWS_PER_INSERT = 64;
/** The statements a part's child rows are inserted with: as many of the largest as fit, then smaller. */
const ROW_GROUPS = [ROWS_PER_INSERT, 16, 4, 1] as const;

/**
 * One ingest transaction at a time per connection: a bulk transaction spans several parts (and
 * awaits between them), and another ingest on the same connection must not start, or write into,
 * it meanwhile. Released at commit or rollback.
 */
const locks = new WeakMap<BetterSqlite3.Database, Promise<void>>();

async function lock(db: BetterSqlite3.Database): Promise<() => void> {
  const before = locks.get(db) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((r) => (release = r));
  const chained = before.then(() => mine);
  locks.set(db, chained);
  await before;
  return () => {
    release();
    if (locks.get(db) === chained) locks.delete(db);
  };
}

export function sqliteWriter(ctx: IngestContext, { visibility }: WriterOptions): IngestWriter {
  const db = ctx.handle.sqlite!;
  // New chunks and attributes are stored compressed (store migration 0008) unless asked not to.
  // The rowid range of a build's chunks (store migration 0018), as SQL text for a prepared statement.
  const chunksOfKey = eventsRange(sql.raw('k.value'), 'e.id').compile(ctx.handle.db);
  if (chunksOfKey.parameters.length > 0) throw new Error('the chunk range of a key must be plain SQL');
  const s = statements(db, ctx.packEvents !== false, chunksOfKey.sql);
  const search = ctx.trigram?.(db);
  const moveRecentRows = recentRowsMove(db, ctx.foldRows);
  let release: (() => void) | undefined;

  const load = (lines: readonly PreparedLine[]): ReturnType<typeof storedBuilds> => {
    const ids = namedBuildIds(lines);
    if (ids.length === 0) return new Map();
    const rows = s.selectBuilds.all(JSON.stringify(ids)) as StoredBuildRow[];
    const readable = keysToRead(rows, visibility);
    const chunks = readable.length === 0 ? [] : (s.selectChunks.all(JSON.stringify(readable)) as StoredChunkRow[]);
    return storedBuilds(rows, chunks);
  };

  const part = (lines: readonly PreparedLine[]): PartWritten => {
    // The highest seq ever used: a deleted build's seq is never handed out again (deleted_builds).
    const maxSeq = Number(s.selectMaxSeq.get());
    const lastEventsKey = Number(s.selectLastEventsKey.get());
    const stored = load(lines);
    const { results, writes } = planBatch(lines, {
      load: (id) => stored.get(id),
      now: ctx.clock,
      newId: newBuildId,
      maxSeq,
      lastEventsKey,
      ...(visibility ? { visibility } : {}),
    });
    search?.begin();
    const testRuns = s.write(writes);
    if (writes.lastEventsKey !== lastEventsKey) s.updateLastEventsKey.run(writes.lastEventsKey);
    addIngestedToRollups(ctx.handle, maxSeq, writes.maxSeq);
    if (testRuns.length > 0) s.tests.addRollups(testRuns, new Map(rollupKeyIds(ctx.handle, maxSeq, writes.maxSeq)));
    // Before the trigram fill: it indexes the custom values a move adds to build_custom_values.
    moveRecentRows();
    search?.finish(maxSeq);
    return { results, maxSeq: writes.maxSeq };
  };

  // Only the writer holding the lock has a transaction: another one's is none of its business
  // (db.inTransaction is the connection's).
  const commit = (): void => {
    if (release !== undefined && db.inTransaction) s.commit.run();
  };
  const unlock = (): void => {
    release?.();
    release = undefined;
  };

  return {
    async part(lines, andCommit, guarded) {
      // IMMEDIATE: take the write lock up front, so max(seq) cannot change under us.
      if (release === undefined) release = await lock(db);
      if (!db.inTransaction) s.begin.run();
      let written: PartWritten;
      if (!guarded) written = part(lines);
      else {
        s.savepoint.run();
        try {
          written = part(lines);
          s.release.run();
        } catch (e) {
          // The dictionary ids the part found may be of rows it added.
          s.tests.forget();
          if (db.inTransaction) {
            s.rollbackTo.run();
            s.release.run();
          }
          throw e;
        }
      }
      if (andCommit) {
        commit();
        unlock();
      }
      return written;
    },
    async commit() {
      try {
        commit();
      } finally {
        unlock();
      }
    },
    async rollback() {
      s.tests.forget();
      try {
        if (release !== undefined && db.inTransaction) s.rollback.run();
      } finally {
        unlock();
      }
    },
  };
}

/** The prepared statements of the write path, and the function that writes a part's rows. */
function statements(db: BetterSqlite3.Database, pack: boolean, chunksOfKey: string) {
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
      const params = new Array<string | number | Uint8Array | null>(BUILDS_PER_INSERT * own.length);
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
  // The rowid packs the key, and the chunk's hash is not stored (store migration 0018, events-rowid.ts).
  const insertChunk = db.prepare('INSERT INTO build_events (id, event_count, events, events_packed) VALUES (?, ?, ?, ?)');
  // Custom values and the values of spread fields go to the recent rows first, moved into
  // build_custom_values and build_values in bulk (recent-rows.ts).
  const insertValues = rowInserter(db, 'INSERT OR IGNORE INTO build_values (seq, field, value) VALUES');
  const insertRecentValues = rowInserter(db, `INSERT OR IGNORE INTO ${RECENT_VALUES} (seq, field, value) VALUES`);
  const insertCustoms = rowInserter(db, `INSERT INTO ${RECENT_CUSTOM_VALUES} (seq, name, value) VALUES`);
  // Upsert: a row left behind by a deleted build (seq reused after deleting the newest builds)
  // is replaced rather than failing the batch.
  const insertAttributes = db.prepare(
    'INSERT INTO build_attributes (seq, attributes, attributes_packed) VALUES (?, ?, ?) ON CONFLICT (seq) DO UPDATE SET attributes = excluded.attributes, attributes_packed = excluded.attributes_packed',
  );
  const insertTasks = rowInserter(db, 'INSERT INTO build_tasks (seq, ord, path_id, outcome, start_ms, duration_ms, cacheable) VALUES', 7);
  // The task path dictionary (store migration 0012): a batch looks up each of its distinct paths
  // once and adds the new ones, inside its transaction (a rolled-back batch leaves none behind).
  const selectPathId = db.prepare('SELECT id FROM task_paths WHERE path = ?').pluck();
  const insertPath = db.prepare('INSERT INTO task_paths (path) VALUES (?)');
  const pathIds = (tasks: readonly TaskWrite[]): Map<string, number> => {
    const ids = new Map<string, number>();
    for (const t of tasks) {
      if (ids.has(t[2])) continue;
      const id = selectPathId.get(t[2]) as number | undefined;
      ids.set(t[2], id ?? Number(insertPath.run(t[2]).lastInsertRowid));
    }
    return ids;
  };
  const upsertTaskCounts = db.prepare(
    `INSERT INTO build_task_counts (seq, ${TASK_COUNT_COLUMNS.join(', ')}) VALUES (?${', ?'.repeat(TASK_COUNT_COLUMNS.length)})
     ON CONFLICT (seq) DO UPDATE SET ${TASK_COUNT_COLUMNS.map((c) => `${c} = excluded.${c}`).join(', ')}`,
  );

  // The test dimension (store migration 0020): its own module, with its dictionaries.
  const tests = sqliteTestRows(db, rowInserter);

  /** Writes a part's rows; answers its test executions (for their rollups, once the part's rollup keys are in). */
  const write = (w: BatchWrites): TestRunRow[] => {
    const byTool = new Map<ToolType, BuildRow[]>();
    for (const row of w.insertBuilds) {
      const tool = row[TOOL_TYPE_INDEX] as ToolType;
      const list = byTool.get(tool);
      if (list === undefined) byTool.set(tool, [row]);
      else list.push(row);
    }
    // In the order of the primary key (random build IDs): each B-tree page is visited once.
    for (const [tool, rows] of byTool) insertBuild.get(tool)!(rows.sort(byFirst));
    for (const row of w.updateBuilds) updateBuild.run([...row.slice(1), row[0]]);
    // In key order: new builds' keys are the highest, so their chunks are appended at the end.
    const chunks = [...w.chunks].sort((a, b) => a.events_key - b.events_key || a.chunk - b.chunk);
    for (const c of chunks) {
      const id = eventsId(c.events_key, c.chunk);
      if (pack) insertChunk.run(id, c.event_count, '', c.packed);
      else insertChunk.run(id, c.event_count, chunkRowText(c), null);
    }
    const spread: BatchWrites['values'] = [];
    const others: BatchWrites['values'] = [];
    for (const v of w.values) (SPREAD_VALUE_FIELDS.has(v[1]) ? spread : others).push(v);
    insertValues(others);
    insertRecentValues(spread);
    insertCustoms(w.customValues);
    for (const [seq, json, packed] of w.attributes) {
      if (pack) insertAttributes.run(seq, '', packed);
      else insertAttributes.run(seq, json, null);
    }
    // A new seq every time (a deleted build's seq is never reused, and prune deletes its task
    // rows), so task rows are only ever inserted.
    if (w.tasks.length > 0) {
      const ids = pathIds(w.tasks);
      // In key order (seq, ord), as planned: appended at the end of build_tasks.
      insertTasks(w.tasks.map((t) => [t[0], t[1], ids.get(t[2])!, t[3], t[4], t[5], t[6]]));
    }
    for (const c of w.taskCounts) upsertTaskCounts.run(c);
    return tests.write(w);
  };

  const inList = 'IN (SELECT value FROM json_each(?))';
  return {
    write,
    tests,
    selectBuilds: db.prepare(`SELECT ${STORED_BUILD_COLUMNS.join(', ')} FROM builds WHERE id ${inList}`),
    // Each build's chunks a range of rowids (store migration 0018), in key order. CROSS JOIN keeps
    // the keys the outer loop: ordered by id, the planner may otherwise scan the whole table in
    // rowid order to spare a sort of a few rows (it does on a small store without statistics).
    selectChunks: db.prepare(
      `SELECT e.events_key, e.events, e.events_packed FROM json_each(?) AS k CROSS JOIN build_events AS e
         ON ${chunksOfKey} ORDER BY e.id`,
    ),
    selectMaxSeq: db.prepare(maxSeqSql('max')).pluck(),
    selectLastEventsKey: db.prepare(LAST_EVENTS_KEY_SQL).pluck(),
    updateLastEventsKey: db.prepare('UPDATE events_key_counter SET last = ?'),
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
    savepoint: db.prepare('SAVEPOINT ingest_part'),
    release: db.prepare('RELEASE ingest_part'),
    rollbackTo: db.prepare('ROLLBACK TO ingest_part'),
  };
}

const byFirst = (a: BuildRow, b: BuildRow): number => {
  const x = a[0] as string;
  const y = b[0] as string;
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * Inserts rows of `width` values with multi-row INSERTs: `ROWS_PER_INSERT` at a time, then the
 * rest 16, 4 and 1 at a time (ROW_GROUPS). Per statement, not per row: SQLite's own statement
 * overhead and, because the tables' search triggers name FTS5 tables, the virtual tables'
 * begin/savepoint calls (about 9 µs a statement even when the triggers stand aside), which made
 * child rows the costliest part of the ingest's writes. A part of 100 builds has ~250 custom
 * values: the rest after the 64-row statements was up to 63 statements of one row, at most 9 now
 * (20,000 demo builds: 6-8% less CPU a build, docs/store.md "Checkpoints of a bulk load").
 * `tail` follows the rows (an upsert's ON CONFLICT clause).
 */
export function rowInserter(db: BetterSqlite3.Database, insert: string, width = 3, tail = ''): (rows: readonly (readonly unknown[])[]) => void {
  const tuple = `(${Array.from({ length: width }, () => '?').join(', ')})`;
  const statements = ROW_GROUPS.map((n) => ({ n, st: db.prepare(`${insert} ${Array.from({ length: n }, () => tuple).join(', ')}${tail === '' ? '' : ` ${tail}`}`), params: new Array<unknown>(n * width) }));
  return (rows) => {
    let i = 0;
    for (const { n, st, params } of statements) {
      for (; i + n <= rows.length; i += n) {
        for (let k = 0; k < n; k++) {
          const r = rows[i + k]!;
          for (let j = 0; j < width; j++) params[width * k + j] = r[j];
        }
        st.run(params);
      }
    }
  };
}
