// Checked AST -> one boolean SQL expression over the `builds` table (see docs/search-sql.md).
// Every user value is a bound parameter. The result is two-valued: NOT wraps its operand in
// `IS TRUE`, so an unknown value (NULL) makes a term false and its negation true, which is what
// complement over all builds means.

import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { FieldDef } from '../query/catalog.js';
import type { CheckedExpr, Pattern, Predicate } from '../query/checked.js';
import { boundsOf } from './bounds.js';
import { targetRef, wildcardCondition, type SqlDialect, type StringTarget } from './dialect.js';
import { segmentsOf, wildcardWithoutPrefix } from './pattern.js';
import { assertNever, InternalError } from '../query/assert.js';

export type { SqlDialect } from './dialect.js';

const TRUE = (): RawBuilder<SqlBool> => sql<SqlBool>`1 = 1`;

export function compileQuery(expr: CheckedExpr, dialect: SqlDialect): Expression<SqlBool> {
  return compileExpr(expr, dialect, false);
}

/**
 * How a term over child rows reaches them. `list`: `builds.seq IN (SELECT seq …)`, the subquery
 * run once from the covering index, which is best when the term narrows the listing. `probe`: a
 * correlated `EXISTS (… AND seq = builds.seq)`, one covering-index seek per build visited, which
 * is best under NOT: a negated term matches most builds, so a page in `seq` order stops after a
 * few hundred probes, where the list form first collects every build the term names (measured on
 * 100k builds: `-user:ci -tag:CI` page 7.7 ms -> 0.5 ms). The results are identical.
 */
type ChildAccess = 'list' | 'probe';

function compileExpr(expr: CheckedExpr, dialect: SqlDialect, negated: boolean): RawBuilder<SqlBool> {
  switch (expr.kind) {
    case 'all':
      return TRUE();
    case 'and':
    case 'or': {
      if (expr.operands.length === 0) return expr.kind === 'and' ? TRUE() : sql<SqlBool>`1 = 0`;
      const parts = expr.operands.map((e) => compileExpr(e, dialect, negated));
      if (parts.length === 1) return parts[0]!;
      return sql<SqlBool>`(${sql.join(parts, expr.kind === 'and' ? sql` AND ` : sql` OR `)})`;
    }
    case 'not':
      return sql<SqlBool>`NOT ((${compileExpr(expr.operand, dialect, !negated)}) IS TRUE)`;
    case 'term':
      return compileTerm(expr.field, expr.predicate, dialect, negated ? 'probe' : 'list');
  }
}

function compileTerm(field: FieldDef, predicate: Predicate, dialect: SqlDialect, access: ChildAccess): RawBuilder<SqlBool> {
  const cond = field.multi ? multiTerm(field, predicate, dialect, access) : singleTerm(field, predicate, dialect);
  // A tool-specific field belongs to its tool's builds only: no predicate, not even "unknown"
  // (`field:null`, search-semantics.md), matches a build of another tool.
  if (field.tool === null) return cond;
  return sql<SqlBool>`(builds.buildtool = ${field.tool} AND ${cond})`;
}

/** A predicate the checker never pairs with the field: compiling it to "no build" would hide a bug. */
function impossible(field: FieldDef, predicate: Predicate): InternalError {
  return new InternalError(`A ${predicate.kind} predicate on ${field.name} (${field.type}${field.multi ? ', multi-valued' : ''}) cannot come from the checker`);
}

function singleTerm(field: FieldDef, predicate: Predicate, dialect: SqlDialect): RawBuilder<SqlBool> {
  const ref = sql.ref(`builds.${field.column}`);
  switch (predicate.kind) {
    case 'known':
      return sql<SqlBool>`${ref} IS NOT NULL`;
    case 'unknown':
      return sql<SqlBool>`${ref} IS NULL`;
    case 'boolean':
      return sql<SqlBool>`${ref} = ${predicate.value ? 1 : 0}`;
    case 'pattern':
      return patternCondition(dialect, { kind: 'builds', column: field.column }, predicate.pattern);
    case 'keyValue':
      // The checker only gives key-value predicates to the (multi-valued) `value` field.
      throw impossible(field, predicate);
    case 'compare':
    case 'range':
      return boundsCondition(ref, predicate);
  }
}

function multiTerm(field: FieldDef, predicate: Predicate, dialect: SqlDialect, requested: ChildAccess): RawBuilder<SqlBool> {
  // A probe is one index seek only when every index column before `seq` is fixed by equality:
  // (field, value, seq) / (name, value, seq) with exact values. A prefix, infix or "known"
  // condition would scan its whole range for every build probed, so those keep the list form.
  const access: ChildAccess = requested === 'probe' && isExactChildTerm(field, predicate) ? 'probe' : 'list';
  // Any of the build's child rows matches (a semi-join), in the form `access` asks for.
  const semi = (table: 'build_values' | 'build_custom_values', alias: 'v' | 'c', where: RawBuilder<SqlBool> | undefined): RawBuilder<SqlBool> => {
    const from = sql`${sql.table(table)} AS ${sql.raw(alias)}`;
    const seq = sql.ref(`${alias}.seq`);
    if (access === 'probe') {
      // PostgreSQL would turn the correlated EXISTS into a hashed subplan (every build the term
      // names, hashed before the first row; its cost model ignores the LIMIT of a page): 220 ms
      // for `-user:ci -tag:CI` at 1M builds. OFFSET 0 keeps the subquery as it is written, one
      // index seek per build visited: 0.6 ms.
      const keep = dialect === 'postgres' ? sql` OFFSET 0` : sql``;
      return where === undefined
        ? sql<SqlBool>`EXISTS (SELECT 1 FROM ${from} WHERE ${seq} = builds.seq${keep})`
        : sql<SqlBool>`EXISTS (SELECT 1 FROM ${from} WHERE ${where} AND ${seq} = builds.seq${keep})`;
    }
    return where === undefined
      ? sql<SqlBool>`builds.seq IN (SELECT ${seq} FROM ${from})`
      : sql<SqlBool>`builds.seq IN (SELECT ${seq} FROM ${from} WHERE ${where})`;
  };
  if (field.type === 'keyValue') {
    switch (predicate.kind) {
      case 'known':
        return semi('build_custom_values', 'c', undefined);
      case 'unknown':
        return sql<SqlBool>`NOT (${semi('build_custom_values', 'c', undefined)})`;
      case 'keyValue': {
        const name = patternCondition(dialect, { kind: 'customValues', alias: 'c', column: 'name' }, predicate.name);
        const value = patternCondition(dialect, { kind: 'customValues', alias: 'c', column: 'value' }, predicate.value);
        return semi('build_custom_values', 'c', sql<SqlBool>`${name} AND ${value}`);
      }
      case 'pattern':
        // `value:name` is `value:name=*`; the checker normally rewrites it, accept it here too.
        return semi('build_custom_values', 'c', patternCondition(dialect, { kind: 'customValues', alias: 'c', column: 'name' }, predicate.pattern));
      case 'boolean':
      case 'compare':
      case 'range':
        throw impossible(field, predicate);
      default:
        return assertNever(predicate, 'predicate');
    }
  }
  // Multi-valued string field: any of its values matches. In list form SQLite drives the
  // subquery from the (field, value, seq) covering index; in probe form it seeks that index.
  const rows = (where?: RawBuilder<SqlBool>): RawBuilder<SqlBool> =>
    semi('build_values', 'v', where === undefined ? sql<SqlBool>`v.field = ${field.column}` : sql<SqlBool>`v.field = ${field.column} AND ${where}`);
  switch (predicate.kind) {
    case 'known':
      return rows();
    case 'unknown':
      return sql<SqlBool>`NOT (${rows()})`;
    case 'pattern': {
      const cond = rows(patternCondition(dialect, { kind: 'values', alias: 'v', field: field.column }, predicate.pattern));
      // PostgreSQL cannot estimate how many builds the matching terms name (it assumes few), so
      // it would join every one of them to `builds` and sort them for a page: 179 ms for
      // `requested:*bundle*` at 1M builds. Wrapped, the IN stays a hashed subplan tested while
      // walking `builds` in seq order, and a page stops after its last build: 10 ms.
      const wrap = dialect === 'postgres' && access === 'list' && wildcardWithoutPrefix(segmentsOf(predicate.pattern.segments));
      return wrap ? sql<SqlBool>`(${cond}) IS TRUE` : cond;
    }
    case 'boolean':
    case 'keyValue':
    case 'compare':
    case 'range':
      // Multi-valued fields are strings; the checker rejects these operators on them.
      throw impossible(field, predicate);
  }
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

/** Whether a pattern has no wildcard (a plain equality). */
function isExact(pattern: Pattern): boolean {
  return segmentsOf(pattern.segments).length <= 1;
}

/** A whole-value wildcard match on a string column (never NULL-unsafe under NOT, see compileExpr). */
function patternCondition(dialect: SqlDialect, target: StringTarget, pattern: Pattern): RawBuilder<SqlBool> {
  const segments = segmentsOf(pattern.segments);
  const ref = targetRef(target);
  if (segments.length <= 1) return sql<SqlBool>`${ref} = ${segments[0] ?? ''}`;
  if (segments.every((s) => s === '')) return sql<SqlBool>`${ref} IS NOT NULL`;
  return wildcardCondition(dialect, target, segments);
}

function boundsCondition(ref: RawBuilder<unknown>, predicate: Extract<Predicate, { kind: 'compare' | 'range' }>): RawBuilder<SqlBool> {
  const b = boundsOf(predicate);
  if (b.min !== undefined && b.max !== undefined && b.min === b.max && b.minInclusive && b.maxInclusive) {
    return sql<SqlBool>`${ref} = ${b.min}`;
  }
  const parts: RawBuilder<SqlBool>[] = [];
  if (b.min !== undefined) parts.push(b.minInclusive ? sql<SqlBool>`${ref} >= ${b.min}` : sql<SqlBool>`${ref} > ${b.min}`);
  if (b.max !== undefined) parts.push(b.maxInclusive ? sql<SqlBool>`${ref} <= ${b.max}` : sql<SqlBool>`${ref} < ${b.max}`);
  if (parts.length === 0) return sql<SqlBool>`${ref} IS NOT NULL`;
  return parts.length === 1 ? parts[0]! : sql<SqlBool>`(${sql.join(parts, sql` AND `)})`;
}
