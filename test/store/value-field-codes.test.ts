// build_values' and build_value_terms' field as the field's code (store migration 0016) on both
// databases: a store taken back to the layout before it (field names), with a value added there
// the old way (a row by name, its new term added by the old trigger), migrates; every search,
// count, facet, trend and offered value answers as before, plus the value added; the layout is
// integers on SQLite (typed so in both tables, the terms' trigram table still matching its
// content) and smallint on PostgreSQL; the ingest after it and prune keep the rollups equal to the
// direct facets; a term of a field without a code is dropped. SQLite converts in batches with progress and starts over after an interrupted
// run; a field name without a code stops the migration with an error naming it.

import { sql, type SqlBool } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openBuildStore } from '../../src/store/build-store.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { buildFacets, buildTrends, type Facets } from '../../src/store/analytics/analytics.js';
import { namedFieldFacetRollupStatements } from '../../src/store/analytics/rollups.js';
import { migrateValueFieldCodes } from '../../src/store/schema/value-field-codes.js';
import { VALUE_FIELD_CODES, valueFieldCode } from '../../src/sql/value-fields.js';
import type { CheckedExpr } from '../../src/query/checked.js';
import { SEE_EVERYTHING, type BuildStore } from '../../src/store/types.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { pgAvailable } from '../support/postgres.js';
import { undoValueFieldCodes } from './value-field-codes-rewind.js';
import { checkedQuery, completeBuild, ev, id, openTestStore } from './support.js';

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];

const NOW = Date.UTC(2026, 0, 1);
const LIMIT = 200;

const checked = (text: string): CheckedExpr => checkedQuery(text, NOW);

const QUERIES = [
  'tag:ci',
  'tag:c*',
  'tag:*lak*',
  'not tag:ci',
  'tag:null',
  'tag:*',
  'requested:*assem*',
  'requested:*build*',
  'requested:test',
  'jvmbuild.environment.localIPAddress:10.*',
  'jvmbuild.environment.localIPAddress:*.1.*',
  'native.environment.localIPAddress:192.168.*',
  '-requested:*clean* tag:*',
  'tag:*way-on*',
  'tag:old-way-only',
];

interface Answers {
  lists: Record<string, string[]>;
  counts: Record<string, number>;
  facets: Record<string, Facets>;
  direct: Record<string, Facets>;
  trends: unknown;
  offered: Record<string, unknown>;
}

async function answers(store: BuildStore, handle: DatabaseHandle): Promise<Answers> {
  const out: Answers = { lists: {}, counts: {}, facets: {}, direct: {}, trends: undefined, offered: {} };
  for (const text of QUERIES) {
    const query = checked(text);
    out.lists[text] = (await store.listBuilds({ visibility: SEE_EVERYTHING, query })).map((b) => b.id);
    out.counts[text] = await store.countBuilds({ visibility: SEE_EVERYTHING, query });
  }
  for (const text of ['', 'tag:ci', 'buildTool:jvmbuild', 'requested:*assem*']) {
    const scope = text === '' ? { visibility: SEE_EVERYTHING } : { visibility: SEE_EVERYTHING, query: checked(text) };
    out.facets[text] = await buildFacets(handle, scope, LIMIT);
    out.direct[text] = await buildFacets(handle, scope, LIMIT, { rollups: false });
  }
  out.trends = await buildTrends(handle, { visibility: SEE_EVERYTHING, query: checked('tag:*') }, { from: NOW - 40 * 86_400_000, to: NOW + 86_400_000, interval: 'week', tz: 'UTC' });
  for (const [field, prefix] of [
    ['tag', ''],
    ['requested', 'a'],
    ['jvmbuild.environment.localIPAddress', '10.0'],
  ] as const) {
    out.offered[`${field} ${prefix}`] = await store.fieldValues(field, { visibility: SEE_EVERYTHING, prefix, limit: 50 });
  }
  return out;
}

async function rows(handle: DatabaseHandle, table: string, where = 'true'): Promise<number> {
  return Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM ${sql.raw(table)} WHERE ${sql.raw(where)}`.execute(handle.db)).rows[0]!.n);
}

/** Adds the tag `value` to the build `seq` as the store before 0016 did: a row naming its field, the facet rollups counting it. */
async function tagTheOldWay(handle: DatabaseHandle, seq: number, value: string): Promise<void> {
  const selection = sql<SqlBool>`b.seq = ${sql.lit(seq)}`;
  await handle.db.transaction().execute(async (trx) => {
    for (const q of namedFieldFacetRollupStatements(trx, handle.dialect, selection, -1)) await trx.executeQuery(q);
    await sql`INSERT INTO build_values (seq, field, value) VALUES (${seq}, 'tag', ${value})`.execute(trx);
    for (const q of namedFieldFacetRollupStatements(trx, handle.dialect, selection, 1)) await trx.executeQuery(q);
  });
}

async function store(t: { store: BuildStore }, builds: number, seed: number): Promise<string> {
  const tagged = id();
  await t.store.ingestNdjson(completeBuild(tagged, 'alpha', [ev('UserTag', { tag: 'CI' }), ev('UserTag', { tag: 'flaky' }), ev('BuildRequestedTasks', { requested: ['assemble'] })]));
  await t.store.ingestNdjson([...demoBuilds({ builds, seed, now: NOW })].join('\n'));
  return tagged;
}

async function seqOf(handle: DatabaseHandle, buildId: string): Promise<number> {
  return Number((await handle.db.selectFrom('builds').select('seq').where('id', '=', buildId).executeTakeFirstOrThrow()).seq);
}

describe.each(dialects)('value fields by code on $name', ({ name, skip }) => {
  it.skipIf(skip)('migrates a store of field names; every reader answers as before', async () => {
    const t = await openTestStore(name, { ingestWorker: false });
    try {
      const tagged = await store(t, 200, 21);
      const seq = await seqOf(t.handle, tagged);
      // Written by code since 0016.
      expect(await rows(t.handle, 'build_values', `field = ${valueFieldCode('tag')} AND value = 'ci'`)).toBeGreaterThan(0);
      expect(await rows(t.handle, 'build_value_terms', `field = ${valueFieldCode('requested')} AND value = 'assemble'`)).toBe(1);
      const before = await answers(t.store, t.handle);
      expect(before.counts['tag:ci']).toBeGreaterThan(0);
      expect(before.counts['requested:*assem*']).toBeGreaterThan(0);
      expect(before.counts['jvmbuild.environment.localIPAddress:10.*']).toBeGreaterThan(0);
      expect(before.counts['tag:old-way-only']).toBe(0);
      // With the values of spread fields gathered apart on SQLite (store/ingest/recent-rows.ts), which the
      // rewind moves into build_values.
      const total = (await rows(t.handle, 'build_values')) + (await rows(t.handle, 'build_values_recent'));
      const terms = await rows(t.handle, 'build_value_terms');

      // Back to the layout before 0016, and a tag added to one build the old way.
      await undoValueFieldCodes(t.handle.db, name);
      expect(await rows(t.handle, 'build_values', "field = 'tag' AND value = 'ci'")).toBe(before.counts['tag:ci']);
      await tagTheOldWay(t.handle, seq, 'old-way-only');
      // A term left from the rows of a field without a code (terms are never removed): it names no
      // build and does not survive the migration.
      await sql`INSERT INTO build_value_terms (field, value) VALUES ('gone_field', 'orphan-term')`.execute(t.handle.db);
      if (name === 'sqlite') {
        // The old trigger added the new term, by name.
        expect(await rows(t.handle, 'build_value_terms', "field = 'tag' AND value = 'old-way-only'")).toBe(1);
      }

      const opened = await openBuildStore(t.handle, { ingestWorker: false });
      try {
        const after = await answers(opened, t.handle);
        // The tag added the old way, and nothing else, changed the answers.
        expect(after.lists['tag:old-way-only']).toEqual([tagged]);
        expect(after.lists['tag:*way-on*']).toEqual([tagged]);
        expect(after.facets['']!.tag.find((f) => f.value === 'old-way-only')?.count).toBe(1);
        expect(after.facets['']).toEqual(after.direct['']);
        const withoutOldWay = (a: Answers): Answers => ({
          ...a,
          lists: { ...a.lists, 'tag:old-way-only': [], 'tag:*way-on*': [] },
          counts: { ...a.counts, 'tag:old-way-only': 0, 'tag:*way-on*': 0 },
          facets: Object.fromEntries(Object.entries(a.facets).map(([k, f]) => [k, { ...f, tag: f.tag.filter((x) => x.value !== 'old-way-only') }])),
          direct: Object.fromEntries(Object.entries(a.direct).map(([k, f]) => [k, { ...f, tag: f.tag.filter((x) => x.value !== 'old-way-only') }])),
          offered: { ...a.offered, 'tag ': (a.offered['tag '] as { value: string }[]).filter((x) => x.value !== 'old-way-only') },
        });
        expect(withoutOldWay(after)).toEqual(withoutOldWay(before));
        expect(await rows(t.handle, 'build_values')).toBe(total + 1);
        expect(await rows(t.handle, 'build_value_terms')).toBe(terms + 1);
        expect(await rows(t.handle, 'build_value_terms', "value = 'orphan-term'")).toBe(0);
        // Every row holds a code.
        expect(await rows(t.handle, 'build_values', `field NOT IN (${Object.values(VALUE_FIELD_CODES).join(', ')})`)).toBe(0);

        if (name === 'sqlite') {
          const ddl = (await sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE name = 'build_values'`.execute(t.handle.db)).rows[0]!.sql;
          expect(ddl).toMatch(/field integer NOT NULL.*PRIMARY KEY \(field, value, seq\)\) WITHOUT ROWID/i);
          // Integers in both tables (an integer written into a TEXT column would be text).
          for (const table of ['build_values', 'build_value_terms']) {
            const types = (await sql<{ t: string }>`SELECT DISTINCT typeof(field) AS t FROM ${sql.raw(table)}`.execute(t.handle.db)).rows;
            expect(types).toEqual([{ t: 'integer' }]);
          }
          const indexes = (await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'build_values' AND sql IS NOT NULL`.execute(t.handle.db)).rows;
          expect(indexes.map((r) => r.name)).toEqual(['build_values_seq']);
          const triggers = (await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ('build_values', 'build_value_terms') ORDER BY name`.execute(t.handle.db)).rows;
          expect(triggers.map((r) => r.name)).toEqual(['build_value_terms_ai', 'build_value_terms_au', 'build_value_terms_trigram_ad', 'build_value_terms_trigram_ai']);
          // The terms kept their ids: the trigram table matches its content.
          await sql`INSERT INTO build_value_terms_trigram (build_value_terms_trigram, rank) VALUES ('integrity-check', 1)`.execute(t.handle.db);
        } else {
          const types = (await sql<{ table_name: string; data_type: string }>`SELECT table_name, data_type FROM information_schema.columns
            WHERE table_name IN ('build_values', 'build_value_terms') AND column_name = 'field' ORDER BY table_name`.execute(t.handle.db)).rows;
          expect(types).toEqual([
            { table_name: 'build_value_terms', data_type: 'smallint' },
            { table_name: 'build_values', data_type: 'smallint' },
          ]);
          const unique = (await sql<{ indisunique: boolean }>`SELECT i.indisunique FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'build_values_search_idx'`.execute(t.handle.db)).rows;
          expect(unique).toEqual([{ indisunique: true }]);
        }

        // The ingest after it adds a new term, found by wildcard; prune keeps the rollups right.
        const fresh = id();
        await opened.ingestNdjson(completeBuild(fresh, 'alpha', [ev('UserTag', { tag: 'Brand-New' })]));
        expect((await opened.listBuilds({ visibility: SEE_EVERYTHING, query: checked('tag:*and-ne*') })).map((b) => b.id)).toEqual([fresh]);
        expect(await rows(t.handle, 'build_value_terms', `field = ${valueFieldCode('tag')} AND value = 'brand-new'`)).toBe(1);
        const gone = await opened.deleteBuilds({ kind: 'oldest' }, 1);
        expect(gone.map((g) => g.id)).toEqual([tagged]);
        expect(await rows(t.handle, 'build_values', `seq = ${seq}`)).toBe(0);
        const facets = await buildFacets(t.handle, { visibility: SEE_EVERYTHING }, LIMIT);
        expect(facets.tag.find((f) => f.value === 'old-way-only')).toBeUndefined();
        expect(facets).toEqual(await buildFacets(t.handle, { visibility: SEE_EVERYTHING }, LIMIT, { rollups: false }));
      } finally {
        await opened.close();
      }
    } finally {
      await t.close();
    }
  }, 180_000);

  it.skipIf(skip)('stops with an error naming a stored field without a code', async () => {
    const t = await openTestStore(name, { ingestWorker: false });
    try {
      await store(t, 5, 22);
      await undoValueFieldCodes(t.handle.db, name);
      const seq = Number((await sql<{ s: number | string }>`SELECT max(seq) AS s FROM builds`.execute(t.handle.db)).rows[0]!.s);
      await sql`INSERT INTO build_values (seq, field, value) VALUES (${seq}, 'no_such_field', 'x')`.execute(t.handle.db);
      await expect(migrateValueFieldCodes(t.handle.db, name, () => {})).rejects.toThrow(/fields without a code: no_such_field/);
    } finally {
      await t.close();
    }
  }, 120_000);

  // SQLite commits each batch by itself (PostgreSQL runs the migration in one transaction).
  it.skipIf(skip || name !== 'sqlite')('copies in batches with progress; starts over after an interrupted run', async () => {
    const t = await openTestStore(name, { ingestWorker: false });
    try {
      await store(t, 80, 23);
      const before = await answers(t.store, t.handle);
      await undoValueFieldCodes(t.handle.db, name);
      const total = await rows(t.handle, 'build_values');
      // What a run stopped after a batch leaves behind: partial copies.
      await sql`CREATE TABLE build_values_coded (field integer NOT NULL, value text NOT NULL, seq integer NOT NULL, PRIMARY KEY (field, value, seq)) WITHOUT ROWID`.execute(t.handle.db);
      await sql`INSERT INTO build_values_coded VALUES (2, 'left-over', 1)`.execute(t.handle.db);
      await sql`CREATE TABLE build_value_terms_coded (id INTEGER PRIMARY KEY, field INTEGER NOT NULL, value TEXT NOT NULL, UNIQUE (field, value))`.execute(t.handle.db);
      const progress: [number, number][] = [];
      await migrateValueFieldCodes(t.handle.db, name, (done, n) => progress.push([done, n]), 50);
      expect(progress.length).toBeGreaterThanOrEqual(Math.ceil(total / 50));
      expect(progress.every(([, n]) => n === total)).toBe(true);
      expect(progress.map(([d]) => d)).toEqual([...progress.map(([d]) => d)].sort((a, b) => a - b));
      expect(progress.at(-1)).toEqual([total, total]);
      expect(await rows(t.handle, 'build_values')).toBe(total);
      expect(await rows(t.handle, 'build_values', "value = 'left-over'")).toBe(0);
      // Run again (the migration recorded as not run): a table already coded is left as it is.
      await migrateValueFieldCodes(t.handle.db, name, () => {}, 50);
      expect(await answers(t.store, t.handle)).toEqual(before);
    } finally {
      await t.close();
    }
  }, 180_000);
});
