// The compiler's pure parts: parameterised SQL for both dialects, bounds, wildcard matching.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FIELDS, findField } from '../../src/query/catalog.js';
import type { CheckedExpr, Pattern, Predicate } from '../../src/query/checked.js';
import { boundsOf, withinBounds } from '../../src/sql/bounds.js';
import { matchPattern } from '../../src/query/evaluate.js';
import { explainSql } from '../../src/sql/index.js';
import { escapeLike, likePattern, prefixUpperBound } from '../../src/sql/pattern.js';
import { query } from './support/arbitraries.js';
import { InternalError } from '../../src/query/assert.js';

const SPAN = { start: 0, end: 0 };
const term = (name: string, predicate: Predicate): CheckedExpr => ({ kind: 'term', field: findField(name)!, predicate, span: SPAN });
const pat = (...segments: string[]): Pattern => ({ segments, text: segments.join('*') });

describe('explainSql', () => {
  it('never puts user text into the SQL: every value is a parameter', () => {
    const marker = fc.string({ minLength: 1, maxLength: 8 }).map((s) => `qz${s}'"; drop table builds; --`);
    fc.assert(
      fc.property(marker, fc.constantFrom('user', 'tag', 'value'), fc.constantFrom('sqlite', 'postgres') as fc.Arbitrary<'sqlite' | 'postgres'>, (m, field, dialect) => {
        for (const p of [pat(m), pat(m, ''), pat('', m, ''), pat('', m)]) {
          const predicate: Predicate = field === 'value' ? { kind: 'keyValue', name: p, value: p } : { kind: 'pattern', pattern: p };
          const { sql, parameters } = explainSql(term(field, predicate), dialect);
          expect(sql).not.toContain('qz');
          expect(parameters.some((x) => typeof x === 'string' && x.includes('qz'))).toBe(true);
        }
      }),
    );
  });

  it('compiles every random query for both dialects', () => {
    fc.assert(
      fc.property(query, (q) => {
        for (const d of ['sqlite', 'postgres'] as const) {
          const { sql } = explainSql(q, d);
          expect(sql.startsWith('select "builds"."id" from "builds" where ')).toBe(true);
        }
      }),
    );
  });

  it('uses positional parameters on PostgreSQL and ? on SQLite', () => {
    const q = term('user', { kind: 'pattern', pattern: pat('ab', '') });
    expect(explainSql(q, 'postgres').sql).toContain('LIKE $1');
    expect(explainSql(q, 'sqlite')).toEqual({
      sql: 'select "builds"."id" from "builds" where ("builds"."user" >= ? AND "builds"."user" < ?)',
      parameters: ['ab', 'ac'],
    });
  });

  it('wraps negation so that unknown values count as not matching', () => {
    const q: CheckedExpr = { kind: 'not', operand: term('user', { kind: 'pattern', pattern: pat('bob') }), span: SPAN };
    expect(explainSql(q, 'sqlite').sql).toContain('NOT (("builds"."user" = ?) IS TRUE)');
  });

  it('restricts tool-specific fields to their tool', () => {
    const q = term('native.buildOptions.daemonEnabled', { kind: 'boolean', value: true });
    expect(explainSql(q, 'sqlite')).toEqual({
      sql: 'select "builds"."id" from "builds" where (builds.buildtool = ? AND "builds"."native_buildoptions_daemonenabled" = ?)',
      parameters: ['native', 1],
    });
  });
});

describe('LIKE escaping and prefix ranges', () => {
  it('escapes %, _ and the escape character', () => {
    expect(escapeLike('a%b_c\\d')).toBe('a\\%b\\_c\\\\d');
    expect(likePattern(['', '50%', ''])).toBe('%50\\%%');
  });
  it('the prefix range holds exactly the strings with that prefix (code point order)', () => {
    const s = fc.string({ unit: 'grapheme', maxLength: 6 });
    fc.assert(
      fc.property(s.filter((p) => p.length > 0), s, (p, x) => {
        const upper = prefixUpperBound(p)!;
        const cmp = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
        const inRange = cmp(x, p) >= 0 && cmp(x, upper) < 0;
        expect(inRange).toBe(x.startsWith(p));
        expect(cmp(p + x, p) >= 0 && cmp(p + x, upper) < 0).toBe(true);
      }),
    );
  });
  it('carries over U+10FFFF and has no bound for a run of them', () => {
    expect(prefixUpperBound('a\u{10FFFF}')).toBe('b');
    expect(prefixUpperBound('\u{10FFFF}')).toBeUndefined();
    expect(prefixUpperBound('\uD7FF')).toBe('\uE000');
  });
});

describe('matchPattern', () => {
  const str = fc.string({ unit: 'grapheme-ascii', maxLength: 8 }).map((s) => s.replace(/\*/g, ''));
  it('a pattern without * is case-insensitive equality', () => {
    fc.assert(fc.property(str, str, (a, b) => {
      expect(matchPattern(pat(a.toLowerCase()), b)).toBe(a.toLowerCase() === b.toLowerCase());
    }));
  });
  it('agrees with a regular expression built from the segments', () => {
    const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    fc.assert(
      fc.property(fc.array(fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'A'), maxLength: 3 }), { minLength: 1, maxLength: 4 }), fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'B'), maxLength: 8 }), (segs, v) => {
        const lower = segs.map((s) => s.toLowerCase());
        const re = new RegExp(`^${lower.map(esc).join('.*')}$`, 's');
        expect(matchPattern(pat(...lower), v)).toBe(re.test(v.toLowerCase()));
      }),
    );
  });
  it('lower-cases with Unicode rules', () => {
    expect(matchPattern(pat('éσ', ''), 'ÉΣxyz')).toBe(true);
    expect(matchPattern(pat('', 'жж', ''), 'aЖЖb')).toBe(true);
    expect(matchPattern(pat('a*b'), 'A*B')).toBe(true);
    expect(matchPattern(pat('a*b'), 'AxB')).toBe(false);
  });
});

describe('boundsOf', () => {
  const DAY = 86_400_000;
  const ts = (instant: number, spanMs: number) => ({ type: 'timestamp' as const, instant, spanMs, precision: 'day' as const, text: '' });
  it('timestamp equality covers the span, ranges end with the end of the upper bound\'s span', () => {
    expect(boundsOf({ kind: 'compare', op: 'eq', value: ts(0, DAY) })).toEqual({ min: 0, minInclusive: true, max: DAY, maxInclusive: false });
    expect(boundsOf({ kind: 'range', from: ts(0, DAY), to: ts(DAY, DAY) })).toEqual({ min: 0, minInclusive: true, max: 2 * DAY, maxInclusive: false });
    expect(boundsOf({ kind: 'compare', op: 'gt', value: ts(5, DAY) })).toEqual({ min: 5, minInclusive: false, maxInclusive: false });
  });
  it('numbers, durations and sizes are inclusive and exact', () => {
    const b = boundsOf({ kind: 'range', from: { type: 'duration', ms: 60_000, text: '1m' }, to: { type: 'duration', ms: 330_000, text: '5m30s' } });
    expect([59_999, 60_000, 330_000, 330_001].map((n) => withinBounds(n, b))).toEqual([false, true, true, false]);
    const e = boundsOf({ kind: 'compare', op: 'eq', value: { type: 'number', value: 2.5, text: '2.5' } });
    expect([2.4, 2.5, 2.6].map((n) => withinBounds(n, e))).toEqual([false, true, false]);
  });
});

describe('catalog coverage', () => {
  it('every field compiles for every predicate its type allows', () => {
    for (const f of FIELDS) {
      for (const d of ['sqlite', 'postgres'] as const) {
        expect(() => explainSql(term(f.name, { kind: 'known' }), d)).not.toThrow();
        expect(() => explainSql(term(f.name, { kind: 'unknown' }), d)).not.toThrow();
      }
    }
  });
});

describe('predicates the checker never pairs with a field', () => {
  const span = { start: 0, end: 0 };
  const cases: [string, Predicate][] = [
    ['tag', { kind: 'boolean', value: true }],
    ['tag', { kind: 'compare', op: '>', value: 1 } as unknown as Predicate],
    ['user', { kind: 'keyValue', name: { segments: ['a'], text: 'a' }, value: { segments: ['b'], text: 'b' } } as unknown as Predicate],
    ['value', { kind: 'boolean', value: true }],
  ];
  for (const [name, predicate] of cases) {
    it(`${predicate.kind} on ${name} is an internal error, not a query that matches nothing`, () => {
      const q: CheckedExpr = { kind: 'term', field: findField(name)!, predicate, span };
      for (const d of ['sqlite', 'postgres'] as const) expect(() => explainSql(q, d)).toThrow(InternalError);
    });
  }
});

describe('a walk in seq order (pages from the index candidates, windows of seq)', () => {
  const walked = (expr: CheckedExpr, dialect: 'sqlite' | 'postgres') => explainSql(expr, dialect, { walk: true }).sql;

  it('probes a value pattern of a child-row field per build, by the values of its seq (on SQLite named, else its planner seeks the key once per term)', () => {
    for (const p of [pat('', 'test', ''), pat('test', ''), pat('', 'test')]) {
      const e = term('requested', { kind: 'pattern', pattern: p });
      expect(walked(e, 'postgres')).toMatch(/EXISTS \(SELECT 1 FROM "build_values" AS v\s+WHERE .* AND "v"\."seq" = builds\.seq OFFSET 0\)/);
      expect(walked(e, 'postgres')).not.toMatch(/builds\.seq IN \(/);
      expect(walked(e, 'sqlite')).toMatch(/EXISTS \(SELECT 1 FROM "build_values" AS v INDEXED BY build_values_seq WHERE .* AND "v"\."seq" = builds\.seq\)/);
      expect(walked(e, 'sqlite')).not.toMatch(/builds\.seq IN \(/);
    }
    // An exact value keeps its seek of the (field, value, seq) key.
    expect(walked(term('requested', { kind: 'pattern', pattern: pat('test') }), 'sqlite')).not.toMatch(/INDEXED BY/);
    // Not walking, both collect the builds of the pattern first.
    expect(explainSql(term('requested', { kind: 'pattern', pattern: pat('', 'test', '') }), 'postgres').sql).toMatch(/builds\.seq IN \(/);
  });
});
