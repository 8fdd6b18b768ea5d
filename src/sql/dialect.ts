// The only places where SQLite and PostgreSQL differ in compiled search SQL: how a string
// pattern reaches its index. Everything else (ranges, EXISTS over child rows, NOT) is shared.

import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { BUILDS_TRIGRAM, BUILDS_TRIGRAM_COLUMNS, CUSTOM_VALUES_TRIGRAM, MIN_TRIGRAM_CHARS, VALUE_TERMS, VALUE_TERMS_TRIGRAM } from './layout.js';
import { charCount, ftsPhrase, likePattern, longestSegment, prefixUpperBound, wildcardWithoutPrefix } from './pattern.js';

export type SqlDialect = 'sqlite' | 'postgres';

/** Where a searched string lives: a `builds` column or a column of a child row. */
export type StringTarget =
  | { readonly kind: 'builds'; readonly column: string }
  | { readonly kind: 'values'; readonly alias: string; readonly field: string }
  | { readonly kind: 'customValues'; readonly alias: string; readonly column: 'name' | 'value' };

export function targetRef(t: StringTarget): RawBuilder<unknown> {
  switch (t.kind) {
    case 'builds':
      return sql.ref(`builds.${t.column}`);
    case 'values':
      return sql.ref(`${t.alias}.value`);
    case 'customValues':
      return sql.ref(`${t.alias}.${t.column}`);
  }
}

const like = (ref: RawBuilder<unknown>, segments: readonly string[]): RawBuilder<SqlBool> =>
  sql<SqlBool>`${ref} LIKE ${likePattern(segments)} ESCAPE '\\'`;

/**
 * A wildcard match of `segments` (lower-cased, at least two: the pattern has a `*`) that is not a
 * plain "known" test. The result is exact; index-friendly parts are added in front of it.
 */
export function wildcardCondition(dialect: SqlDialect, target: StringTarget, segments: readonly string[]): RawBuilder<SqlBool> {
  const ref = targetRef(target);
  // A multi-valued field's value without a literal prefix: match the field's distinct terms
  // first, then read the builds of each matching term from the (field, value, seq) index.
  if (target.kind === 'values' && wildcardWithoutPrefix(segments)) return sql<SqlBool>`${ref} IN (${matchingTerms(dialect, target.field, segments)})`;
  if (dialect === 'postgres') {
    // One LIKE does it: the planner turns a literal prefix into a range on the text_pattern_ops
    // btree, and pg_trgm's GIN index serves infix patterns with >= 3 literal characters.
    return like(ref, segments);
  }
  const first = segments[0]!;
  const parts: RawBuilder<SqlBool>[] = [];
  if (first !== '') {
    // SQLite: an explicit range on the plain (BINARY) index; exact on its own for `abc*`.
    parts.push(prefixRange(ref, first));
    if (segments.length === 2 && segments[1] === '') return parts[0]!;
  } else {
    const longest = longestSegment(segments);
    // (Values of multi-valued fields went through their terms above.)
    const candidates = target.kind !== 'values' && charCount(longest) >= MIN_TRIGRAM_CHARS ? sqliteTrigram(target, longest) : undefined;
    if (candidates) parts.push(candidates);
  }
  parts.push(like(ref, segments));
  return sql<SqlBool>`(${sql.join(parts, sql` AND `)})`;
}

function prefixRange(ref: RawBuilder<unknown>, prefix: string): RawBuilder<SqlBool> {
  const upper = prefixUpperBound(prefix);
  return upper === undefined ? sql<SqlBool>`${ref} >= ${prefix}` : sql<SqlBool>`(${ref} >= ${prefix} AND ${ref} < ${upper})`;
}

/**
 * The values of `field` that match the pattern, from the terms table (layout.ts VALUE_TERMS):
 * exact. On SQLite a literal run of 3+ characters narrows the terms by their trigram table first;
 * PostgreSQL's planner picks the terms' trigram GIN index for the LIKE itself.
 */
function matchingTerms(dialect: SqlDialect, field: string, segments: readonly string[]): RawBuilder<unknown> {
  const t = sql.table(VALUE_TERMS);
  const like = sql`t.value LIKE ${likePattern(segments)} ESCAPE '\\'`;
  const longest = longestSegment(segments);
  if (dialect === 'sqlite' && charCount(longest) >= MIN_TRIGRAM_CHARS) {
    const F = sql.table(VALUE_TERMS_TRIGRAM);
    return sql`SELECT t.value FROM ${t} AS t WHERE t.field = ${field} AND t.id IN (SELECT rowid FROM ${F} WHERE ${F} MATCH ${ftsPhrase(longest)}) AND ${like}`;
  }
  return sql`SELECT t.value FROM ${t} AS t WHERE t.field = ${field} AND ${like}`;
}

/** Candidate rows from an FTS5 trigram table (a superset; the LIKE next to it is exact). */
function sqliteTrigram(target: Exclude<StringTarget, { kind: 'values' }>, literal: string): RawBuilder<SqlBool> | undefined {
  switch (target.kind) {
    case 'builds':
      if (!BUILDS_TRIGRAM_COLUMNS.includes(target.column)) return undefined;
      // The builds trigram table is keyed by seq (stable, unlike an implicit rowid).
      return sql<SqlBool>`builds.seq IN (SELECT rowid FROM ${sql.table(BUILDS_TRIGRAM)} WHERE ${sql.table(BUILDS_TRIGRAM)} MATCH ${ftsPhrase(literal, target.column)})`;
    case 'customValues':
      return sql<SqlBool>`${sql.ref(`${target.alias}.rowid`)} IN (SELECT rowid FROM ${sql.table(CUSTOM_VALUES_TRIGRAM)} WHERE ${sql.table(CUSTOM_VALUES_TRIGRAM)} MATCH ${ftsPhrase(literal, target.column)})`;
  }
}
