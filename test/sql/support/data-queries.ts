// Query arbitraries drawn from a data set's own values (exact, prefix, suffix, infix and two-part
// patterns in random case; comparisons and ranges at existing values), so that random queries
// over realistic builds select something.

import fc from 'fast-check';
import { FIELDS, type FieldDef } from '../../../src/query/catalog.js';
import type { CheckedExpr, CompareOp, Pattern, Predicate, TypedValue } from '../../../src/query/checked.js';
import type { BuildAttributes } from '../../../src/store/types.js';
import { queryOf } from './arbitraries.js';

const SPAN = { start: 0, end: 0 };

interface FieldValues {
  readonly strings: string[];
  readonly names: string[];
  readonly numbers: number[];
}

function collect(builds: readonly { attributes: BuildAttributes }[]): Map<FieldDef, FieldValues> {
  const out = new Map<FieldDef, FieldValues>(FIELDS.map((f) => [f, { strings: [], names: [], numbers: [] }]));
  for (const b of builds) {
    for (const f of FIELDS) {
      const raw = b.attributes[f.name];
      if (raw === undefined) continue;
      const acc = out.get(f)!;
      for (const v of (Array.isArray(raw) ? raw : [raw]) as unknown[]) {
        if (typeof v === 'string') acc.strings.push(v);
        else if (typeof v === 'number') acc.numbers.push(v);
        else if (typeof v === 'object' && v !== null) {
          acc.names.push((v as { name: string }).name);
          acc.strings.push((v as { value: string }).value);
        }
      }
    }
  }
  return out;
}

/** A pattern derived from `value`: exact, prefix, suffix, infix, two-part or `*`, in random case. */
function patternFrom(values: readonly string[]): fc.Arbitrary<Pattern> {
  const pool = values.length > 0 ? values : ['none'];
  return fc
    .tuple(fc.constantFrom(...pool), fc.nat(), fc.nat(), fc.constantFrom('exact', 'prefix', 'suffix', 'infix', 'two', 'any'), fc.boolean())
    .map(([v, a, b, form, upper]) => {
      const i = a % (v.length + 1);
      const j = i + (b % (v.length - i + 1));
      const cased = upper ? v.toUpperCase() : v;
      const segs =
        form === 'exact' ? [cased] :
        form === 'prefix' ? [cased.slice(0, j), ''] :
        form === 'suffix' ? ['', cased.slice(i)] :
        form === 'infix' ? ['', cased.slice(i, j), ''] :
        form === 'two' ? [cased.slice(0, i), cased.slice(j)] : ['', ''];
      return { segments: segs.map((s) => s.toLowerCase()), text: segs.join('*') };
    });
}

function typed(f: FieldDef, n: number): TypedValue {
  switch (f.type) {
    case 'duration':
      return { type: 'duration', ms: n, text: `${n}ms` };
    case 'storageSize':
      return { type: 'storageSize', bytes: n, text: String(n) };
    case 'timestamp':
      return { type: 'timestamp', instant: n, spanMs: 1, precision: 'millisecond', text: new Date(n).toISOString() };
    default:
      return { type: 'number', value: n, text: String(n) };
  }
}

function predicateFor(f: FieldDef, v: FieldValues): fc.Arbitrary<Predicate> {
  const presence = fc.constantFrom<Predicate>({ kind: 'known' }, { kind: 'unknown' });
  switch (f.type) {
    case 'string':
      return fc.oneof({ weight: 1, arbitrary: presence }, { weight: 5, arbitrary: patternFrom(v.strings).map((pattern): Predicate => ({ kind: 'pattern', pattern })) });
    case 'keyValue':
      return fc.oneof(
        { weight: 1, arbitrary: presence },
        { weight: 5, arbitrary: fc.tuple(patternFrom(v.names), patternFrom(v.strings)).map(([name, value]): Predicate => ({ kind: 'keyValue', name, value })) },
      );
    case 'boolean':
      return fc.oneof(presence, fc.boolean().map((value): Predicate => ({ kind: 'boolean', value })));
    default: {
      const n = fc.constantFrom(...(v.numbers.length > 0 ? v.numbers : [0]));
      return fc.oneof(
        { weight: 1, arbitrary: presence },
        { weight: 3, arbitrary: fc.tuple(fc.constantFrom<CompareOp>('eq', 'gt', 'ge', 'lt', 'le'), n).map(([op, x]): Predicate => ({ kind: 'compare', op, value: typed(f, x) })) },
        { weight: 2, arbitrary: fc.tuple(n, n).map(([a, b]): Predicate => ({ kind: 'range', from: typed(f, Math.min(a, b)), to: typed(f, Math.max(a, b)) })) },
      );
    }
  }
}

export function dataQueries(builds: readonly { attributes: BuildAttributes }[]): fc.Arbitrary<CheckedExpr> {
  const values = collect(builds);
  const generic = FIELDS.filter((f) => f.tool === null);
  const field = fc.oneof(fc.constantFrom(...generic), fc.constantFrom(...FIELDS));
  const term = field.chain((f) => predicateFor(f, values.get(f)!).map((predicate): CheckedExpr => ({ kind: 'term', field: f, predicate, span: SPAN })));
  return queryOf(term);
}
