// The access plan: for each term of a checked query, the access path the compiler gives it.
// The compiler (compile.ts) builds its SQL from these decisions, and the store's posting planner
// (store/search/postings.ts) reads them instead of deciding again which terms are exact equalities and
// which collect a list of builds before the first row of a page. Both call `termAccess`, so they
// cannot disagree.

import type { FieldDef } from '../query/catalog.js';
import type { CheckedExpr, Pattern, Predicate } from '../query/checked.js';
import { assertNever } from '../query/assert.js';
import { dialectOf, type Dialect, type SqlDialect } from './dialect.js';
import { BUILDS_TRIGRAM_COLUMNS, MIN_TRIGRAM_CHARS } from './layout.js';
import { charCount, ftsTrigrams, longestSegment, segmentsOf, wildcardWithoutPrefix } from './pattern.js';

/** How SQL reaches the builds a term matches. */
export type TermAccess =
  /**
   * A test on the build's own row that is an equality with one value (string or boolean): one
   * index range in availability order, or a test of each row visited. `value` names it.
   */
  | { readonly kind: 'rowEquals'; readonly value: string | boolean }
  /** Any other test on the build's own row: a range, a prefix, known or unknown, a LIKE. */
  | { readonly kind: 'row' }
  /** `builds.seq IN (candidates of a trigram table)`: every candidate is collected first. */
  | { readonly kind: 'trigram' }
  /**
   * Child rows as a list, `builds.seq IN (SELECT seq …)`: every build the term names is collected
   * first (best when the term narrows the listing). `via: 'terms'`: the values come from the
   * field's distinct terms (a wildcard without prefix). `via: 'names'`: a custom value whose name
   * is a pattern and whose value has a literal start, read by walking the distinct names of the
   * (name, value, seq) index and seeking each matching name's value (a skip scan).
   * `value`: the one exact value it names.
   */
  | { readonly kind: 'childList'; readonly via: 'index' | 'terms' | 'names'; readonly value?: string }
  /**
   * Child rows probed per build, a correlated `EXISTS (… AND seq = builds.seq)`: one covering-index
   * seek per build visited, which is best under NOT (a negated term matches most builds, so a page
   * in seq order stops after a few hundred probes; `-user:ci -tag:CI` 7.7 ms -> 0.5 ms at 100k).
   * `seek: 'key'`: exact values, one seek of the (field, value, seq) key; `'seq'`: a value pattern,
   * the build's own rows read by the values' seq index and tested (the dialect's `indexHint` names
   * it where the planner would otherwise seek the key once per matching term).
   */
  | { readonly kind: 'childProbe'; readonly seek: 'key' | 'seq' };

export type TermAccessKind = TermAccess['kind'];

type Term = Extract<CheckedExpr, { kind: 'term' }>;

export interface PlannedTerm {
  readonly term: Term;
  /** Whether the term stands under an odd number of NOTs. */
  readonly negated: boolean;
  readonly access: TermAccess;
}

export interface AccessPlan {
  readonly dialect: SqlDialect;
  /** Every term of the query, in order. */
  readonly terms: readonly PlannedTerm[];
  /** The access of one term node of the query (by identity). */
  accessOf(term: CheckedExpr): TermAccess | undefined;
}

/** The access plan of a query for a dialect: what compileQuery does with each term. */
export function accessPlan(expr: CheckedExpr, dialect: SqlDialect | Dialect): AccessPlan {
  const d = dialectOf(dialect);
  const terms: PlannedTerm[] = [];
  const walk = (e: CheckedExpr, negated: boolean): void => {
    switch (e.kind) {
      case 'all':
        return;
      case 'and':
      case 'or':
        for (const o of e.operands) walk(o, negated);
        return;
      case 'not':
        walk(e.operand, !negated);
        return;
      case 'term':
        terms.push({ term: e, negated, access: termAccess(e.field, e.predicate, d, negated) });
        return;
      default:
        assertNever(e, 'expression');
    }
  };
  walk(expr, false);
  const byTerm = new Map<CheckedExpr, TermAccess>(terms.map((t) => [t.term, t.access]));
  return { dialect: d.name, terms, accessOf: (term) => byTerm.get(term) };
}

/**
 * The access path of one term, under `negated` NOTs, in dialect `d`. `walk`: the statement walks
 * builds in seq order and stops at a page (a store page read in windows of seq), so an exact
 * child-row term is probed per build visited, as under NOT, instead of collecting every build it
 * names first (`tag:CI`: 556k seqs at 1M builds, ~120 ms, for a page of 50).
 */
export function termAccess(field: FieldDef, predicate: Predicate, d: Dialect, negated: boolean, walk = false): TermAccess {
  if (field.multi) {
    // A probe is one index seek only when every index column before `seq` is fixed by equality:
    // (field, value, seq) / (name, value, seq) with exact values. A prefix, infix or "known"
    // condition would scan its whole range for every build probed, so those keep the list form.
    if ((negated || walk) && isExactChildTerm(field, predicate)) return { kind: 'childProbe', seek: 'key' };
    // Walking, a value pattern is probed per build too, by the build's seq: as a list,
    // `requested:*test*` collected all its 215,148 builds at 1M (PostgreSQL 200 ms, SQLite 128 ms)
    // before a page of 50 was checked.
    if (walk && predicate.kind === 'pattern' && field.type !== 'keyValue') return { kind: 'childProbe', seek: 'seq' };
    if (predicate.kind === 'pattern' && field.type !== 'keyValue') {
      const segments = segmentsOf(predicate.pattern.segments);
      if (wildcardWithoutPrefix(segments)) return { kind: 'childList', via: 'terms' };
      if (segments.length <= 1) return { kind: 'childList', via: 'index', value: segments[0] ?? '' };
    }
    if (predicate.kind === 'keyValue' && walksNames(predicate.name, predicate.value)) return { kind: 'childList', via: 'names' };
    return { kind: 'childList', via: 'index' };
  }
  switch (predicate.kind) {
    case 'boolean':
      return { kind: 'rowEquals', value: predicate.value };
    case 'pattern': {
      const segments = segmentsOf(predicate.pattern.segments);
      if (segments.length <= 1) return { kind: 'rowEquals', value: segments[0] ?? '' };
      return usesTrigram(d, { kind: 'builds', column: field.column }, segments) ? { kind: 'trigram' } : { kind: 'row' };
    }
    case 'known':
    case 'unknown':
    case 'compare':
    case 'range':
    case 'keyValue':
      return { kind: 'row' };
    default:
      return assertNever(predicate, 'predicate');
  }
}

/**
 * Whether the wildcard match of `segments` on a column asks a trigram table for candidates: a
 * pattern without a literal prefix (and not a bare `*`), a literal run long enough for a trigram,
 * a column with a trigram table, and a dialect whose planner does not do this by itself.
 */
export function usesTrigram(d: Dialect, target: { kind: 'builds'; column: string } | { kind: 'customValues' }, segments: readonly string[]): boolean {
  if (d.infix !== 'candidates' || !wildcardWithoutPrefix(segments)) return false;
  const longest = longestSegment(segments);
  if (charCount(longest) < MIN_TRIGRAM_CHARS || ftsTrigrams(longest) === undefined) return false;
  return target.kind === 'customValues' || BUILDS_TRIGRAM_COLUMNS.includes(target.column);
}

/**
 * Whether a multi-valued field's predicate names exact values (no wildcard), so that under NOT it
 * compiles to a per-build index probe rather than a list of every build it names.
 */
export function isExactChildTerm(field: FieldDef, predicate: Predicate): boolean {
  return (
    field.multi &&
    ((predicate.kind === 'pattern' && field.type !== 'keyValue' && isExact(predicate.pattern)) ||
      (predicate.kind === 'keyValue' && isExact(predicate.name) && isExact(predicate.value)))
  );
}

/**
 * Whether a key-value term is read by walking the distinct custom value names: the name is a
 * pattern (not one exact name, which is a single seek already) and the value has a literal start
 * (exact, or a prefix), so that each name is one seek of (name, value, seq). A value without a
 * literal start (`*`, an infix) has nothing to seek in the second column: it keeps the name range,
 * or the trigram candidates.
 */
export function walksNames(name: Pattern, value: Pattern): boolean {
  if (isExact(name)) return false;
  const v = segmentsOf(value.segments);
  return v.length <= 1 || v[0] !== '';
}

/** Whether a pattern has no wildcard (a plain equality). */
function isExact(pattern: Pattern): boolean {
  return segmentsOf(pattern.segments).length <= 1;
}
