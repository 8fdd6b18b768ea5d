// Names of the search structures, shared by the index migrations, the schema reconciliation and
// the compiler (which must only reach for a trigram table that the schema has).

import { FIELDS } from '../query/catalog.js';

/**
 * `builds` columns with a trigram index (infix search): the single-valued fields the catalog
 * marks `infix`. The schema reconciliation (store/reconcile.ts) makes the database's trigram
 * index match this list when the store opens.
 */
export const BUILDS_TRIGRAM_COLUMNS: readonly string[] = FIELDS.filter((f) => f.infix === true && !f.multi).map((f) => f.column);

/**
 * Generic columns whose search is served by an index that another part of the schema keeps and
 * that leads with the column, so they get no `(column, seq)` index of their own:
 * `buildstarttime` leads `builds_trend (buildstarttime, buildoutcome, buildduration, seq)` (store
 * migration 0006), which serves a range on it as well; search migration 0007 dropped the
 * `builds_buildstarttime_idx` that search migration 0001 made (docs/search-sql.md).
 */
export const COLUMNS_INDEXED_ELSEWHERE: readonly string[] = ['buildstarttime'];

/**
 * Single-valued columns with a btree index of their own, `(column, seq)`: every generic field but
 * those of COLUMNS_INDEXED_ELSEWHERE. Tool-specific columns are left to a scan: each build fills
 * only its own tool's columns, their values are few and repetitive (versions, locales, flags), and
 * every extra index slows ingest.
 */
export const INDEXED_FIELDS = FIELDS.filter((f) => f.tool === null && !f.multi && !COLUMNS_INDEXED_ELSEWHERE.includes(f.column));

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
