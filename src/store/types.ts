// The store API that every face (REST, export, provenance, CLI) calls. One implementation serves
// SQLite and PostgreSQL; see src/db/database.ts for how a database is opened.

import type { BuildAttributes } from '../query/attributes.js';
import type { ToolType } from '../query/catalog.js';
import type { CheckedExpr } from '../query/checked.js';

/**
 * An event in the event model's JSON form, `{"timestamp":…,"type":{"majorVersion":…,
 * "minorVersion":…,"eventType":…},"data":…}`, as text, with its event type (for filters).
 */
export interface BuildEventText {
  readonly eventType: string;
  readonly json: string;
}

/** An event of a build, as ingested and as exported (seed 001 `BuildEvent` data). */
export interface BuildEvent {
  readonly timestamp: number;
  readonly type: { readonly majorVersion: number; readonly minorVersion: number; readonly eventType: string };
  readonly data: Readonly<Record<string, unknown>>;
}

/** Which builds a caller may see. Every listing, search and lookup applies it in SQL. */
export interface Visibility {
  /** Projects whose builds are visible, or 'all' when there is no project-level restriction. */
  readonly projects: readonly string[] | 'all';
  /** Whether builds without a project are visible. */
  readonly withoutProject: boolean;
}

export const SEE_EVERYTHING: Visibility = { projects: 'all', withoutProject: true };

export type { AttributeValue, BuildAttributes } from '../query/attributes.js';

export interface BuildSummary {
  readonly id: string;
  /** Epoch ms at which the build became available (its BuildFinished stored and indexed). */
  readonly availableAt: number;
  readonly toolType: ToolType;
  readonly toolVersion: string;
  readonly agentVersion: string;
  /** The build's project, or null when it has none. */
  readonly project: string | null;
  /** Position in availability order: strictly increasing, the cursor of every listing. */
  readonly seq: number;
}

export interface BuildWithAttributes extends BuildSummary {
  readonly attributes: BuildAttributes;
}

export interface ListBuildsOptions {
  /** Builds that became available at or after this instant (epoch ms). */
  readonly fromInstant?: number;
  /** Builds that became available after this build (exclusive); takes precedence over fromInstant. */
  readonly fromBuild?: string;
  /** Builds after this position in availability order (exclusive); used by streams to resume. */
  readonly afterSeq?: number;
  /** Newest first instead of oldest first. */
  readonly reverse?: boolean;
  readonly maxBuilds?: number;
  /** A checked query; absent or `all` lists every visible build. */
  readonly query?: CheckedExpr;
  readonly visibility: Visibility;
  readonly withAttributes?: boolean;
}

/** Per-line outcome of an NDJSON ingest. */
export type IngestLineResult =
  | { readonly line: number; readonly status: 'stored'; readonly buildId: string; readonly complete: boolean }
  | { readonly line: number; readonly status: 'unchanged'; readonly buildId: string; readonly complete: boolean }
  | { readonly line: number; readonly status: 'rejected'; readonly error: string; readonly path: string; readonly buildId?: string };

export type BuildState = 'missing' | 'incomplete' | 'available';

export interface IngestOptions {
  /** Called now and then with the number of lines handled so far (progress display). */
  readonly onProgress?: (linesDone: number) => void;
  /** Called after each committed batch with the results of its lines (in line order). */
  readonly onResults?: (results: readonly IngestLineResult[]) => void;
  /** Whether ingestNdjson returns every result (default true); false for huge inputs. */
  readonly keepResults?: boolean;
  /** Lines per transaction; by default 500, or for a bulk load what suits the database (batches.ts). */
  readonly batchSize?: number;
  /**
   * A bulk load: nothing else waits on this thread (a command-line load, demo builds before the
   * server listens), so transactions may be as large as the database gains from (SQLite: 5,000
   * lines), and on SQLite checkpoints come after more WAL (bulk-checkpoints.ts).
   */
  readonly bulk?: boolean;
  /**
   * What the publisher may see; absent: everything. Restricted publishers append only to builds
   * they may see and never move a build into or out of their sight (docs/store.md).
   */
  readonly visibility?: Visibility;
}

/**
 * The build store. Implemented once over kysely for SQLite and PostgreSQL (src/store/build-store.ts).
 * All listing methods apply `visibility` in SQL, so no face can forget it.
 */
export interface FieldValuesOptions {
  /** Only values starting with this text (case-insensitive); default: every value. */
  readonly prefix?: string;
  /** How many values at most (1 to 100); default 20. */
  readonly limit?: number;
  readonly visibility: Visibility;
}

/** A value of a field seen in the data, and how many builds have it (see field-values.ts). */
export interface FieldValueCount {
  readonly value: string;
  readonly count: number;
}

/** An attestation made from a build: where it is and what it says of which package. */
export interface BuildAttestation {
  /** Where the provenance API serves it (`.../attestations/<instance>/<id>`). */
  readonly attestationUri: string;
  /** The package it attests (a purl, with the repository_url qualifier). */
  readonly packageUrl: string;
  /** `sha256:<hex>` of the package. */
  readonly digest: string;
  readonly predicateType: string;
  /** The attestation store's instance (`obj:<name>` or `repo:<name>`). */
  readonly store: string;
  readonly publishedAt: number;
}

/**
 * What became of a task, in the words the pages use. `no-source` is a task that had nothing to do
 * (Gradle's NO-SOURCE: no input files), told apart from one the build chose to skip.
 */
export type TaskOutcome = 'executed' | 'up-to-date' | 'from-cache' | 'skipped' | 'no-source' | 'failed';

/**
 * The outcomes trends count tasks by (a column each in build_task_counts and the rollups): a
 * `no-source` task is counted with the `skipped` ones, as it neither ran nor reused outputs.
 */
export type CountedTaskOutcome = Exclude<TaskOutcome, 'no-source'>;

/** Which builds an aggregate (facets, trends) covers: those the query matches that the caller may see. */
export interface AggregateScope {
  readonly query?: CheckedExpr;
  readonly visibility: Visibility;
  /** Only builds that started at or after this instant (epoch ms). */
  readonly startFrom?: number;
  /** Only builds that started before this instant (epoch ms). */
  readonly startTo?: number;
}

export const FACET_FIELDS = ['buildOutcome', 'buildTool', 'project', 'user', 'tag'] as const;
export type FacetField = (typeof FACET_FIELDS)[number];

export interface FacetValue {
  readonly value: string;
  readonly count: number;
}

export type Facets = Readonly<Record<FacetField, readonly FacetValue[]>>;

export type TrendInterval = 'day' | 'week';

export interface TrendOptions {
  readonly from: number;
  readonly to: number;
  readonly interval: TrendInterval;
  /** IANA time zone in which days and weeks begin (weeks begin on Monday). */
  readonly tz: string;
}

export interface DurationPercentiles {
  readonly p25: number;
  readonly p50: number;
  readonly p75: number;
  readonly p95: number;
}

/** Finished tasks by outcome; `skipped` includes the `no-source` tasks (CountedTaskOutcome). */
export type TaskCounts = Readonly<Record<CountedTaskOutcome, number>>;

export interface TrendBucket {
  /** First instant of the period (epoch ms), and the first instant after it. */
  readonly start: number;
  readonly end: number;
  /** The period's first day in the time zone, `YYYY-MM-DD`. */
  readonly label: string;
  readonly builds: number;
  readonly succeeded: number;
  readonly failed: number;
  /** Builds without a known outcome. */
  readonly unknown: number;
  /** failed / (succeeded + failed), or null without such builds. */
  readonly failureRate: number | null;
  /** Nearest-rank percentiles of the known durations (ms), or null when none is known. */
  readonly duration: DurationPercentiles | null;
  /** Finished tasks of the period's builds by outcome. */
  readonly tasks: TaskCounts;
  /** (up-to-date + from-cache) / all tasks, or null without task events. */
  readonly avoidedShare: number | null;
}

export interface TaskStat {
  readonly path: string;
  /** How often the task ran (executed or failed) in the period's builds. */
  readonly runs: number;
  readonly failures: number;
  /** Mean and longest duration of those runs (ms, rounded). */
  readonly meanDuration: number;
  readonly maxDuration: number;
}

export interface Trends {
  readonly from: number;
  readonly to: number;
  readonly interval: TrendInterval;
  readonly tz: string;
  readonly buckets: readonly TrendBucket[];
  /** The ten tasks with the longest mean duration of their runs. */
  readonly slowestTasks: readonly TaskStat[];
  /** The ten tasks that failed most often. */
  readonly failingTasks: readonly TaskStat[];
}

export interface BuildStore {
  /** Ingests NDJSON (one build per line); returns one result per non-blank line, in order. */
  ingestNdjson(input: string | AsyncIterable<string | Uint8Array>, options?: IngestOptions): Promise<IngestLineResult[]>;
  /** Available builds in availability order (oldest first unless `reverse`). */
  listBuilds(options: ListBuildsOptions): Promise<BuildWithAttributes[] | BuildSummary[]>;
  /** Like listBuilds without a size limit, read from the database in pages with a cursor. */
  streamBuilds(options: Omit<ListBuildsOptions, 'maxBuilds'>): AsyncIterable<BuildSummary>;
  /** One build by ID, if it exists, is available and is visible. */
  getBuild(id: string, visibility: Visibility, options?: { withAttributes?: boolean }): Promise<BuildWithAttributes | undefined>;
  /** Whether a build exists and is complete, as far as `visibility` lets the caller know. */
  buildState(id: string, visibility: Visibility): Promise<BuildState>;
  /** A build's events in order, optionally only those whose eventType is listed (case-sensitive). */
  streamEvents(id: string, options?: { eventTypes?: readonly string[] }): AsyncIterable<BuildEvent>;
  /**
   * The same events as streamEvents, each as the text `JSON.stringify({timestamp, type, data})`
   * makes of it (data `{}` when absent), taken from the stored text without decoding it.
   */
  streamEventTexts(id: string, options?: { eventTypes?: readonly string[] }): AsyncIterable<BuildEventText>;
  /**
   * All of a build's events at once, in order (none for a build not stored): each chunk decoded
   * whole, about twice as fast as streamEvents, for a caller that holds the whole build anyway
   * (a build's facts, a comparison). Streams (the export, pages of events) use streamEvents.
   */
  readEvents(id: string): Promise<BuildEvent[]>;
  /** How many builds a listing with these options has (a count in the database, no rows read out). */
  countBuilds(options: Omit<ListBuildsOptions, 'maxBuilds' | 'reverse' | 'withAttributes'>): Promise<number>;
  /**
   * The most frequent values of a String field (without a closed set of values) among the builds
   * `visibility` shows, lower-cased as searched, most frequent first; bounded work (field-values.ts).
   * Throws a RangeError for another field.
   */
  fieldValues(field: string, options: FieldValuesOptions): Promise<FieldValueCount[]>;
  /**
   * The `limit` (default 8) most frequent values of each facet field among the scope's builds,
   * with their counts (analytics.ts). A search: with the search time limit (SearchTimeoutError),
   * off the server's thread on SQLite, unless the rollups answer it.
   */
  facets(scope: AggregateScope, limit?: number): Promise<Facets>;
  /**
   * The scope's builds per day or week (analytics.ts); TrendRangeError for a range or time zone
   * it cannot use. A search like facets.
   */
  trends(scope: AggregateScope, options: TrendOptions): Promise<Trends>;
  /**
   * The test dimension of the scope's builds (test-analytics.ts): searches like facets, under the
   * caller's visibility. A new reader each time, for one request: it keeps the builds of each scope
   * object it read.
   */
  readonly tests: TestReads;
  /**
   * Deletes up to `limit` builds of `selection` in one short transaction (retention, prune; see
   * prune.ts); returns the builds deleted (none: nothing left to delete).
   */
  deleteBuilds(selection: PruneSelection, limit: number): Promise<readonly PruneCandidate[]>;
  /** A build deleted by retention or prune, when the caller could have seen it; else undefined. */
  deletedBuild(id: string, visibility: Visibility): Promise<DeletedBuild | undefined>;
  /** The `seq` of the newest available build (0 when there is none). */
  latestSeq(): Promise<number>;
  /** Notes an attestation the provenance service made from an available build (for its page). */
  recordAttestation(buildId: string, attestation: BuildAttestation): Promise<void>;
  /** The attestations made from a build, oldest first; the caller has checked the build's visibility. */
  attestationsOf(buildId: string): Promise<BuildAttestation[]>;
  /**
   * Resolves true as soon as a build with seq > afterSeq is available (also when another server
   * process over the same PostgreSQL stored it), false after timeoutMs or when signal aborts.
   */
  waitForNewBuilds(afterSeq: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  /** How many waitForNewBuilds calls of this store are waiting now (none was answered yet). */
  waitingForNewBuilds(): number;
  close(): Promise<void>;
}

/** Which builds a prune deletes. */
export type PruneSelection =
  /** Builds that started before `instant` (epoch ms); incomplete ones by when they were received. */
  | { readonly kind: 'startedBefore'; readonly instant: number }
  /** The oldest available builds, in availability order (to free disk space). */
  | { readonly kind: 'oldest' };

/** A build chosen for deletion. */
export interface PruneCandidate {
  readonly id: string;
  /** Null for an incomplete build. */
  readonly seq: number | null;
  readonly project: string | null;
}

/** A deleted build as `deleted_builds` remembers it. */
export interface DeletedBuild {
  readonly seq: number | null;
  readonly project: string | null;
  readonly deletedAt: number;
}

// The test dimension's reads (test-analytics.ts, store migration 0020).

/** A test's identity as stored. */
export interface TestIdentityRow {
  readonly testId: number;
  readonly tool: string;
  readonly project: string | null;
  readonly suite: string;
  readonly name: string;
  readonly parameters: string;
}

/** A test's counts over the scope's builds. */
export interface TestCounts extends TestIdentityRow {
  /** Attempts that passed or failed, and those skipped. */
  readonly runs: number;
  readonly failures: number;
  readonly skipped: number;
  /** Builds that ran it. */
  readonly builds: number;
  readonly meanDurationMs: number;
  readonly lastSeq: number;
  /**
   * The outcome of its latest execution: of the latest build's attempts, the one test_runs' index
   * orders last (skipped, then failed, then passed: events/test-packs.ts latestRun). The Tests
   * page's lists read it where they would walk each failing test's index for its latest run.
   */
  readonly latestOutcome: 'passed' | 'failed' | 'skipped';
}

/** One execution of a test with its build. */
export interface TestRunRow {
  readonly testId: number;
  readonly seq: number;
  readonly buildId: string;
  readonly startTime: number | null;
  readonly commit: string | null;
  readonly outcome: 'passed' | 'failed' | 'skipped';
  readonly attempt: number;
  readonly durationMs: number;
  readonly failureGroup: number | null;
}

/** An execution as the index of a test's runs holds it: enough to judge the test (services/test-verdicts.ts). */
export interface RecentRunRow {
  readonly testId: number;
  readonly seq: number;
  readonly outcome: TestRunRow['outcome'];
}

/** A build's Git commit (its `Git commit id` custom value, lower-cased as stored). */
export interface BuildCommitRow {
  readonly seq: number;
  readonly commit: string;
}

export interface FailureGroupRow {
  readonly groupId: number;
  readonly key: string;
  readonly sample: string;
  readonly builds: number;
  readonly tests: number;
  readonly failures: number;
  readonly firstSeen: number | null;
  readonly lastSeen: number | null;
  /** The latest build (in availability order) with a failure of the group. */
  readonly lastBuildId: string;
}

/** A test a failure group hit, with its failures of the group. */
export interface FailureGroupTestRow extends TestIdentityRow {
  readonly failures: number;
  readonly builds: number;
  readonly lastSeen: number | null;
}

/** A build with failures of a group. */
export interface FailureGroupBuildRow {
  readonly seq: number;
  readonly buildId: string;
  readonly startTime: number | null;
  readonly outcome: string | null;
  readonly project: string | null;
  readonly tool: string;
  /** The build's failures of the group: failed test attempts and build failures. */
  readonly failures: number;
  readonly tests: number;
}

/** One failure group in the scope's builds: its counts, tests, builds per UTC day and a page of its builds. */
export interface FailureGroupDetail {
  readonly group: FailureGroupRow;
  /** Of the group's failures, those that are builds' own failures (not tests). */
  readonly buildFailures: number;
  readonly tests: readonly FailureGroupTestRow[];
  /** Builds per UTC day (`day`: its first instant, epoch ms), oldest first; days without builds left out. */
  readonly days: readonly { readonly day: number; readonly builds: number }[];
  /** Latest start first (builds without a known start last), ties by availability, latest first. */
  readonly builds: readonly FailureGroupBuildRow[];
  /** The `before` of the next (older) page of builds, or null on the last page. */
  readonly next: FailureGroupCursor | null;
}

/** Where a page of a group's builds ends: the last build's start (-1 when unknown) and seq. */
export interface FailureGroupCursor {
  readonly start: number;
  readonly seq: number;
}

export interface FailureGroupDetailOptions {
  /** Builds a page. */
  readonly limit: number;
  /** Only builds after this one in the order of the builds (the keyset of the next page). */
  readonly before?: FailureGroupCursor;
  readonly maxTests: number;
  readonly maxDays: number;
}

/** The reads of the test dimension, bound to a store's database and search guard (BuildStore.tests). */
export interface TestReads {
  counts(scope: AggregateScope, limit: number): Promise<TestCounts[]>;
  runs(testIds: readonly number[], scope: AggregateScope, maxRows?: number): Promise<TestRunRow[]>;
  /** Each test's latest `perTest` executions in the scope's builds, newest first; read from the index alone. */
  recentRuns(testIds: readonly number[], scope: AggregateScope, perTest: number): Promise<RecentRunRow[]>;
  /** The commits of the builds of these seqs that have one. */
  commitsOf(seqs: readonly number[]): Promise<BuildCommitRow[]>;
  /** The builds with seqs from `from` to `to` whose commit is one of `commits`, by the (name, value, seq) index. */
  buildsOfCommits(commits: readonly string[], from: number, to: number): Promise<BuildCommitRow[]>;
  byId(testId: number, visibility: Visibility): Promise<TestIdentityRow | undefined>;
  failureGroups(scope: AggregateScope, limit: number, testId?: number): Promise<FailureGroupRow[]>;
  /**
   * One failure group in the scope's builds; undefined when no build the scope's visibility shows
   * has a failure of it (whatever the query), so a group of others' builds does not exist.
   */
  failureGroup(groupId: number, scope: AggregateScope, options: FailureGroupDetailOptions): Promise<FailureGroupDetail | undefined>;
  /** The ids of the tests of these identity keys (test-runs.ts testKeyOf); a key without a test is absent. */
  idsOf(keys: readonly string[]): Promise<ReadonlyMap<string, number>>;
}

