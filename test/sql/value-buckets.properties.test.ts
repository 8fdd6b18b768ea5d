// Bucketed column indexes (src/sql/value-buckets.ts): the bucket the compiler adds to a range is
// implied by the range, so the answer never changes. The laws that make it so (the bucket is
// monotone, and a stored value and the same number written as a literal fall in one bucket) are
// checked on SQLite itself, and then the whole path: random durations (negative, fractional,
// huge, unknown), random bounds, plain and under NOT, against the bounds evaluated in TypeScript.

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { valueBucket } from '../../src/sql/value-buckets.js';
import { explainPlan, explainSql } from '../../src/sql/index.js';
import { boundsOf, withinBounds } from '../../src/sql/bounds.js';
import type { CheckedExpr, Predicate, Span } from '../../src/query/checked.js';
import { FIELDS } from '../../src/query/catalog.js';
import { clearBuilds, insertBuilds, openSearchDb, searchIds, type SearchDb, type TestBuild } from './support/search-db.js';

/** Terms made here have no source text. */
const NO_SPAN: Span = { start: 0, end: 0 };

/** Numbers around every scale the buckets split: small, bucket edges, fractions, negatives, huge. */
const number = fc.oneof(
  fc.integer({ min: -5, max: 2_000 }),
  fc.integer({ min: 1, max: 15 }).chain((digits) => fc.integer({ min: -2, max: 2 }).map((d) => 10 ** digits + d)),
  fc.integer({ min: 1, max: 9 }).chain((lead) => fc.integer({ min: 0, max: 12 }).map((z) => lead * 10 ** z)),
  fc.double({ min: -1e6, max: 1e22, noNaN: true }),
);

describe('the bucket of a number', () => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (d REAL)');
  const bucketOfLiteral = (n: number): number => db.prepare(`SELECT ${valueBucket(String(n))} AS b`).get()!['b' as never];
  const bucketOfColumn = (n: number): number => {
    db.exec('DELETE FROM t');
    db.prepare('INSERT INTO t (d) VALUES (?)').run(n);
    return db.prepare(`SELECT ${valueBucket('d')} AS b FROM t`).get()!['b' as never];
  };
  afterAll(() => db.close());

  it('never decreases as the number grows', () => {
    fc.assert(
      fc.property(number, number, (x, y) => {
        const [a, b] = x <= y ? [x, y] : [y, x];
        expect(bucketOfLiteral(a)).toBeLessThanOrEqual(bucketOfLiteral(b));
        expect(bucketOfColumn(a)).toBeLessThanOrEqual(bucketOfColumn(b));
      }),
      { numRuns: 2000 },
    );
  });

  it('is the same for a stored value and the number written as a literal', () => {
    fc.assert(
      fc.property(number, (n) => {
        expect(bucketOfColumn(n)).toBe(bucketOfLiteral(n));
      }),
      { numRuns: 2000 },
    );
  });

  it('spans at most a tenth of its values above 10', () => {
    expect([9, 10, 11, 99, 100, 109, 110, 300_000, 399_999].map(bucketOfLiteral)).toEqual([109, 210, 211, 299, 310, 310, 311, 630, 639]);
    expect(db.prepare(`SELECT ${valueBucket('NULL')} AS b`).get()).toEqual({ b: null });
  });
});

const DURATION = FIELDS.find((f) => f.name === 'buildDuration')!;
type Ordered = Extract<Predicate, { kind: 'compare' | 'range' }>;
const ms = (n: number) => ({ type: 'duration' as const, ms: n, text: `${n}ms` });
const predicate: fc.Arbitrary<Ordered> = fc.oneof(
  fc.record({ kind: fc.constant('compare' as const), op: fc.constantFrom('eq', 'gt', 'ge', 'lt', 'le') as fc.Arbitrary<'eq' | 'gt' | 'ge' | 'lt' | 'le'>, value: number.map(ms) }),
  fc.tuple(number, number).map(([a, b]): Ordered => ({ kind: 'range', from: ms(Math.min(a, b)), to: ms(Math.max(a, b)) })),
);

describe('a duration range on SQLite, through the bucketed index', () => {
  let db: SearchDb;
  beforeAll(async () => {
    db = await openSearchDb('sqlite');
  }, 120_000);
  afterAll(async () => db?.close());

  it('selects exactly the builds whose duration is within the bounds, also under NOT', async () => {
    const durations = fc.array(fc.option(number, { nil: undefined, freq: 6 }), { minLength: 1, maxLength: 40 });
    await fc.assert(
      fc.asyncProperty(durations, fc.array(predicate, { minLength: 6, maxLength: 6 }), async (ds, ps) => {
        const bs: TestBuild[] = ds.map((d, i) => ({ id: `b${String(i).padStart(2, '0')}`, toolType: 'native', attributes: d === undefined ? {} : { buildDuration: d } }));
        await clearBuilds(db.handle);
        await insertBuilds(db.handle, bs);
        for (const p of ps) {
          const term: CheckedExpr = { kind: 'term', field: DURATION, predicate: p, span: NO_SPAN };
          const inside = (d: unknown) => typeof d === 'number' && withinBounds(d, boundsOf(p));
          const want = bs.filter((b) => inside(b.attributes['buildDuration'])).map((b) => b.id);
          // NOT of a test on an unknown value: the build has no duration, so it is not within.
          const wantNot = bs.filter((b) => !inside(b.attributes['buildDuration'])).map((b) => b.id);
          expect(await searchIds(db.handle, term), explainSql(term, 'sqlite').sql).toEqual(want);
          expect(await searchIds(db.handle, { kind: 'not', operand: term, span: NO_SPAN })).toEqual(wantNot);
        }
      }),
      { numRuns: 60 },
    );
  }, 120_000);

  it('seeks the bucketed index for a range and for an equality', async () => {
    const term = (p: Ordered): CheckedExpr => ({ kind: 'term', field: DURATION, predicate: p, span: NO_SPAN });
    expect(await explainPlan(db.handle, term({ kind: 'compare', op: 'gt', value: ms(300_000) }))).toMatch(/SEARCH builds USING INDEX builds_buildduration_bucket_idx \(<expr>>\?\)/);
    expect(await explainPlan(db.handle, term({ kind: 'compare', op: 'eq', value: ms(60_000) }))).toMatch(/SEARCH builds USING INDEX builds_buildduration_bucket_idx \(<expr>=\?\)/);
    expect(await explainPlan(db.handle, term({ kind: 'range', from: ms(60_000), to: ms(330_000) }))).toMatch(/SEARCH builds USING INDEX builds_buildduration_bucket_idx \(<expr>>\? AND <expr><\?\)/);
  });
});
