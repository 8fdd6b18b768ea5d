// build_values keyed by its search key (store migration 0015) on both databases: a store in the
// layout before it, holding a build's value twice as the ingest then wrote it (and the facet
// rollups counting it twice), migrates; every search, count and facet answers as for the same
// builds stored after it (a value listed twice is one value: facets count builds); the layout is
// one B-tree on SQLite and a unique key on PostgreSQL; the ingest after it adds new value terms
// (their watermark is the seq), prune and the facet rollups stay equal to the direct facets.

import { sql, type SqlBool } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openBuildStore } from '../../src/store/build-store.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { buildFacets, type Facets } from '../../src/store/analytics/analytics.js';
import { namedFieldFacetRollupStatements } from '../../src/store/analytics/rollups.js';
import { migrateValuesKey } from '../../src/store/schema/values-key.js';
import { migrateValueFieldCodes } from '../../src/store/schema/value-field-codes.js';
import { valueFieldCode } from '../../src/sql/value-fields.js';
import type { CheckedExpr } from '../../src/query/checked.js';
import { SEE_EVERYTHING, type BuildStore } from '../../src/store/types.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { pgAvailable } from '../support/postgres.js';
import { undoValuesKey } from './values-key-rewind.js';
import { checkedQuery, completeBuild, ev, id, openTestStore } from './support.js';

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];

const NOW = Date.UTC(2026, 0, 1);
/** Facet values asked for: every tag of the builds stored here. */
const LIMIT = 200;

const checked = (text: string): CheckedExpr => checkedQuery(text, NOW);

const QUERIES = ['tag:twice', 'tag:once', 'tag:tw*', 'tag:*wic*', 'not tag:twice', 'tag:twice tag:once', 'requested:*build*', 'tag:*', 'tag:null'];

interface Answers {
  lists: Record<string, string[]>;
  counts: Record<string, number>;
  facets: Record<string, Facets>;
  direct: Record<string, Facets>;
}

async function answers(store: BuildStore, handle: DatabaseHandle): Promise<Answers> {
  const out: Answers = { lists: {}, counts: {}, facets: {}, direct: {} };
  for (const text of QUERIES) {
    const query = checked(text);
    out.lists[text] = (await store.listBuilds({ visibility: SEE_EVERYTHING, query })).map((b) => b.id);
    out.counts[text] = await store.countBuilds({ visibility: SEE_EVERYTHING, query });
  }
  for (const text of ['', 'tag:twice', 'buildTool:jvmbuild']) {
    const scope = text === '' ? { visibility: SEE_EVERYTHING } : { visibility: SEE_EVERYTHING, query: checked(text) };
    out.facets[text] = await buildFacets(handle, scope, LIMIT);
    out.direct[text] = await buildFacets(handle, scope, LIMIT, { rollups: false });
  }
  return out;
}

const tagCount = (f: Facets, value: string): number | undefined => f.tag.find((t) => t.value === value)?.count;

async function rows(handle: DatabaseHandle, where: string): Promise<number> {
  return Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM build_values WHERE ${sql.raw(where)}`.execute(handle.db)).rows[0]!.n);
}

/** The tag rows: by the field's code (store migration 0016) or, in the layout before it, by its name. */
const TAG = `field = ${valueFieldCode('tag')}`;
const TAG_NAMED = "field = 'tag'";

/** Stores the builds `seqs`' value (tag, `value`) a second time, as the ingest before 0015 did, the facet rollups counting it. */
async function duplicateTheOldWay(handle: DatabaseHandle, seqs: readonly number[], value: string): Promise<void> {
  const selection = sql<SqlBool>`b.seq IN (${sql.join(seqs.map((s) => sql.lit(s)))})`;
  await handle.db.transaction().execute(async (trx) => {
    for (const q of namedFieldFacetRollupStatements(trx, handle.dialect, selection, -1)) await trx.executeQuery(q);
    for (const seq of seqs) await sql`INSERT INTO build_values (seq, field, value) VALUES (${seq}, 'tag', ${value})`.execute(trx);
    for (const q of namedFieldFacetRollupStatements(trx, handle.dialect, selection, 1)) await trx.executeQuery(q);
  });
}

async function seqsOf(handle: DatabaseHandle, ids: readonly string[]): Promise<number[]> {
  return (await handle.db.selectFrom('builds').select('seq').where('id', 'in', ids).orderBy('seq').execute()).map((r) => Number(r.seq));
}

describe.each(dialects)('build_values keyed by (field, value, seq) on $name', ({ name, skip }) => {
  it.skipIf(skip)('migrates a store holding values twice; searches, counts and facets answer the same', async () => {
    const t = await openTestStore(name, { ingestWorker: false });
    try {
      // Builds listing a tag twice (in two cases), first so that prune takes one of them.
      const twice = [id(), id(), id()];
      for (const b of twice) {
        await t.store.ingestNdjson(completeBuild(b, 'alpha', [ev('UserTag', { tag: 'twice' }), ev('UserTag', { tag: 'TWICE' }), ev('UserTag', { tag: 'once' })]));
      }
      await t.store.ingestNdjson([...demoBuilds({ builds: 150, seed: 15, now: NOW })].join('\n'));
      // Stored once each since 0015.
      expect(await rows(t.handle, `${TAG} AND value = 'twice'`)).toBe(3);
      const before = await answers(t.store, t.handle);
      // Facets count builds: the three builds once each, from the rollups and directly.
      expect(tagCount(before.facets['']!, 'twice')).toBe(3);
      expect(tagCount(before.direct['']!, 'twice')).toBe(3);
      expect(before.counts['tag:twice']).toBe(3);
      expect(before.counts['requested:*build*']).toBeGreaterThan(0);
      expect(before.counts['tag:*']).toBeGreaterThan(3);

      // Back to the layout before 0015, the values written twice as the ingest then wrote them.
      await undoValuesKey(t.handle.db, name);
      await duplicateTheOldWay(t.handle, await seqsOf(t.handle, twice), 'twice');
      expect(await rows(t.handle, `${TAG_NAMED} AND value = 'twice'`)).toBe(6);
      expect(tagCount(await buildFacets(t.handle, { visibility: SEE_EVERYTHING }, LIMIT), 'twice')).toBe(6);
      const total = await rows(t.handle, 'true');

      const opened = await openBuildStore(t.handle, { ingestWorker: false });
      try {
        expect(await answers(opened, t.handle)).toEqual(before);
        expect(await rows(t.handle, 'true')).toBe(total - 3);
        if (name === 'sqlite') {
          const ddl = (await sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE name = 'build_values'`.execute(t.handle.db)).rows[0]!.sql;
          expect(ddl).toMatch(/PRIMARY KEY \(field, value, seq\)\) WITHOUT ROWID/i);
          const indexes = (await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'build_values' AND sql IS NOT NULL`.execute(t.handle.db)).rows;
          expect(indexes.map((r) => r.name)).toEqual(['build_values_seq']);
          // The value terms' triggers moved to the new table.
          const triggers = (await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'build_values' ORDER BY name`.execute(t.handle.db)).rows;
          expect(triggers.map((r) => r.name)).toEqual(['build_value_terms_ai', 'build_value_terms_au']);
        } else {
          const unique = (await sql<{ indisunique: boolean }>`SELECT i.indisunique FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'build_values_search_idx'`.execute(t.handle.db)).rows;
          expect(unique).toEqual([{ indisunique: true }]);
        }

        // The ingest after it: a new term (and a value listed twice) is found by wildcard through
        // the value terms, whose bulk upkeep reads the batch's rows by seq.
        const fresh = id();
        await opened.ingestNdjson(completeBuild(fresh, 'alpha', [ev('UserTag', { tag: 'Brand-New' }), ev('UserTag', { tag: 'brand-new' })]));
        expect((await opened.listBuilds({ visibility: SEE_EVERYTHING, query: checked('tag:*and-ne*') })).map((b) => b.id)).toEqual([fresh]);
        expect(await rows(t.handle, `${TAG} AND value = 'brand-new'`)).toBe(1);
        // Re-sending a build changes nothing.
        expect((await opened.ingestNdjson(completeBuild(twice[0]!, 'alpha', []))).map((r) => r.status)).not.toContain('failed');

        // Prune deletes a build that held a value twice; the rollups still equal the direct facets.
        const gone = await opened.deleteBuilds({ kind: 'oldest' }, 1);
        expect(gone.map((g) => g.id)).toEqual([twice[0]]);
        const facets = await buildFacets(t.handle, { visibility: SEE_EVERYTHING }, LIMIT);
        expect(tagCount(facets, 'twice')).toBe(2);
        expect(facets).toEqual(await buildFacets(t.handle, { visibility: SEE_EVERYTHING }, LIMIT, { rollups: false }));
      } finally {
        await opened.close();
      }
    } finally {
      await t.close();
    }
  }, 180_000);

  // SQLite commits each batch by itself (PostgreSQL runs the migration in one transaction).
  it.skipIf(skip || name !== 'sqlite')('copies in batches of keys with progress; starts over after an interrupted run', async () => {
    const t = await openTestStore(name, { ingestWorker: false });
    try {
      const twice = [id(), id()];
      for (const b of twice) await t.store.ingestNdjson(completeBuild(b, 'alpha', [ev('UserTag', { tag: 'twice' }), ev('UserTag', { tag: 'Twice' })]));
      await t.store.ingestNdjson([...demoBuilds({ builds: 60, seed: 16, now: NOW })].join('\n'));
      const before = await answers(t.store, t.handle);
      await undoValuesKey(t.handle.db, name);
      await duplicateTheOldWay(t.handle, await seqsOf(t.handle, twice), 'twice');
      const total = await rows(t.handle, 'true');
      // What a run stopped after a batch leaves behind: a partial copy.
      await sql`CREATE TABLE build_values_keyed (field text NOT NULL, value text NOT NULL, seq integer NOT NULL, PRIMARY KEY (field, value, seq)) WITHOUT ROWID`.execute(t.handle.db);
      await sql`INSERT INTO build_values_keyed VALUES ('tag', 'left-over', 1)`.execute(t.handle.db);
      const progress: [number, number][] = [];
      await migrateValuesKey(t.handle.db, name, (done, n) => progress.push([done, n]), 100);
      const batches = Math.ceil(total / 100);
      expect(progress.length).toBeGreaterThanOrEqual(batches);
      expect(progress.every(([, n]) => n === total)).toBe(true);
      expect(progress.map(([d]) => d)).toEqual([...progress.map(([d]) => d)].sort((a, b) => a - b));
      expect(progress.at(-1)).toEqual([total, total]);
      expect(await rows(t.handle, 'true')).toBe(total - 2);
      expect(await rows(t.handle, "value = 'left-over'")).toBe(0);
      // Run again (the migration recorded as not run): a table already keyed is left as it is.
      await migrateValuesKey(t.handle.db, name, () => {}, 100);
      // Then 0016, which the store the answers come from reads.
      await migrateValueFieldCodes(t.handle.db, name, () => {});
      expect(await answers(t.store, t.handle)).toEqual(before);
    } finally {
      await t.close();
    }
  }, 180_000);
});
