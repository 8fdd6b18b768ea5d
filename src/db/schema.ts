// The tables of the one database, as kysely's typed database interface. Every component's fixed
// tables are typed in full; the attribute columns of `builds` are not: the schema reconciliation
// adds one per single-valued field of the field catalog when the store opens (store/schema/reconcile.ts,
// store/schema/columns.ts), so their names are only known at run time (and db/ sits below the catalog).
// Those columns, and only those, are an index signature (CatalogColumns).
//
// Migrations do not use these types: a migration must keep doing what it did when it was written,
// whatever the tables look like today (kysely's own advice), so they take Kysely<any>.
//
// Numbers: PostgreSQL's int8/numeric are read as numbers (database.ts sets the type parsers).

import type { Generated } from 'kysely';

/**
 * The attribute columns of `builds`, one per single-valued catalog field, named by the field's
 * `column`: text, a number, or 0/1 for booleans; NULL when the build has no value. The signature
 * admits bytes too, only because it must admit every bookkeeping column (content_hash).
 */
export interface CatalogColumns {
  readonly [column: string]: string | number | Uint8Array | null;
}

/** The bookkeeping columns of `builds` (store/schema/columns.ts BOOKKEEPING_COLUMNS). */
export interface BuildsTable {
  id: string;
  /** Availability order; NULL while the build is incomplete. */
  seq: number | null;
  available_at: number | null;
  tool_type: string;
  tool_version: string;
  agent_version: string;
  project_name: string | null;
  /** The SHA-256 of the build's content, its 32 bytes (store migration 0017; text before it). */
  content_hash: Uint8Array;
  /** Always '{}' since store migration 0002 (the attributes live in build_attributes). */
  attributes: string;
  received_at: number;
  /**
   * The key of the build's rows in build_events (store migration 0014): given when the build is
   * first stored, from events_key_counter, so new builds' events are appended in arrival order.
   */
  events_key: number | null;
}

/** The events of a build, keyed by the build's `events_key` (store migration 0014), not its ID. */
export interface BuildEventsTable {
  /**
   * SQLite (store migration 0018): the rowid table's key, `events_key * 2^20 + chunk`
   * (store/schema/events-rowid.ts), of which `events_key` and `chunk` are virtual columns; a condition on a
   * build's chunks must be a range of `id` to be a range scan. Not a column on PostgreSQL.
   */
  id?: number;
  events_key: number;
  chunk: number;
  /**
   * The SHA-256 of the chunk's line, its 32 bytes (store migration 0017; text before it).
   * PostgreSQL only since store migration 0018: SQLite computes it from the events (stored-build.ts).
   */
  hash: Uint8Array;
  event_count: number;
  /** The events as JSON text; '' once `events_packed` holds them (store migration 0008). */
  events: string;
  /** The events compressed (event-codec.ts), or null for a row still stored as text. */
  events_packed: Uint8Array | null;
}

export interface BuildValuesTable {
  seq: number;
  /** The field's code (sql/value-fields.ts VALUE_FIELD_CODES; store migration 0016). */
  field: number;
  value: string;
}

export interface BuildCustomValuesTable {
  seq: number;
  name: string;
  value: string;
}

export interface BuildAttributesTable {
  seq: number;
  /** The derived attributes as JSON text; '' once `attributes_packed` holds them (migration 0008). */
  attributes: string;
  /** The attributes compressed (event-codec.ts), or null for a row still stored as text. */
  attributes_packed: Uint8Array | null;
}

export interface StoreFieldsTable {
  name: string;
}

export interface BuildTasksTable {
  seq: number;
  /** The task's position in its build: with seq, the primary key (store migration 0012). */
  ord: number;
  /** task_paths.id of the task's path. */
  path_id: number;
  /** TASK_OUTCOME_CODES (store/events/tasks.ts). */
  outcome: number;
  start_ms: number;
  duration_ms: number;
  cacheable: number | null;
}

/** Store migration 0020 (store/schema/test-migration.ts): each test once, by identity. */
export interface TestsTable {
  id: Generated<number>;
  /** JSON of [tool, project, suite, name, parameters] (store/events/test-runs.ts testKeyOf). */
  test_key: string;
  tool_type: string;
  project_name: string | null;
  suite: string;
  name: string;
  /** '' for a test without parameters. */
  parameters: string;
}

/** Store migration 0020: one row per finished test attempt of an available build. */
/** A build's test executions and failures in two values (store migration 0024, store/events/test-packs.ts). */
export interface TestPacksTable {
  seq: number;
  /** builds.buildstarttime. */
  start: number | null;
  runs: Uint8Array;
  /** Null: no failure. */
  failures: Uint8Array | null;
}

export interface TestRunsTable {
  seq: number;
  ord: number;
  test_id: number;
  /** TEST_OUTCOME_CODES (store/events/test-runs.ts). */
  outcome: number;
  attempt: number;
  start_ms: number;
  duration_ms: number;
  /** failure_groups.id of a failed attempt's failure, or null. */
  group_id: number | null;
}

/** Store migration 0020: each failure group key once (store/events/failure-groups.ts). */
export interface FailureGroupsTable {
  id: Generated<number>;
  group_key: string;
  /** The first message seen in the group. */
  sample: string;
}

/** Store migration 0020: the failure groups of each build's own failures. */
export interface BuildFailuresTable {
  seq: number;
  ord: number;
  group_id: number;
}

/** Store migration 0012: every task path once, by id (build_tasks.path_id). */
export interface TaskPathsTable {
  id: Generated<number>;
  path: string;
}

/** One count per task outcome (store/events/tasks.ts TASK_COUNT_COLUMNS). */
export interface BuildTaskCountsTable {
  seq: number;
  executed: number;
  up_to_date: number;
  from_cache: number;
  skipped: number;
  failed: number;
}

/** The one row holding the last events_key handed out (store migration 0014); it only grows. */
export interface EventsKeyCounterTable {
  last: number;
}

export interface DeletedBuildsTable {
  id: string;
  seq: number | null;
  project_name: string | null;
  deleted_at: number;
}

/** The distinct (field, value) pairs of build_values (search migration 0003); `id` on SQLite only. */
export interface BuildValueTermsTable {
  id?: number;
  /** The field's code, as in build_values (store migration 0016). */
  field: number;
  value: string;
}

export interface AuthUserTable {
  name: string;
  password_hash: string | null;
  permissions: string;
  projects: string | null;
  created_at: number;
}

export interface AuthAccessKeyTable {
  key_hash: string;
  user_name: string;
  prefix: string;
  created_at: number;
  expires_at: number;
}

export interface AuthSigningKeyTable {
  id: string;
  secret: string;
  created_at: number;
}

export interface CacheNodeTable {
  name: string;
  node_key: string;
  secret_hash: string;
  created_at: number;
  address: string | null;
  registered_at: number | null;
  last_seen_at: number | null;
  status: string | null;
}

/** The tables the search compiler reaches (`builds` with its catalog columns, and its child rows). */
export interface SearchDatabase {
  builds: BuildsTable & CatalogColumns;
  build_values: BuildValuesTable;
  build_custom_values: BuildCustomValuesTable;
  /** Store migration 0019: the latest custom values in arrival order, same columns (store/ingest/recent-rows.ts). */
  build_custom_values_recent: BuildCustomValuesTable;
  /** Store migration 0019: the latest values of spread fields in arrival order, same columns (store/ingest/recent-rows.ts). */
  build_values_recent: BuildValuesTable;
  build_value_terms: BuildValueTermsTable;
}

/** Store migration 0010: the attestations made from each build. */
export interface BuildAttestationsTable {
  attestation_uri: string;
  seq: number;
  build_id: string;
  package_url: string;
  digest: string;
  predicate_type: string;
  store: string;
  published_at: number;
}

export interface Database extends SearchDatabase {
  build_attestations: BuildAttestationsTable;
  build_events: BuildEventsTable;
  build_attributes: BuildAttributesTable;
  store_fields: StoreFieldsTable;
  build_tasks: BuildTasksTable;
  task_paths: TaskPathsTable;
  build_task_counts: BuildTaskCountsTable;
  tests: TestsTable;
  test_runs: TestRunsTable;
  test_packs: TestPacksTable;
  failure_groups: FailureGroupsTable;
  build_failures: BuildFailuresTable;
  deleted_builds: DeletedBuildsTable;
  events_key_counter: EventsKeyCounterTable;
  auth_user: AuthUserTable;
  auth_access_key: AuthAccessKeyTable;
  auth_signing_key: AuthSigningKeyTable;
  cache_node: CacheNodeTable;
}
