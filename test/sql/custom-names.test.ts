// Key-value terms whose name is a pattern and whose value has a literal start are answered by
// walking the distinct custom value names (compile.ts `byCustomNames`, search migration 0004
// dropped the (value, seq) index that served them). Differential property on exactly those
// terms, alone, negated and next to others: SQLite, PostgreSQL and the reference evaluator select
// the same builds. Names share prefixes, hold LIKE metacharacters, Unicode case pairs, the empty
// name and U+10FFFF (a prefix without an upper bound).

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findField } from '../../src/query/catalog.js';
import type { CheckedExpr, Pattern } from '../../src/query/checked.js';
import { evaluate } from '../../src/query/evaluate.js';
import { accessPlan, explainSql } from '../../src/sql/index.js';
import { pgAvailable } from '../support/postgres.js';
import { clearBuilds, insertBuilds, openSearchDb, searchIds, type SearchDb, type TestBuild } from './support/search-db.js';

const SPAN = { start: 0, end: 0 };
const VALUE = findField('value')!;
const MAX = '\u{10FFFF}';

const NAMES = ['git', 'Git commit id', 'git commit', 'gi', 'g%t', 'g_t', 'a\\b', '', 'É', 'é', 'Σσ', `${MAX}`, `${MAX}${MAX}`, `${MAX}a`, 'ci provider', 'CI', 'zz'];
const VALUES = ['abc', 'ab', 'ABC', 'abcd', '', '%', '_x', 'é', 'É1', 'github', 'GitHub Actions', `${MAX}`, '*'];

const custom = fc.record({ name: fc.constantFrom(...NAMES), value: fc.constantFrom(...VALUES) });
const builds = fc.array(fc.array(custom, { maxLength: 4 }), { minLength: 1, maxLength: 30 }).map((lists): TestBuild[] =>
  lists.map((value, i) => ({ id: `b${String(i).padStart(4, '0')}`, toolType: 'native', attributes: { buildTool: 'native', ...(value.length ? { value } : {}) } as TestBuild['attributes'] })),
);

/** Literal pieces of the pools, so that patterns hit often. */
const PIECES = ['', 'g', 'gi', 'git', 'git c', 'commit', 'it', '%', '_', '\\', 'é', 'σ', MAX, 'ci', 'ab', 'abc', 'a', 'github', 'x', '*'];
const segments = (min: number) => fc.array(fc.constantFrom(...PIECES), { minLength: min, maxLength: 3 });
const asPattern = (segs: string[]): Pattern => ({ segments: segs.map((s) => s.toLowerCase()), text: segs.join('*') });
/** A name that is a pattern (at least one `*`). */
const namePattern = segments(2).map(asPattern);
/** A value with a literal start: exact, or a literal followed by wildcards. */
const seekableValue = fc.oneof(
  fc.constantFrom(...PIECES).map((s) => asPattern([s])),
  fc.tuple(fc.constantFrom(...PIECES.filter((p) => p !== '')), segments(1)).map(([first, rest]) => asPattern([first, ...rest])),
);

const kv = fc.tuple(namePattern, seekableValue).map(([name, value]): CheckedExpr => ({ kind: 'term', field: VALUE, predicate: { kind: 'keyValue', name, value }, span: SPAN }));
const other = fc.tuple(fc.constantFrom(...NAMES), fc.constantFrom(...VALUES)).map(
  ([n, v]): CheckedExpr => ({ kind: 'term', field: VALUE, predicate: { kind: 'keyValue', name: asPattern([n.toLowerCase()]), value: asPattern([v.toLowerCase()]) }, span: SPAN }),
);
const query: fc.Arbitrary<CheckedExpr> = fc.oneof(
  kv,
  kv.map((operand): CheckedExpr => ({ kind: 'not', operand, span: SPAN })),
  fc.tuple(kv, other).map(([a, b]): CheckedExpr => ({ kind: 'or', operands: [a, b], span: SPAN })),
  fc.tuple(kv, kv).map(([a, b]): CheckedExpr => ({ kind: 'and', operands: [a, { kind: 'not', operand: b, span: SPAN }], span: SPAN })),
);

const expected = (bs: readonly TestBuild[], q: CheckedExpr): string[] => bs.filter((b) => evaluate(q, b)).map((b) => b.id).sort();

it('every generated key-value term is one the compiler answers by walking the names', () => {
  fc.assert(
    fc.property(kv, (q) => {
      expect(accessPlan(q, 'sqlite').terms[0]!.access).toEqual({ kind: 'childList', via: 'names' });
      expect(explainSql(q, 'sqlite').sql).toContain('WITH RECURSIVE');
      expect(explainSql(q, 'postgres').sql).toContain('WITH RECURSIVE');
    }),
  );
});

const dialects = [
  { name: 'sqlite' as const, skip: false, runs: 40 },
  { name: 'postgres' as const, skip: !pgAvailable(), runs: 25 },
];

describe.each(dialects)('a name pattern with a value that has a literal start: $name agrees with the reference evaluator', ({ name, skip, runs }) => {
  let db: SearchDb;
  beforeAll(async () => {
    if (!skip) db = await openSearchDb(name);
  }, 120_000);
  afterAll(async () => db?.close());

  it.skipIf(skip)('on random custom values and queries', async () => {
    await fc.assert(
      fc.asyncProperty(builds, fc.array(query, { minLength: 10, maxLength: 10 }), async (bs, qs) => {
        await clearBuilds(db.handle);
        await insertBuilds(db.handle, bs);
        for (const q of qs) expect(await searchIds(db.handle, q), explainSql(q, name).sql).toEqual(expected(bs, q));
      }),
      { numRuns: runs },
    );
  }, 120_000);
});
