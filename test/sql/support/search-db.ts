// A search database for the compiler's tests: the tables of the agreed build schema, the search
// indexes, and rows written the way the store writes an available build (the row first, then
// seq and attributes in one update, then the child rows), so the trigram triggers are exercised.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIELDS, type FieldDef } from '../../../src/query/catalog.js';
import type { CheckedExpr } from '../../../src/query/checked.js';
import { sql, type Insertable, type Transaction } from 'kysely';
import { openDatabase, type DatabaseHandle } from '../../../src/db/database.js';
import type { BuildsTable, CatalogColumns, Database } from '../../../src/db/schema.js';
import { migrateStoreAndSearch } from '../../../src/store/schema/migrations.js';
import { reconcileCatalog } from '../../../src/store/schema/reconcile.js';
import type { BuildAttributes } from '../../../src/store/types.js';
import { compileQuery } from '../../../src/sql/index.js';
import { SPREAD_VALUE_FIELDS, valueFieldCode } from '../../../src/sql/value-fields.js';
import { dialectOf } from '../../../src/sql/dialect.js';
import { createTestDatabase } from '../../support/postgres.js';

export interface TestBuild {
  readonly id: string;
  readonly toolType: string;
  readonly attributes: BuildAttributes;
}

export interface SearchDb {
  readonly handle: DatabaseHandle;
  close(): Promise<void>;
}

const SINGLE = FIELDS.filter((f) => !f.multi);

/**
 * Opens a fresh SQLite (temp dir) or PostgreSQL (test database) with the store's tables and the
 * search indexes, brought up to today's catalog as the store does when it opens (columns of the
 * fields added after the frozen migrations).
 */
export async function openSearchDb(dialect: 'sqlite' | 'postgres'): Promise<SearchDb> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'search-sql-'));
    const handle = await openDatabase({ data: dir });
    await migrateStoreAndSearch(handle);
    await reconcileCatalog(handle);
    return {
      handle,
      async close() {
        await handle.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const pg = await createTestDatabase();
  if (!pg) throw new Error('PostgreSQL is not available');
  const handle = await openDatabase({ url: pg.url });
  await migrateStoreAndSearch(handle);
  await reconcileCatalog(handle);
  return {
    handle,
    async close() {
      await handle.close();
      await pg.drop();
    },
  };
}

function columnValue(f: FieldDef, v: unknown): string | number | null {
  if (v === undefined || v === null) return null;
  switch (f.type) {
    case 'string':
    case 'keyValue':
      return String(v).toLowerCase();
    case 'boolean':
      return v === true ? 1 : 0;
    default:
      return typeof v === 'number' ? v : null;
  }
}

let nextSeq = 1;

interface Rows {
  readonly header: Insertable<BuildsTable>;
  /** The catalog columns of `builds` (and seq, available_at, attributes). */
  readonly attributes: CatalogColumns;
  readonly values: { seq: number; field: number; value: string }[];
  readonly custom: { seq: number; name: string; value: string }[];
}

function rowsOf(b: TestBuild, seq: number): Rows {
  const tool = b.toolType.toLowerCase();
  const attributes: Record<string, string | number | null> = { seq, available_at: seq, attributes: JSON.stringify(b.attributes) };
  for (const f of SINGLE) {
    if (f.tool !== null && f.tool !== tool) continue;
    attributes[f.column] = f.name === 'buildTool' ? tool : columnValue(f, b.attributes[f.name]);
  }
  const values: Rows['values'] = [];
  const custom: Rows['custom'] = [];
  for (const f of FIELDS.filter((x) => x.multi && (x.tool === null || x.tool === tool))) {
    const vs = b.attributes[f.name];
    if (!Array.isArray(vs)) continue;
    for (const v of vs as readonly unknown[]) {
      if (f.type === 'keyValue') {
        const kv = v as { name: string; value: string };
        custom.push({ seq, name: kv.name.toLowerCase(), value: kv.value.toLowerCase() });
      } else {
        // A value listed twice is one row, as the ingest stores it (build_values is keyed by
        // (field, value, seq) since store migration 0015).
        const value = String(v).toLowerCase();
        const field = valueFieldCode(f.column);
        if (!values.some((x) => x.field === field && x.value === value)) values.push({ seq, field, value });
      }
    }
  }
  const header = { id: b.id, tool_type: b.toolType, tool_version: '1', agent_version: '1', content_hash: Buffer.from(b.id), attributes: '{}', received_at: seq };
  return { header, attributes, values, custom };
}

/**
 * Stores builds as available, as the store does: the row first (incomplete), then seq and the
 * attribute columns in one update, then the child rows (custom values and the values of spread
 * fields in either of their tables). `bulk` inserts complete rows in batches instead (faster, for
 * larger corpora; the insert triggers then keep the trigram tables).
 */
export async function insertBuilds(handle: DatabaseHandle, builds: readonly TestBuild[], options: { bulk?: boolean; allIndexed?: boolean } = {}): Promise<void> {
  const all = builds.map((b) => rowsOf(b, nextSeq++));
  // Where the ingest gathers the latest child rows apart (store/ingest/recent-rows.ts), every other
  // build's are there, so that every search reads both tables and must find its rows in each.
  // `allIndexed`: all in the large tables (tests of their trigram tables).
  const recent = (seq: number) => dialectOf(handle.dialect).recentRows && options.allIndexed !== true && seq % 2 === 1;
  const customTable = (seq: number) => (recent(seq) ? 'build_custom_values_recent' : 'build_custom_values');
  // A spread field's value of such a build goes there too; the others always to build_values.
  const valuesTable = (v: { seq: number; field: number }) => (recent(v.seq) && SPREAD_VALUE_FIELDS.has(v.field) ? 'build_values_recent' : 'build_values');
  const insert = async (trx: Transaction<Database>, values: Rows['values'], custom: Rows['custom']): Promise<void> => {
    for (const table of ['build_values', 'build_values_recent'] as const) {
      const rows = values.filter((v) => valuesTable(v) === table);
      if (rows.length) await trx.insertInto(table).values(rows).execute();
      // A recent value joins the field's terms when it arrives, as the ingest adds it (the same
      // statement as sql/indexes.ts trigramBatch); build_values' own trigger adds the others.
      if (table === 'build_values_recent' && rows.length) await sql`INSERT OR IGNORE INTO build_value_terms (field, value) SELECT field, value FROM build_values_recent`.execute(trx);
    }
    for (const table of ['build_custom_values', 'build_custom_values_recent'] as const) {
      const rows = custom.filter((c) => customTable(c.seq) === table);
      if (rows.length) await trx.insertInto(table).values(rows).execute();
    }
  };
  await handle.db.transaction().execute(async (trx) => {
    if (options.bulk) {
      for (let i = 0; i < all.length; i += 100) {
        const chunk = all.slice(i, i + 100);
        // Several rows per statement; a column a row lacks (another tool's) is inserted as NULL.
        for (let j = 0; j < chunk.length; j += 50) {
          await trx.insertInto('builds').values(chunk.slice(j, j + 50).map((r) => ({ ...r.header, ...r.attributes }))).execute();
        }
        await insert(trx, chunk.flatMap((r) => r.values), chunk.flatMap((r) => r.custom));
      }
      return;
    }
    for (const r of all) {
      await trx.insertInto('builds').values(r.header).execute();
      await trx.updateTable('builds').set(r.attributes).where('id', '=', r.header.id).execute();
      await insert(trx, r.values, r.custom);
    }
  });
}

/** IDs of the available builds matching `expr`, sorted. */
export async function searchIds(handle: DatabaseHandle, expr: CheckedExpr): Promise<string[]> {
  const rows = await handle.db
    .selectFrom('builds')
    .select('builds.id')
    .where('builds.seq', 'is not', null)
    .where(compileQuery(expr, handle.dialect))
    .execute();
  return rows.map((r) => String(r['id'])).sort();
}

export async function clearBuilds(handle: DatabaseHandle): Promise<void> {
  await handle.db.deleteFrom('build_values').execute();
  await handle.db.deleteFrom('build_custom_values').execute();
  await handle.db.deleteFrom('build_custom_values_recent').execute();
  await handle.db.deleteFrom('build_values_recent').execute();
  await handle.db.deleteFrom('builds').execute();
}
