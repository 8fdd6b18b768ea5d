// Differential property: for random builds of all six tools and random checked queries over every
// field type, SQLite, PostgreSQL and the reference evaluator select exactly the same builds.

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate } from '../../src/query/evaluate.js';
import { explainSql } from '../../src/sql/index.js';
import { pgAvailable } from '../support/postgres.js';
import { builds, query } from './support/arbitraries.js';
import { clearBuilds, insertBuilds, openSearchDb, searchIds, type SearchDb, type TestBuild } from './support/search-db.js';
import type { CheckedExpr } from '../../src/query/checked.js';

const expected = (bs: readonly TestBuild[], q: CheckedExpr): string[] =>
  bs.filter((b) => evaluate(q, b)).map((b) => b.id).sort();

describe('SQLite agrees with the reference evaluator', () => {
  let db: SearchDb;
  beforeAll(async () => {
    db = await openSearchDb('sqlite');
  }, 120_000);
  afterAll(async () => db?.close());

  it('on random builds and queries', async () => {
    await fc.assert(
      fc.asyncProperty(builds(30), fc.array(query, { minLength: 15, maxLength: 15 }), async (bs, qs) => {
        await clearBuilds(db.handle);
        await insertBuilds(db.handle, bs);
        for (const q of qs) {
          expect(await searchIds(db.handle, q), explainSql(q, 'sqlite').sql).toEqual(expected(bs, q));
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});

describe.skipIf(!pgAvailable())('PostgreSQL and SQLite agree with the reference evaluator', () => {
  let lite: SearchDb;
  let pg: SearchDb;
  beforeAll(async () => {
    [lite, pg] = await Promise.all([openSearchDb('sqlite'), openSearchDb('postgres')]);
  }, 120_000);
  afterAll(async () => {
    await lite?.close();
    await pg?.close();
  });

  it('on random builds and queries', async () => {
    await fc.assert(
      fc.asyncProperty(builds(25), fc.array(query, { minLength: 15, maxLength: 15 }), async (bs, qs) => {
        await Promise.all([clearBuilds(lite.handle), clearBuilds(pg.handle)]);
        await Promise.all([insertBuilds(lite.handle, bs), insertBuilds(pg.handle, bs)]);
        for (const q of qs) {
          const want = expected(bs, q);
          expect(await searchIds(pg.handle, q), explainSql(q, 'postgres').sql).toEqual(want);
          expect(await searchIds(lite.handle, q), explainSql(q, 'sqlite').sql).toEqual(want);
        }
      }),
      { numRuns: 25 },
    );
  }, 180_000);
});
