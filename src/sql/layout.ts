// Names of the search structures, shared by the index migration and the compiler (which must
// only reach for a trigram table that the migration creates).

/** `builds` columns with a trigram index (infix search): the free-text generic fields. */
export const BUILDS_TRIGRAM_COLUMNS: readonly string[] = ['user', 'hostname', 'project', 'buildtoolversion'];

/** SQLite FTS5 trigram tables (external content, kept in sync by triggers). */
export const BUILDS_TRIGRAM = 'builds_trigram';
export const VALUES_TRIGRAM = 'build_values_trigram';
export const CUSTOM_VALUES_TRIGRAM = 'build_custom_values_trigram';

/** A trigram index only helps when the query has a literal run of at least this many characters. */
export const MIN_TRIGRAM_CHARS = 3;
