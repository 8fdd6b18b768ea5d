// The catalog's part of the schema, reconciled every time the store opens, after the versioned
// migrations. Migrations are frozen (they create what they created when written); the field
// catalog keeps growing. So that adding a field is one catalog entry, this step brings any
// database up to the catalog:
//
// - a column for every single-valued field (ALTER TABLE ... ADD COLUMN), both dialects;
// - the btree index of every generic field and the trigram index of every `infix` field
//   (SQLite: the FTS5 table is rebuilt when its column list differs from the catalog's);
// - the values of fields new to this database, derived again from the stored events of every
//   available build (events are the source of truth), recorded in `store_fields` so that this
//   happens once per field.
//
// It runs under the dialect's schema lock (SQLite: BEGIN IMMEDIATE; PostgreSQL: a transaction-scoped
// advisory lock), so several processes opening one database reconcile it once. A field removed from the catalog
// keeps its column and values; nothing reads them.

import { sql } from 'kysely';
import type { Logger } from 'pino';
import { FIELDS, type FieldDef, type ToolType } from '../../query/catalog.js';
import { dialectOf, type Dialect, type DbOrTransaction } from '../../sql/index.js';
import { BUILDS_TRIGRAM_COLUMNS, INDEXED_FIELDS } from '../../sql/layout.js';
import { valueFieldCode } from '../../sql/value-fields.js';
import { bucketedField, bucketIndex } from '../../sql/value-buckets.js';
import { ATTRIBUTE_COLUMNS, sqlType } from './columns.js';
import type { DatabaseHandle } from '../../db/database.js';
import { deriveAttributes } from '../events/derive.js';
import { packAttributes } from '../events/event-codec.js';
import { eventsByKey } from '../events/events-read.js';
import { layoutOf } from './layout.js';
import { STORE_FIELDS } from './migrations.js';

type Db = DbOrTransaction;

export interface ReconcileReport {
  /** Columns added to `builds`. */
  readonly addedColumns: readonly string[];
  /** Whether the SQLite trigram table was rebuilt for a changed list of infix columns. */
  readonly rebuiltTrigram: boolean;
  /** Fields new to this database whose values were derived for the stored builds. */
  readonly newFields: readonly string[];
  /** Available builds whose new fields were derived. */
  readonly backfilled: number;
}

/** Builds derived per round trip while backfilling new fields. */
const PAGE = 500;

export async function reconcileCatalog(handle: DatabaseHandle, logger?: Logger): Promise<ReconcileReport> {
  const dialect = dialectOf(handle.dialect);
  return dialect.withSchemaLock(handle.db, (db) => reconcile(dialect, db, logger));
}

/** Adds to `builds` the columns of catalog fields it lacks; returns their names. */
export async function addCatalogColumns(dialect: Dialect, db: Db): Promise<string[]> {
  const existing = new Set(await dialect.columnsOf(db, 'builds'));
  const addedColumns: string[] = [];
  for (const c of ATTRIBUTE_COLUMNS) {
    if (existing.has(c.column)) continue;
    await sql.raw(`ALTER TABLE builds ADD COLUMN "${c.column}" ${sqlType(c.kind)}`).execute(db);
    addedColumns.push(c.column);
  }
  return addedColumns;
}

async function reconcile(dialect: Dialect, db: Db, logger: Logger | undefined): Promise<ReconcileReport> {
  const addedColumns = await addCatalogColumns(dialect, db);

  for (const f of INDEXED_FIELDS) {
    await sql.raw(bucketedField(dialect, f) ? bucketIndex(f.column) : dialect.columnIndex(f.column, f.type === 'string')).execute(db);
  }
  const rebuiltTrigram = await dialect.reconcileTrigram(db, BUILDS_TRIGRAM_COLUMNS);

  const recorded = new Set((await db.selectFrom(STORE_FIELDS).select('name').execute()).map((r) => r.name as string));
  const fresh = FIELDS.filter((f) => !recorded.has(f.name));
  let backfilled = 0;
  if (fresh.length > 0) {
    backfilled = await backfill(db, dialect.name, fresh, logger);
    await db.insertInto(STORE_FIELDS).values(fresh.map((f) => ({ name: f.name }))).execute();
  }
  const report = { addedColumns, rebuiltTrigram, newFields: fresh.map((f) => f.name), backfilled };
  if (addedColumns.length > 0 || rebuiltTrigram || fresh.length > 0) logger?.info(report, 'search fields reconciled with the field catalog');
  return report;
}

/**
 * Derives the values of `fields` for every available build from its stored events and writes
 * them: the column of a single-valued field, the child rows of a multi-valued one, and the
 * attributes JSON (derived whole again, so it holds the new fields too). Logs progress.
 */
async function backfill(db: Db, dialect: Dialect['name'], fields: readonly FieldDef[], logger: Logger | undefined): Promise<number> {
  const total = Number((await db.selectFrom('builds').select((eb) => eb.fn.countAll().as('n')).where('seq', 'is not', null).executeTakeFirstOrThrow()).n);
  if (total === 0) return 0;
  const singles = ATTRIBUTE_COLUMNS.map((c, i) => ({ c, i })).filter(({ c }) => fields.includes(c.field));
  // Every multi-valued field but the key-value one keeps its values in build_values, whatever its source.
  const multiColumns = new Set(fields.filter((f) => f.multi && f.type !== 'keyValue').map((f) => f.column));
  logger?.info({ fields: fields.map((f) => f.name), builds: total }, 'deriving new search fields for the stored builds');
  let done = 0;
  let after = 0;
  for (;;) {
    const builds = await db
      .selectFrom('builds')
      .select(['id', 'seq', 'tool_type', 'tool_version', 'agent_version', 'events_key'])
      .where('seq', '>', after)
      .orderBy('seq')
      .limit(PAGE)
      .execute();
    if (builds.length === 0) break;
    const events = await eventsByKey(db, layoutOf(dialect), builds.flatMap((b) => (b.events_key === null ? [] : [Number(b.events_key)])));
    for (const b of builds) {
      const seq = Number(b.seq);
      const d = deriveAttributes(
        { toolType: b.tool_type as ToolType, toolVersion: b.tool_version as string, agentVersion: b.agent_version as string },
        events.get(Number(b.events_key)) ?? [],
      );
      if (singles.length > 0) {
        const set: Record<string, string | number | null> = {};
        for (const { c, i } of singles) set[c.column] = d.columns[i] ?? null;
        await db.updateTable('builds').set(set).where('seq', '=', seq).execute();
      }
      const rows = d.values.filter(([field]) => multiColumns.has(field)).map(([field, value]) => ({ seq, field: valueFieldCode(field), value }));
      // Keyed by (field, value, seq) since store migration 0015: a row already there is kept.
      if (rows.length > 0) await db.insertInto('build_values').values(rows).onConflict((oc) => oc.doNothing()).execute();
      // Compressed like every attributes row (store migration 0008).
      await db.updateTable('build_attributes').set({ attributes: '', attributes_packed: packAttributes(JSON.stringify(d.attributes)) }).where('seq', '=', seq).execute();
      after = seq;
    }
    done += builds.length;
    logger?.info({ done, total }, 'deriving new search fields');
  }
  return done;
}
