// fast-check arbitraries for the search language, exported as `buildscope/testing` so tools built
// on Buildscope queries can fuzz themselves with them:
//
// - `checkedExpr()`: checked ASTs exactly as the checker produces them (flattened, no double negation);
// - `validQuery()`: query texts that parse without diagnostics, in many surface spellings;
// - `nearValidQuery()`: valid texts with one small fault (a deleted or inserted character, a typo).

import fc from 'fast-check';
import { FIELDS, type FieldDef } from '../query/catalog.js';
import type { CheckedExpr, Predicate, TypedValue } from '../query/checked.js';
import { ordinal } from '../query/check.js';
import { formatQuery, formatPredicate } from '../query/format.js';
import { parseDuration, parseNumber, parsePattern, parseStorageSize, parseTimestamp } from '../query/values.js';

const NO_SPAN = { start: 0, end: 0 } as const;

export interface ArbitraryOptions {
  /** The "now" relative timestamps are resolved against; pass the same to parseQuery. */
  readonly now?: number;
  /** Maximum nesting depth of and/or/not (default 3). */
  readonly depth?: number;
}

/** Text of a string value: letters, digits, Unicode, wildcards, escapes, and characters that need quotes. */
const textChar = fc.constantFrom(
  ...'abcxyzABCXYZ0189-_./@+,;#%&~\'', ' ', '*', '\\', '"', '(', ')', '[', ']', ':', '=', '!', '<', '>', 'é', 'Ä', 'ß', 'İ', '日', 'ΣΑ',
);
const patternText = fc.string({ unit: textChar, minLength: 0, maxLength: 8 });

const durationText = fc.oneof(
  fc.tuple(fc.integer({ min: 0, max: 500 }), fc.constantFrom('ms', 's', 'm', 'h', 'd', 'MS', 'H')).map(([n, u]) => `${n}${u}`),
  fc.tuple(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 59 })).map(([h, m]) => `${h}h${m}m`),
  fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 500 })).map(([m, s]) => `PT${m}M${s}S`),
  fc.integer({ min: 1, max: 99 }).map((n) => `${n / 10}h`),
);

const timestampText = fc.oneof(
  fc
    .tuple(
      fc.date({ min: new Date('1990-01-01T00:00:00Z'), max: new Date('2090-12-31T23:59:59Z'), noInvalidDate: true }),
      fc.constantFrom(10, 16, 19, 23),
      fc.constantFrom('', 'Z', '+02:00', '-05:30'),
    )
    .map(([d, len, zone]) => `${d.toISOString().slice(0, len)}${zone}`),
  durationText.map((d) => `-${d}`),
);

const numberText = fc.oneof(fc.integer({ min: -1e6, max: 1e6 }).map(String), fc.integer({ min: 0, max: 99_999 }).map((n) => `${Math.floor(n / 100)}.${n % 100}`));
const sizeText = fc
  .tuple(fc.integer({ min: 0, max: 4096 }), fc.constantFrom('', 'b', 'k', 'kb', 'KiB', 'm', 'mib', 'G', 'gib', 't', 'Ti'))
  .map(([n, u]) => `${n}${u}`);

function typedValue(field: FieldDef, now: number): fc.Arbitrary<TypedValue> {
  switch (field.type) {
    case 'duration':
      return durationText.map((text) => {
        const d = parseDuration(text);
        if (!d.ok) throw new Error(d.message);
        return { type: 'duration', ms: d.value, text } as const;
      });
    case 'timestamp':
      return timestampText.map((text) => {
        const t = parseTimestamp(text, now);
        if (!t.ok) throw new Error(t.message);
        return t.value;
      });
    case 'number':
      return numberText.map((text) => ({ type: 'number', value: (parseNumber(text) as { value: number }).value, text }) as const);
    case 'storageSize':
      return sizeText.map((text) => ({ type: 'storageSize', bytes: (parseStorageSize(text) as { value: number }).value, text }) as const);
    default:
      throw new Error(`${field.name} is not ordered`);
  }
}

/** A predicate the checker can produce for `field`. */
export function predicateOf(field: FieldDef, now = 0): fc.Arbitrary<Predicate> {
  const known = fc.constant<Predicate>({ kind: 'known' });
  const extra: fc.Arbitrary<Predicate>[] = field.acceptsNull ? [fc.constant<Predicate>({ kind: 'unknown' })] : [];
  switch (field.type) {
    case 'string': {
      const values = field.values;
      const text =
        values !== undefined
          ? fc.tuple(fc.constantFrom(...values), fc.boolean()).map(([v, upper]) => (upper ? v.toUpperCase() : v))
          : patternText.filter((t) => t !== '*' && !(field.acceptsNull && t.toLowerCase() === 'null'));
      return fc.oneof(known, ...extra, text.map((t): Predicate => ({ kind: 'pattern', pattern: parsePattern(t) })));
    }
    case 'keyValue': {
      const name = fc.string({ unit: textChar.filter((c) => c !== '=' && c !== '\\'), minLength: 1, maxLength: 6 });
      return fc.oneof(
        known,
        fc.tuple(name, patternText).map(([n, v]): Predicate => ({ kind: 'keyValue', name: parsePattern(n), value: parsePattern(v) })),
      );
    }
    case 'boolean':
      return fc.oneof(known, fc.boolean().map((value): Predicate => ({ kind: 'boolean', value })));
    case 'duration':
    case 'timestamp':
    case 'number':
    case 'storageSize': {
      const v = typedValue(field, now);
      return fc.oneof(
        known,
        fc.tuple(fc.constantFrom('eq', 'gt', 'ge', 'lt', 'le' as const), v).map(([op, value]): Predicate => ({ kind: 'compare', op, value })),
        fc.tuple(v, v).map(([a, b]): Predicate => (ordinal(a) <= ordinal(b) ? { kind: 'range', from: a, to: b } : { kind: 'range', from: b, to: a })),
      );
    }
  }
}

export function term(now = 0): fc.Arbitrary<CheckedExpr> {
  return fc
    .constantFrom(...FIELDS)
    .chain((field) => predicateOf(field, now).map((predicate): CheckedExpr => ({ kind: 'term', field, predicate, span: NO_SPAN })));
}

/** Checked ASTs in the checker's normal form: and/or flattened, at least two operands, no double negation. */
export function checkedExpr(options: ArbitraryOptions = {}): fc.Arbitrary<CheckedExpr> {
  const now = options.now ?? 0;
  const leaf = term(now);
  const { expr } = fc.letrec<{ expr: CheckedExpr }>((tie) => ({
    expr: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.array(tie('expr'), { minLength: 2, maxLength: 4 }).map((ops): CheckedExpr => ({ kind: 'and', operands: flatten('and', ops), span: NO_SPAN })),
      fc.array(tie('expr'), { minLength: 2, maxLength: 4 }).map((ops): CheckedExpr => ({ kind: 'or', operands: flatten('or', ops), span: NO_SPAN })),
      tie('expr').map((operand): CheckedExpr => (operand.kind === 'not' ? operand.operand : { kind: 'not', operand, span: NO_SPAN })),
    ),
  }));
  return options.depth === undefined ? expr : expr.filter((e) => depthOf(e) <= options.depth!);
}

function flatten(kind: 'and' | 'or', ops: readonly CheckedExpr[]): CheckedExpr[] {
  return ops.flatMap((o) => (o.kind === kind ? o.operands : [o]));
}

function depthOf(e: CheckedExpr): number {
  switch (e.kind) {
    case 'and':
    case 'or':
      return 1 + Math.max(...e.operands.map(depthOf));
    case 'not':
      return 1 + depthOf(e.operand);
    default:
      return 0;
  }
}

const pick = <T>(options: readonly T[]): fc.Arbitrary<T> => fc.constantFrom(...options);

/** Renders a checked AST in one of its many surface spellings (all meaning the same). */
export function spell(expr: CheckedExpr): fc.Arbitrary<string> {
  switch (expr.kind) {
    case 'all':
      return pick(['', ' ', '\n\t ']);
    case 'and':
      return fc
        .tuple(fc.tuple(...expr.operands.map(spellOperandOfAnd)), fc.array(pick([' ', ' and ', ' AND ', '  And\n']), { minLength: expr.operands.length, maxLength: expr.operands.length }))
        .map(([parts, seps]) => parts.reduce((acc, p, i) => (i === 0 ? p : `${acc}${seps[i]}${p}`), ''));
    case 'or':
      return fc
        .tuple(fc.tuple(...expr.operands.map(spell)), fc.array(pick([' or ', ' OR ', '\nOr ']), { minLength: expr.operands.length, maxLength: expr.operands.length }))
        .map(([parts, seps]) => parts.reduce((acc, p, i) => (i === 0 ? p : `${acc}${seps[i]}${p}`), ''));
    case 'not':
      return fc
        .tuple(pick(['-', '!', 'not ', 'NOT ', '- ']), spell(expr.operand), fc.boolean())
        .map(([prefix, inner, paren]) => (expr.operand.kind === 'term' && !paren ? `${prefix}${inner}` : `${prefix}(${inner})`));
    case 'term':
      return spellTerm(expr);
  }
}

function spellOperandOfAnd(e: CheckedExpr): fc.Arbitrary<string> {
  return e.kind === 'or' ? spell(e).map((s) => `(${s})`) : spell(e);
}

function spellTerm(e: Extract<CheckedExpr, { kind: 'term' }>): fc.Arbitrary<string> {
  const name = fc.constantFrom(e.field.name, e.field.name.toLowerCase(), e.field.name.toUpperCase());
  const p = e.predicate;
  if (p.kind === 'boolean' && p.value) return fc.tuple(name, fc.boolean()).map(([n, bare]) => (bare ? n : `${n}:TRUE`));
  const { op, value } = formatPredicate(p);
  const spaced = p.kind === 'range' ? fc.constantFrom(value, value.replace(' to ', ' TO ').replace('[', '[ ').replace(/\]$/, ' ]')) : fc.constant(value);
  return fc.tuple(name, spaced, fc.boolean()).map(([n, v, paren]) => (paren ? `(${n}${op}${v})` : `${n}${op}${v}`));
}

/** Query texts that parse and check without any diagnostic. */
export function validQuery(options: ArbitraryOptions = {}): fc.Arbitrary<string> {
  return checkedExpr(options).chain(spell);
}

/** Canonical texts (formatQuery) of valid queries. */
export function canonicalQuery(options: ArbitraryOptions = {}): fc.Arbitrary<string> {
  return checkedExpr(options).map(formatQuery);
}

const FAULT_CHARS = ['(', ')', '[', ']', ':', '"', '=', '-', '!', '>', '<', ' ', '*', '\\', 'and', 'or', 'not', 'to'] as const;

/** Valid queries with one small fault: a character deleted, a special character inserted, or a field name misspelt. */
export function nearValidQuery(options: ArbitraryOptions = {}): fc.Arbitrary<string> {
  return fc.tuple(validQuery(options), fc.nat(), pick(FAULT_CHARS), pick(['delete', 'insert', 'typo'] as const)).map(([q, n, ch, how]) => {
    if (q.length === 0) return ch;
    const at = n % (q.length + 1);
    switch (how) {
      case 'delete':
        return q.slice(0, Math.min(at, q.length - 1)) + q.slice(Math.min(at, q.length - 1) + 1);
      case 'insert':
        return q.slice(0, at) + ch + q.slice(at);
      case 'typo': {
        const i = n % q.length;
        return q.slice(0, i) + (q[i] === 'x' ? 'y' : 'x') + q.slice(i + 1);
      }
    }
  });
}

/** Any string, weighted towards the characters the language gives meaning to. */
export function anyQueryText(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ unit: 'binary' }),
    fc.string({ unit: fc.constantFrom(...FAULT_CHARS, 'user', 'buildDuration', 'a', '5m', '2024-01-01', '\n', '\t', '日'), maxLength: 30 }),
    nearValidQuery(),
  );
}

