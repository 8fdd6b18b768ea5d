// Checked AST -> one boolean SQL expression over the `builds` table (see docs/search-sql.md).
// Every user value is a bound parameter. The result is two-valued: NOT wraps its operand in
// `IS TRUE`, so an unknown value (NULL) makes a term false and its negation true, which is what
// complement over all builds means.

import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { FieldDef } from '../query/catalog.js';
import type { CheckedExpr, Pattern, Predicate } from '../query/checked.js';
import { boundsOf } from './bounds.js';
import { dialectOf, targetRef, type Dialect, type SqlDialect, type StringTarget } from './dialect.js';
import { prefixUpperBound, segmentsOf, wildcardWithoutPrefix } from './pattern.js';
import { termAccess, usesTrigram, type TermAccess } from './access.js';
import { assertNever, InternalError } from '../query/assert.js';
import { valueFieldCode } from './value-fields.js';
import { customValueTables, valueTables, VALUES_SEQ_INDEX } from './layout.js';
import { bucketedField, valueBucket } from './value-buckets.js';

export type { SqlDialect } from './dialect.js';

const TRUE = (): RawBuilder<SqlBool> => sql<SqlBool>`1 = 1`;

/**
 * The condition of a search over `builds`, for a dialect (its name or its hooks object). Each
 * term takes the access path `termAccess` chooses (access.ts), the same decisions `accessPlan`
 * exports for the store's posting planner.
 */
export function compileQuery(expr: CheckedExpr, dialect: SqlDialect | Dialect, options: { readonly walk?: boolean } = {}): Expression<SqlBool> {
  return compileExpr(expr, dialectOf(dialect), false, options.walk === true);
}

/** `walk`: the condition is tested on each build of a walk in seq order (termAccess). */
function compileExpr(expr: CheckedExpr, dialect: Dialect, negated: boolean, walk = false): RawBuilder<SqlBool> {
  switch (expr.kind) {
    case 'all':
      return TRUE();
    case 'and':
    case 'or': {
      if (expr.operands.length === 0) return expr.kind === 'and' ? TRUE() : sql<SqlBool>`1 = 0`;
      const parts = expr.operands.map((e) => compileExpr(e, dialect, negated, walk));
      if (parts.length === 1) return parts[0]!;
      return sql<SqlBool>`(${sql.join(parts, expr.kind === 'and' ? sql` AND ` : sql` OR `)})`;
    }
    case 'not':
      return sql<SqlBool>`NOT ((${compileExpr(expr.operand, dialect, !negated, walk)}) IS TRUE)`;
    case 'term':
      return compileTerm(expr.field, expr.predicate, dialect, termAccess(expr.field, expr.predicate, dialect, negated, walk));
  }
}

function compileTerm(field: FieldDef, predicate: Predicate, dialect: Dialect, access: TermAccess): RawBuilder<SqlBool> {
  const cond = field.multi ? multiTerm(field, predicate, dialect, access) : singleTerm(field, predicate, dialect, access);
  // A tool-specific field belongs to its tool's builds only: no predicate, not even "unknown"
  // (`field:null`, search-semantics.md), matches a build of another tool.
  if (field.tool === null) return cond;
  return sql<SqlBool>`(builds.buildtool = ${field.tool} AND ${cond})`;
}

/** A predicate the checker never pairs with the field: compiling it to "no build" would hide a bug. */
function impossible(field: FieldDef, predicate: Predicate): InternalError {
  return new InternalError(`A ${predicate.kind} predicate on ${field.name} (${field.type}${field.multi ? ', multi-valued' : ''}) cannot come from the checker`);
}

function singleTerm(field: FieldDef, predicate: Predicate, dialect: Dialect, access: TermAccess): RawBuilder<SqlBool> {
  const ref = sql.ref(`builds.${field.column}`);
  switch (predicate.kind) {
    case 'known':
      return sql<SqlBool>`${ref} IS NOT NULL`;
    case 'unknown':
      return sql<SqlBool>`${ref} IS NULL`;
    case 'boolean':
      return sql<SqlBool>`${ref} = ${predicate.value ? 1 : 0}`;
    case 'pattern':
      return patternCondition(dialect, { kind: 'builds', column: field.column }, predicate.pattern, access.kind === 'trigram' ? 'trigram' : 'none');
    case 'keyValue':
      // The checker only gives key-value predicates to the (multi-valued) `value` field.
      throw impossible(field, predicate);
    case 'compare':
    case 'range': {
      const cond = boundsCondition(ref, predicate);
      const bucket = bucketedField(dialect, field) ? bucketCondition(field.column, predicate) : undefined;
      return bucket === undefined ? cond : sql<SqlBool>`(${bucket} AND ${cond})`;
    }
  }
}

/**
 * A child-row term as SQL: a condition on `builds`, or, for a term read as a list of its rows
 * (TermAccess childList), those rows' seqs (`lists`, arms of a UNION ALL) and how they become the
 * condition. A build is listed once per matching row.
 */
type ChildTerm = { readonly kind: 'condition'; readonly condition: RawBuilder<SqlBool> } | { readonly kind: 'lists'; readonly lists: readonly RawBuilder<unknown>[]; readonly wrap: (c: RawBuilder<SqlBool>) => RawBuilder<SqlBool> };

/** A condition on a child row's seq, added to every row list (childListSeqs). */
type SeqCondition = (seq: RawBuilder<unknown>) => RawBuilder<SqlBool>;

const asIs = (c: RawBuilder<SqlBool>): RawBuilder<SqlBool> => c;

function childCondition(t: ChildTerm): RawBuilder<SqlBool> {
  return t.kind === 'condition' ? t.condition : t.wrap(sql<SqlBool>`builds.seq IN (${sql.join(t.lists, sql` UNION ALL `)})`);
}

function multiTerm(field: FieldDef, predicate: Predicate, dialect: Dialect, access: TermAccess): RawBuilder<SqlBool> {
  return childCondition(childTerm(field, predicate, dialect, access));
}

/**
 * The seqs of the builds a term on a multi-valued field of every tool matches, from its child rows
 * alone, among the rows whose seq `where` keeps: one statement of UNION ALL arms, a build once per
 * matching row. Undefined unless the term is read as a list of rows (TermAccess childList, and not
 * "unknown", which is a complement). The analytics index fills a term's bitmap from it: the same
 * builds as `builds.seq IN (...)` (a build has child rows only while it is available: they are
 * written with its seq and deleted with it), without a look-up of `builds` per match
 * (`requested:*test*` at 1M builds: 20-42 ms against 256-271 ms in the SQLite shell).
 */
export function childListSeqs(expr: CheckedExpr, dialect: SqlDialect | Dialect, where: SeqCondition): RawBuilder<{ seq: number }> | undefined {
  const lists = childLists(expr, dialect, where);
  return lists === undefined ? undefined : sql<{ seq: number }>`${sql.join(lists, sql` UNION ALL `)}`;
}

/**
 * The arms of childListSeqs, one `SELECT seq` per table that holds the term's rows (`where`
 * optional); `exact` only for one exact value of a multi-valued string field, whose rows are one
 * per build (the table's key), so that their number is the number of builds (sql/count.ts).
 */
export function childLists(expr: CheckedExpr, dialect: SqlDialect | Dialect, where?: SeqCondition, exact = false): readonly RawBuilder<unknown>[] | undefined {
  if (expr.kind !== 'term' || !expr.field.multi || expr.field.tool !== null) return undefined;
  if (exact && expr.field.type === 'keyValue') return undefined;
  const d = dialectOf(dialect);
  const access = termAccess(expr.field, expr.predicate, d, false);
  if (access.kind !== 'childList' || (exact && (access.via !== 'index' || access.value === undefined))) return undefined;
  const t = childTerm(expr.field, expr.predicate, d, access, where);
  return t.kind === 'lists' ? t.lists : undefined;
}

function childTerm(field: FieldDef, predicate: Predicate, dialect: Dialect, access: TermAccess, seqWhere?: SeqCondition): ChildTerm {
  if (access.kind !== 'childList' && access.kind !== 'childProbe') throw impossible(field, predicate);
  // Any of the build's child rows matches (a semi-join), in the form `access` asks for. `parts`
  // are the tables that hold the rows, each with its own alias and condition: on SQLite custom
  // values and the values of spread fields are in two (store/ingest/recent-rows.ts).
  const seq = (alias: string) => sql.ref(`${alias}.seq`);
  const semi = (parts: readonly ChildPart[], wrap = asIs): ChildTerm => {
    const from = (table: string, alias: string) => sql`${sql.table(table)} AS ${sql.raw(alias)}`;
    if (access.kind === 'childProbe') {
      // The dialect's optimisation fence keeps the subquery as written: one seek per build.
      const keep = dialect.probeFence;
      // A pattern's probe reads the build's own rows by seq (TermAccess childProbe).
      const by = ({ table, alias, seqIndex }: ChildPart) => (access.seek === 'seq' && seqIndex !== undefined ? sql`${from(table, alias)} ${dialect.indexHint(seqIndex)}` : from(table, alias));
      const probes = parts.map((part) => {
        const { table, alias, where } = part;
        return where === undefined
          ? sql<SqlBool>`EXISTS (SELECT 1 FROM ${by(part)} WHERE ${seq(alias)} = builds.seq${keep})`
          : sql<SqlBool>`EXISTS (SELECT 1 FROM ${by(part)} WHERE ${where} AND ${seq(alias)} = builds.seq${keep})`;
      });
      return { kind: 'condition', condition: probes.length === 1 ? probes[0]! : sql<SqlBool>`(${sql.join(probes, sql` OR `)})` };
    }
    const lists = parts.map(({ table, alias, where }) => {
      const conditions = [...(where === undefined ? [] : [where]), ...(seqWhere === undefined ? [] : [seqWhere(seq(alias))])];
      return conditions.length === 0 ? sql`SELECT ${seq(alias)} FROM ${from(table, alias)}` : sql`SELECT ${seq(alias)} FROM ${from(table, alias)} WHERE ${sql.join(conditions, sql` AND `)}`;
    });
    return { kind: 'lists', lists, wrap };
  };
  /** "No value": the complement of any value, a condition. */
  const none = (any: ChildTerm): ChildTerm => ({ kind: 'condition', condition: sql<SqlBool>`NOT (${childCondition(any)})` });
  if (field.type === 'keyValue') {
    const custom = (where: (alias: CustomAlias) => RawBuilder<SqlBool> | undefined): ChildTerm => semi(customRows(dialect, where));
    switch (predicate.kind) {
      case 'known':
        return custom(() => undefined);
      case 'unknown':
        return none(custom(() => undefined));
      case 'keyValue': {
        if (access.kind === 'childList' && access.via === 'names') return byCustomNames(dialect, predicate.name, predicate.value, seqWhere);
        return custom((alias) => sql<SqlBool>`${customPattern(dialect, alias, 'name', predicate.name)} AND ${customPattern(dialect, alias, 'value', predicate.value)}`);
      }
      case 'pattern':
        // `value:name` is `value:name=*`; the checker normally rewrites it, accept it here too.
        return custom((alias) => customPattern(dialect, alias, 'name', predicate.pattern));
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
  // The field is stored as its code (store migration 0016), a literal so the plan is fixed.
  const code = valueFieldCode(field.column);
  // A spread field's latest values are in a second table (store/ingest/recent-rows.ts), read as `r`.
  const rows = (where?: (alias: string) => RawBuilder<SqlBool>, wrap = asIs): ChildTerm =>
    semi(
      valueTables(dialect.recentRows, code).map((table, i) => {
        const alias = i === 0 ? 'v' : 'r';
        const own = sql<SqlBool>`${sql.ref(`${alias}.field`)} = ${sql.lit(code)}`;
        return { table, alias, where: where === undefined ? own : sql<SqlBool>`${own} AND ${where(alias)}`, seqIndex: VALUES_SEQ_INDEX[table] };
      }),
      wrap,
    );
  switch (predicate.kind) {
    case 'known':
      return rows();
    case 'unknown':
      return none(rows());
    case 'pattern':
      // Candidates from the field's terms: handed to the planner in the dialect's own way.
      return rows(
        (alias) => patternCondition(dialect, { kind: 'values', alias, field: field.column }, predicate.pattern, 'terms'),
        access.kind === 'childList' && access.via === 'terms' ? (c) => dialect.termListCondition(c) : asIs,
      );
    case 'boolean':
    case 'keyValue':
    case 'compare':
    case 'range':
      // Multi-valued fields are strings; the checker rejects these operators on them.
      throw impossible(field, predicate);
  }
}

/**
 * Where a wildcard without a literal prefix takes its candidates from: a trigram table, the value
 * terms of a multi-valued field, or nowhere (the LIKE alone).
 */
type Candidates = 'trigram' | 'terms' | 'none';

/** A whole-value wildcard match on a string column (never NULL-unsafe under NOT, see compileExpr). */
function patternCondition(dialect: Dialect, target: StringTarget, pattern: Pattern, candidates: Candidates): RawBuilder<SqlBool> {
  const segments = segmentsOf(pattern.segments);
  const ref = targetRef(target);
  if (segments.length <= 1) return sql<SqlBool>`${ref} = ${segments[0] ?? ''}`;
  if (segments.every((s) => s === '')) return sql<SqlBool>`${ref} IS NOT NULL`;
  // A multi-valued field's value without a literal prefix: match the field's distinct terms
  // first, then read the builds of each matching term from the (field, value, seq) index.
  if (candidates === 'terms' && target.kind === 'values' && wildcardWithoutPrefix(segments)) return sql<SqlBool>`${ref} IN (${dialect.matchingTerms(valueFieldCode(target.field), segments)})`;
  return dialect.wildcardMatch(target, segments, candidates === 'trigram');
}

/**
 * A key-value term whose name is a pattern and whose value has a literal start (access.ts
 * `walksNames`): the distinct names in the range of the name's literal prefix are walked one seek
 * each, those matching the name pattern are kept, and each one's value is sought in
 * `(name, value, seq)`. This is what the `(value, seq)` index used to answer (search migration
 * 0004 dropped it, and its random-position key per build in every ingest commit); the price is
 * about two seeks per distinct name where that index needed one seek in all, and names are few
 * (keys such as `Git commit id`).
 */
function byCustomNames(dialect: Dialect, name: Pattern, value: Pattern, seqWhere?: SeqCondition): ChildTerm {
  const prefix = segmentsOf(name.segments)[0] ?? '';
  const nameCond = patternCondition(dialect, { kind: 'customValues', alias: 'n', column: 'name' }, name, 'none');
  const valueCond = patternCondition(dialect, { kind: 'customValues', alias: 'c', column: 'value' }, value, 'none');
  const rowCond = seqWhere === undefined ? valueCond : sql<SqlBool>`${valueCond} AND ${seqWhere(sql.ref('c.seq'))}`;
  const walk = (table: string) => dialect.customValuesByName(table, prefix, prefix === '' ? undefined : prefixUpperBound(prefix), sql<SqlBool>`${nameCond} AND c.name = n.name AND ${rowCond}`);
  return { kind: 'lists', lists: customValueTables(dialect.recentRows).map(walk), wrap: asIs };
}

/** A table that holds child rows of builds, as `alias`, with the condition its rows must meet (none: any row). */
interface ChildPart {
  readonly table: string;
  readonly alias: string;
  readonly where: RawBuilder<SqlBool> | undefined;
  /** The table's index by seq, where a probe may read a build's rows through it. */
  readonly seqIndex?: string;
}

/** A row of build_custom_values (`c`) or of the recent custom values (`r`). */
type CustomAlias = 'c' | 'r';

/**
 * Where custom values are (layout.ts customValueTables): `build_custom_values` as `c`, and on a
 * dialect whose ingest gathers the latest ones apart (store/ingest/recent-rows.ts) their table too, as
 * `r`, with the same `(name, value, seq)` index. `where(alias)` is the condition on a row of either.
 */
function customRows(dialect: Dialect, where: (alias: CustomAlias) => RawBuilder<SqlBool> | undefined): ChildPart[] {
  return customValueTables(dialect.recentRows).map((table, i) => {
    const alias = i === 0 ? 'c' : 'r';
    return { table, alias, where: where(alias) };
  });
}

/**
 * A pattern on a custom value's name or value (inside the child-row subquery). Only the rows of
 * build_custom_values (`c`) are in the trigram table: a recent row's match is the exact one alone.
 */
function customPattern(dialect: Dialect, alias: CustomAlias, column: 'name' | 'value', pattern: Pattern): RawBuilder<SqlBool> {
  const segments = segmentsOf(pattern.segments);
  return patternCondition(dialect, { kind: 'customValues', alias, column }, pattern, alias === 'c' && usesTrigram(dialect, { kind: 'customValues' }, segments) ? 'trigram' : 'none');
}

/**
 * The bounds of a range or equality on a bucketed column, stated on its bucket (value-buckets.ts):
 * what the index `(bucket, seq, value)` is sought by, an equality reading its builds in seq order.
 * Implied by the bounds on the value, so it never changes the answer; none without a finite bound.
 */
function bucketCondition(column: string, predicate: Extract<Predicate, { kind: 'compare' | 'range' }>): RawBuilder<SqlBool> | undefined {
  const b = boundsOf(predicate);
  const bucket = sql.raw(valueBucket(`"builds"."${column}"`));
  // A bound is written as a number literal, so its bucket is a constant that the same expression
  // computes: the two sides agree by construction.
  const of = (n: number) => sql.raw(valueBucket(String(n)));
  const finite = (n: number | undefined): n is number => n !== undefined && Number.isFinite(n);
  if (finite(b.min) && b.min === b.max) return sql<SqlBool>`${bucket} = ${of(b.min)}`;
  const parts: RawBuilder<SqlBool>[] = [];
  if (finite(b.min)) parts.push(sql<SqlBool>`${bucket} >= ${of(b.min)}`);
  if (finite(b.max)) parts.push(sql<SqlBool>`${bucket} <= ${of(b.max)}`);
  return parts.length === 0 ? undefined : sql<SqlBool>`${sql.join(parts, sql` AND `)}`;
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
