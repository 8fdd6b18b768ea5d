// Names of the search structures, shared by the index migrations, the schema reconciliation and
// the compiler (which must only reach for a trigram table that the schema has).

import { FIELDS } from '../query/catalog.js';
import { SPREAD_VALUE_FIELDS } from './value-fields.js';

/**
 * `builds` columns with a trigram index (infix search): the single-valued fields the catalog
 * marks `infix`. The schema reconciliation (store/schema/reconcile.ts) makes the database's trigram
 * index match this list when the store opens.
 */
export const BUILDS_TRIGRAM_COLUMNS: readonly string[] = FIELDS.filter((f) => f.infix === true && !f.multi).map((f) => f.column);

/**
 * Single-valued columns with a btree index: every generic field. Tool-specific columns are left
 * to a scan: each build fills only its own tool's columns, their values are few and repetitive
 * (versions, locales, flags), and every extra index slows ingest.
 */
export const INDEXED_FIELDS = FIELDS.filter((f) => f.tool === null && !f.multi);

/** SQLite FTS5 trigram tables (external content, kept in sync by triggers). */
export const BUILDS_TRIGRAM = 'builds_trigram';
/** Trigram table over every row of build_values; replaced by VALUE_TERMS_TRIGRAM in search migration 0003. */
export const VALUES_TRIGRAM = 'build_values_trigram';
export const CUSTOM_VALUES_TRIGRAM = 'build_custom_values_trigram';

/**
 * The distinct (field, value) pairs of build_values, each once, with a trigram index over the
 * values (SQLite FTS5 / PostgreSQL pg_trgm). A wildcard pattern on a multi-valued field is matched
 * against these few terms first, then the builds are read from build_values by exact value.
 */
export const VALUE_TERMS = 'build_value_terms';
export const VALUE_TERMS_TRIGRAM = 'build_value_terms_trigram';

/** A trigram index only helps when the query has a literal run of at least this many characters. */
export const MIN_TRIGRAM_CHARS = 3;

/**
 * The custom values, and the values of the fields of value-fields.ts SPREAD_VALUE_FIELDS, of the
 * latest builds, in the order they arrived (store migration 0019; SQLite only writes them):
 * written at ingest, read by searches next to `build_custom_values` and `build_values`, and moved
 * into them in bulk once they hold enough rows (store/ingest/recent-rows.ts).
 */
export const RECENT_CUSTOM_VALUES = 'build_custom_values_recent';
export const RECENT_VALUES = 'build_values_recent';

/** The tables that hold custom values, where the dialect gathers recent rows apart (`recentRows`) or not. */
export function customValueTables(recentRows: boolean): readonly ('build_custom_values' | 'build_custom_values_recent')[] {
  return recentRows ? ['build_custom_values', RECENT_CUSTOM_VALUES] : ['build_custom_values'];
}

/** The index of a values table by seq (a build's own rows): deletions, `field:*` probes, a walk's per-build probe of a pattern. */
export const VALUES_SEQ_INDEX = { build_values: 'build_values_seq', [RECENT_VALUES]: 'build_values_recent_seq' } as const;

/** The tables that hold the values of the multi-valued field of code `code` (value-fields.ts). */
export function valueTables(recentRows: boolean, code: number): readonly ('build_values' | 'build_values_recent')[] {
  return recentRows && SPREAD_VALUE_FIELDS.has(code) ? ['build_values', RECENT_VALUES] : ['build_values'];
}
