// Checked AST -> one boolean SQL expression over the `builds` table (see docs/search-sql.md).
// Every user value is a bound parameter. The result is two-valued: NOT wraps its operand in
// `IS TRUE`, so an unknown value (NULL) makes a term false and its negation true, which is what
// complement over all builds means.

import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { FieldDef } from '../query/catalog.js';
import type { CheckedExpr, Pattern, Predicate } from '../query/checked.js';
import { boundsOf } from '../query/bounds.js';
import { targetRef, wildcardCondition, type SqlDialect, type StringTarget } from './dialect.js';
import { segmentsOf } from './pattern.js';

export type { SqlDialect } from './dialect.js';

const TRUE = (): RawBuilder<SqlBool> => sql<SqlBool>`1 = 1`;

export function compileQuery(expr: CheckedExpr, dialect: SqlDialect): Expression<SqlBool> {
  return compileExpr(expr, dialect);
}

function compileExpr(expr: CheckedExpr, dialect: SqlDialect): RawBuilder<SqlBool> {
  switch (expr.kind) {
    case 'all':
      return TRUE();
    case 'and':
    case 'or': {
      if (expr.operands.length === 0) return expr.kind === 'and' ? TRUE() : sql<SqlBool>`1 = 0`;
      const parts = expr.operands.map((e) => compileExpr(e, dialect));
      if (parts.length === 1) return parts[0]!;
      return sql<SqlBool>`(${sql.join(parts, expr.kind === 'and' ? sql` AND ` : sql` OR `)})`;
    }
    case 'not':
      return sql<SqlBool>`NOT ((${compileExpr(expr.operand, dialect)}) IS TRUE)`;
    case 'term':
      return compileTerm(expr.field, expr.predicate, dialect);
  }
}

function compileTerm(field: FieldDef, predicate: Predicate, dialect: SqlDialect): RawBuilder<SqlBool> {
  // `field:null` (unknown) is exactly `!field:*`, also on tool-specific fields (search-semantics.md).
  if (predicate.kind === 'unknown') return sql<SqlBool>`NOT ((${compileTerm(field, { kind: 'known' }, dialect)}) IS TRUE)`;
  const cond = field.multi ? multiTerm(field, predicate, dialect) : singleTerm(field, predicate, dialect);
  // A tool-specific field belongs to its tool's builds only; for them no predicate, not even
  // "unknown", matches a build of another tool.
  if (field.tool === null) return cond;
  return sql<SqlBool>`(builds.buildtool = ${field.tool} AND ${cond})`;
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
      return sql<SqlBool>`1 = 0`;
    case 'compare':
    case 'range':
      return boundsCondition(ref, predicate);
  }
}

function multiTerm(field: FieldDef, predicate: Predicate, dialect: SqlDialect): RawBuilder<SqlBool> {
  if (field.type === 'keyValue') {
    switch (predicate.kind) {
      case 'known':
        return sql<SqlBool>`builds.seq IN (SELECT c.seq FROM build_custom_values AS c)`;
      case 'unknown':
        return sql<SqlBool>`NOT (builds.seq IN (SELECT c.seq FROM build_custom_values AS c))`;
      case 'keyValue': {
        const name = patternCondition(dialect, { kind: 'customValues', alias: 'c', column: 'name' }, predicate.name);
        const value = patternCondition(dialect, { kind: 'customValues', alias: 'c', column: 'value' }, predicate.value);
        return sql<SqlBool>`builds.seq IN (SELECT c.seq FROM build_custom_values AS c WHERE ${name} AND ${value})`;
      }
      case 'pattern': {
        // `value:name` is `value:name=*`; the checker normally rewrites it, accept it here too.
        const name = patternCondition(dialect, { kind: 'customValues', alias: 'c', column: 'name' }, predicate.pattern);
        return sql<SqlBool>`builds.seq IN (SELECT c.seq FROM build_custom_values AS c WHERE ${name})`;
      }
      default:
        return sql<SqlBool>`1 = 0`;
    }
  }
  // Multi-valued string field: any of its values matches. IN (subquery) is the same semi-join as
  // EXISTS; written this way SQLite drives it from the (field, value, seq) covering index.
  const rows = (where: RawBuilder<SqlBool>): RawBuilder<SqlBool> =>
    sql<SqlBool>`builds.seq IN (SELECT v.seq FROM build_values AS v WHERE v.field = ${field.column} AND ${where})`;
  switch (predicate.kind) {
    case 'known':
      return sql<SqlBool>`builds.seq IN (SELECT v.seq FROM build_values AS v WHERE v.field = ${field.column})`;
    case 'unknown':
      return sql<SqlBool>`NOT (builds.seq IN (SELECT v.seq FROM build_values AS v WHERE v.field = ${field.column}))`;
    case 'pattern':
      return rows(patternCondition(dialect, { kind: 'values', alias: 'v' }, predicate.pattern));
    case 'boolean':
    case 'keyValue':
    case 'compare':
    case 'range':
      // Multi-valued fields are strings; the checker rejects these operators on them.
      return sql<SqlBool>`1 = 0`;
  }
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
