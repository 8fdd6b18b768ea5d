// fast-check arbitraries for the differential tests: builds of all six tools with random
// attributes (unknowns, Unicode case, LIKE metacharacters and `*` in values) and random checked
// queries over every field type, drawn from small value pools so that matches are frequent.

import fc from 'fast-check';
import { FIELDS, TOOL_TYPES, type FieldDef } from '../../../src/query/catalog.js';
import type { CheckedExpr, CompareOp, Pattern, Predicate, TypedValue } from '../../../src/query/checked.js';
import type { TestBuild } from './search-db.js';

const SPAN = { start: 0, end: 0 };

/**
 * Values are short runs of tokens that stress case folding and escaping (ASCII in both cases,
 * LIKE's `%` `_` and the escape `\\`, a literal `*`, Unicode case pairs); patterns are built from
 * the same tokens so that prefix, suffix and infix matches (with >= 3 characters: trigram) are frequent.
 */
const TOKENS = ['ab', 'c', 'AB', 'x', 'abc', 'ABC', '%', '_', '*', '\\', '"', ' ', 'É', 'é', 'Σ', 'σ', 'ß', 'İ', 'Жж', '.', '1'];
const tokens = (max: number): fc.Arbitrary<string> => fc.array(fc.constantFrom(...TOKENS), { maxLength: max }).map((t) => t.join(''));
export const text = tokens(4);
const word = text;

const DAY = 86_400_000;
const BASE = Date.UTC(2024, 2, 1);

const numbers = fc.integer({ min: -4, max: 8 }).map((n) => n / 2);
const durations = fc.integer({ min: 0, max: 6 }).map((n) => n * 30_000);
const sizes = fc.integer({ min: 0, max: 6 }).map((n) => n * 1024 * 1024);
const instants = fc.integer({ min: 0, max: 3 * 24 * 4 }).map((q) => BASE + q * 15 * 60_000);

function attributeValue(f: FieldDef): fc.Arbitrary<unknown> {
  switch (f.type) {
    case 'string':
      if (f.values) return fc.constantFrom(...f.values.map((v) => (v.length > 1 ? v[0]!.toUpperCase() + v.slice(1) : v)));
      return f.multi ? fc.array(word, { maxLength: 3 }) : word;
    case 'keyValue':
      return fc.array(fc.record({ name: word, value: word }), { maxLength: 3 });
    case 'boolean':
      return fc.boolean();
    case 'number':
      return numbers;
    case 'duration':
      return durations;
    case 'storageSize':
      return sizes;
    case 'timestamp':
      return instants;
  }
}

export const build: fc.Arbitrary<Omit<TestBuild, 'id'>> = fc.constantFrom(...TOOL_TYPES).chain((tool) => {
  const fields = FIELDS.filter((f) => (f.tool === null || f.tool === tool) && f.name !== 'buildTool');
  const entries = fields.map((f) => fc.option(attributeValue(f), { nil: undefined, freq: 3 }).map((v) => [f.name, v] as const));
  return fc.tuple(...entries).map((pairs) => {
    const attributes: Record<string, unknown> = { buildTool: tool };
    for (const [k, v] of pairs) if (v !== undefined) attributes[k] = v;
    return { toolType: tool, attributes: attributes as TestBuild['attributes'] };
  });
});

export const builds = (max: number): fc.Arbitrary<TestBuild[]> =>
  fc.array(build, { minLength: 1, maxLength: max }).map((bs) => bs.map((b, i) => ({ ...b, id: `b${String(i).padStart(4, '0')}` })));

/** A pattern: 1..4 segments (lower-cased) around `*`. */
export const pattern: fc.Arbitrary<Pattern> = fc
  .array(fc.oneof({ weight: 3, arbitrary: tokens(1) }, { weight: 1, arbitrary: tokens(2) }), { minLength: 1, maxLength: 3 })
  .map((segs) => ({ segments: segs.map((s) => s.toLowerCase()), text: segs.join('*') }));

function typedValue(f: FieldDef): fc.Arbitrary<TypedValue> {
  switch (f.type) {
    case 'number':
      return numbers.map((value) => ({ type: 'number', value, text: String(value) }));
    case 'duration':
      return durations.map((ms) => ({ type: 'duration', ms, text: `${ms}ms` }));
    case 'storageSize':
      return sizes.map((bytes) => ({ type: 'storageSize', bytes, text: String(bytes) }));
    default:
      return fc
        .tuple(instants, fc.constantFrom(['day', DAY] as const, ['minute', 60_000] as const, ['second', 1000] as const, ['millisecond', 1] as const))
        .map(([t, [precision, spanMs]]) => {
          const instant = precision === 'day' ? t - (t % DAY) : t;
          return { type: 'timestamp', instant, spanMs, precision, text: new Date(instant).toISOString() };
        });
  }
}

const numericOf = (v: TypedValue): number =>
  v.type === 'duration' ? v.ms : v.type === 'number' ? v.value : v.type === 'storageSize' ? v.bytes : v.instant;

function predicate(f: FieldDef): fc.Arbitrary<Predicate> {
  const presence = fc.constantFrom<Predicate>({ kind: 'known' }, { kind: 'unknown' });
  switch (f.type) {
    case 'string': {
      const closed = f.values ? fc.constantFrom(...f.values).map((v): Pattern => ({ segments: [v], text: v })) : pattern;
      return fc.oneof(
        { weight: 1, arbitrary: presence },
        { weight: 4, arbitrary: fc.oneof(closed, pattern).map((p): Predicate => ({ kind: 'pattern', pattern: p })) },
      );
    }
    case 'keyValue':
      return fc.oneof(
        { weight: 1, arbitrary: presence },
        { weight: 4, arbitrary: fc.tuple(pattern, pattern).map(([name, value]): Predicate => ({ kind: 'keyValue', name, value })) },
      );
    case 'boolean':
      return fc.oneof(presence, fc.boolean().map((value): Predicate => ({ kind: 'boolean', value })));
    default: {
      const v = typedValue(f);
      return fc.oneof(
        { weight: 1, arbitrary: presence },
        {
          weight: 3,
          arbitrary: fc
            .tuple(fc.constantFrom<CompareOp>('eq', 'gt', 'ge', 'lt', 'le'), v)
            .map(([op, value]): Predicate => ({ kind: 'compare', op, value })),
        },
        {
          weight: 2,
          arbitrary: fc
            .tuple(v, v)
            .map(([a, b]): Predicate => (numericOf(a) <= numericOf(b) ? { kind: 'range', from: a, to: b } : { kind: 'range', from: b, to: a })),
        },
      );
    }
  }
}

// Generic fields are few but most used; give them half the draws.
const anyField = fc.oneof(fc.constantFrom(...FIELDS.filter((f) => f.tool === null)), fc.constantFrom(...FIELDS));

export const term: fc.Arbitrary<CheckedExpr> = anyField.chain((field) => predicate(field).map((p): CheckedExpr => ({ kind: 'term', field, predicate: p, span: SPAN })));

/** Random and/or/not trees over the given terms. */
export function queryOf(terms: fc.Arbitrary<CheckedExpr>): fc.Arbitrary<CheckedExpr> {
  return fc.letrec<{ expr: CheckedExpr }>((tie) => ({
    expr: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      { weight: 5, arbitrary: terms },
      { weight: 1, arbitrary: fc.constant<CheckedExpr>({ kind: 'all', span: SPAN }) },
      { weight: 2, arbitrary: tie('expr').map((operand): CheckedExpr => ({ kind: 'not', operand, span: SPAN })) },
      {
        weight: 2,
        arbitrary: fc.array(tie('expr'), { minLength: 2, maxLength: 3 }).map((operands): CheckedExpr => ({ kind: 'and', operands, span: SPAN })),
      },
      {
        weight: 2,
        arbitrary: fc.array(tie('expr'), { minLength: 2, maxLength: 3 }).map((operands): CheckedExpr => ({ kind: 'or', operands, span: SPAN })),
      },
    ),
  })).expr;
}

export const query: fc.Arbitrary<CheckedExpr> = queryOf(term);
