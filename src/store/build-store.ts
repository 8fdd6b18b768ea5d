// The build store over kysely, for SQLite and PostgreSQL (see docs/store.md). Visibility is
// applied in SQL by every listing and lookup; listings are ordered by `seq` (availability order).

import { countFromRollups } from './analytics/rollups-query.js';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../db/database.js';
import { ingestNdjson, NOTIFY_CHANNEL } from './ingest/ingest.js';
import { decodeEvent, eventText } from './events/event-codec.js';
import { StoredEvents } from './events/stored-events.js';
import { BuildListing } from './search/listing.js';
import { compactStoredEvents } from './schema/compact-events.js';
import { fillTestDimension } from './ingest/test-backfill.js';
import { layoutOf, type StoreLayout } from './schema/layout.js';
import { migrateStoreAndSearch } from './schema/migrations.js';
import { reconcileCatalog } from './schema/reconcile.js';
import { dialectOf, valueRowsCount, type Dialect } from '../sql/index.js';
import { trigramBatch } from '../sql/indexes.js';
import { NewBuildSignal } from './notify.js';
import { PreparePool } from './ingest/prepare-pool.js';
import type { OutputBounds } from './ingest/output-bounds.js';
import { findField } from '../query/catalog.js';
import { fieldValuesQuery, offersDataValues } from './search/field-values.js';
import { buildFacets, buildTrends } from './analytics/analytics.js';
import { SearchGuard } from './search/search-guard.js';
import { testReads, type TestReads } from './analytics/test-analytics.js';
import { deleteBuilds, deletedBuild, pruneCandidates } from './prune.js';
import { attestationsOf, recordAttestation } from './attestations.js';
import { projectVisible, seesEverything, visibilityCondition } from './search/visibility.js';
import { AnalyticsIndex, type AnalyticsIndexOptions } from './analytics/analytics-index.js';
import { PostingCache, type PostingCacheOptions } from './search/postings.js';
import type {
  AggregateScope,
  BuildAttestation,
  BuildEvent,
  BuildEventText,
  BuildState,
  BuildStore,
  BuildSummary,
  BuildWithAttributes,
  IngestLineResult,
  IngestOptions,
  FieldValueCount,
  FieldValuesOptions,
  DeletedBuild,
  Facets,
  ListBuildsOptions,
  PruneCandidate,
  PruneSelection,
  TrendOptions,
  Trends,
  Visibility,
} from './types.js';

export interface BuildStoreOptions {
  /** Server clock (epoch ms) for `availableAt`; Date.now by default. */
  readonly clock?: () => number;
  /** Told the results of every committed ingest batch, whoever ingests (the server's metrics). */
  readonly onIngested?: (results: readonly IngestLineResult[]) => void;
  readonly logger?: Logger;
  /**
   * In-memory posting bitmaps for pages of conjunctions of exact terms (postings.ts), SQLite only;
   * `false` turns them off. Default on, at most 64 MB.
   */
  readonly postings?: PostingCacheOptions | false;
  /**
   * The count, facets and trends of any query from memory (analytics-index.ts), SQLite only; `false`
   * turns it off. Default on, at most 256 MB of columns and 64 MB of term bitmaps. `warm` reads
   * the stored builds into it in the background when the store opens (the server).
   */
  readonly analyticsIndex?: (AnalyticsIndexOptions & { readonly warm?: boolean }) | false;
  /**
   * Whether inputs longer than one batch are prepared (parsed, validated, derived) in a worker
   * thread while the previous batch is written (prepare-pool.ts). Default true; a PreparePool of
   * the caller's own is used as it is (and not closed with the store).
   */
  readonly ingestWorker?: boolean | PreparePool;
  /**
   * Whether new event chunks are stored compressed (default true). False writes them as JSON text,
   * as before store migration 0008, and converts nothing: only the storage benchmark and the
   * conversion tests use it, to have stores of the old form.
   */
  readonly packEvents?: boolean;
  /**
   * SQLite: recent child rows gathered in arrival order before they are moved into their indexed
   * table (recent-rows.ts, default FOLD_ROWS). Tests set it small, to move them often.
   */
  readonly foldRows?: number;
  /**
   * Time limit of one search (a listing with a query or one page of a streamed one, a count,
   * facets, trends, the values of a field), in ms; default 10,000. PostgreSQL:
   * `statement_timeout` of its statements. SQLite: the search threads stop them. A search over
   * the limit fails with SearchTimeoutError (search-guard.ts).
   */
  readonly searchTimeoutMs?: number;
  /**
   * SQLite: worker threads that run searches, each on its own read-only connection (read-pool.ts),
   * so a slow search does not hold the server's thread; default 2. 0 runs searches in the
   * caller's thread without a time limit.
   */
  readonly searchThreads?: number;
  /**
   * SQLite: the windows of seq a page whose plan sorts every match walks first (pageFromWindows),
   * default WINDOWS. Tests set them small, so that a few hundred builds span several windows.
   */
  readonly pageWindows?: readonly number[];
  /** Bounds of the console log, test output and stack traces of an ingest line (output-bounds.ts). */
  readonly outputBounds?: OutputBounds;
}

/** Default time limit of a search statement. */
export const DEFAULT_SEARCH_TIMEOUT_MS = 10_000;

/** Whether a listing searches (and so runs with the search time limit, on SQLite in a search thread). */

export { UnknownBuildError } from './search/listing.js';

export async function openBuildStore(handle: DatabaseHandle, options: BuildStoreOptions = {}): Promise<BuildStore> {
  await migrateStoreAndSearch(handle);
  await reconcileCatalog(handle, options.logger);
  if (options.packEvents !== false) await compactStoredEvents(handle, options.logger);
  await fillTestDimension(handle, options.logger);
  const store = new KyselyBuildStore(handle, options);
  if (store.dialect.notifiesNewBuilds && handle.pool !== undefined) {
    await store.signal.listen(handle.pool.options, NOTIFY_CHANNEL);
  }
  if (options.analyticsIndex !== false && options.analyticsIndex?.warm === true) store.index?.catchUp();
  return store;
}

class KyselyBuildStore implements BuildStore {
  readonly signal: NewBuildSignal;
  /** The database's dialect hooks, picked once. */
  readonly dialect: Dialect;
  /** How the store's tables are laid out on this database, picked once. */
  readonly layout: StoreLayout;
  /** Reads builds' stored events back. */
  private readonly events: StoredEvents;
  /** Reads builds by query and by ID. */
  private readonly listing: BuildListing;
  private readonly clock: () => number;

  private readonly postings: PostingCache | undefined;
  readonly index: AnalyticsIndex | undefined;
  private readonly pool: PreparePool | undefined;
  /** The time limit and threads (SQLite) or slots (PostgreSQL) every search runs under. */
  private readonly guard: SearchGuard;

  constructor(
    private readonly handle: DatabaseHandle,
    private readonly options: BuildStoreOptions,
  ) {
    this.clock = options.clock ?? Date.now;
    this.dialect = dialectOf(handle.dialect);
    this.layout = layoutOf(handle.dialect);
    this.events = new StoredEvents(handle.db, this.layout);
    const d = this.dialect;
    // Posting bitmaps stay complete only where builds become available in seq order.
    this.postings = d.commitsInSeqOrder && handle.sqlite !== undefined && options.postings !== false ? new PostingCache(handle.sqlite, handle.db, d, options.postings) : undefined;
    this.signal = new NewBuildSignal(() => this.latestSeq(), options.logger);
    const w = options.ingestWorker;
    this.pool = w === false ? undefined : w === undefined || w === true ? new PreparePool(options.logger) : w;
    this.guard = new SearchGuard(handle, d, {
      timeoutMs: options.searchTimeoutMs ?? DEFAULT_SEARCH_TIMEOUT_MS,
      threads: options.searchThreads ?? 2,
      ...(options.logger !== undefined ? { logger: options.logger } : {}),
    });
    // As the bitmaps, complete only where builds become available in seq order.
    this.index =
      d.commitsInSeqOrder && options.analyticsIndex !== false
        ? new AnalyticsIndex(handle.db, d, this.guard, { ...options.analyticsIndex, ...(options.logger !== undefined ? { logger: options.logger } : {}) })
        : undefined;
    this.listing = new BuildListing(handle, d, this.guard, this.postings, (id, v) => this.deletedBuild(id, v), options.pageWindows, this.index);
  }


  ingestNdjson: BuildStore['ingestNdjson'] = (input, options) => {
    const observe = this.options.onIngested;
    const observed: IngestOptions | undefined =
      observe === undefined
        ? options
        : {
            ...options,
            onResults: (results) => {
              observe(results);
              options?.onResults?.(results);
            },
          };
    return ingestNdjson(
      {
        handle: this.handle,
        clock: this.clock,
        onAvailable: (s) => this.signal.signal(s),
        trigram: trigramBatch,
        ...(this.pool ? { pool: this.pool } : {}),
        ...(this.options.packEvents === false ? { packEvents: false } : {}),
        ...(this.options.foldRows !== undefined ? { foldRows: this.options.foldRows } : {}),
        ...(this.options.outputBounds !== undefined ? { outputBounds: this.options.outputBounds } : {}),
      },
      input,
      observed,
    );
  };


  listBuilds(options: ListBuildsOptions): Promise<BuildWithAttributes[] | BuildSummary[]> {
    return this.listing.listBuilds(options);
  }

  streamBuilds(options: Omit<ListBuildsOptions, 'maxBuilds'>): AsyncIterable<BuildSummary> {
    return this.listing.streamBuilds(options);
  }

  getBuild(id: string, visibility: Visibility, options: { withAttributes?: boolean } = {}): Promise<BuildWithAttributes | undefined> {
    return this.listing.getBuild(id, visibility, options);
  }

  buildState(id: string, visibility: Visibility): Promise<BuildState> {
    return this.listing.buildState(id, visibility);
  }

  readEvents(id: string): Promise<BuildEvent[]> {
    return this.events.readAll(id);
  }

  /**
   * The events of a build in order, decoded one at a time: a reader holds at most one batch of
   * small chunks or one slice of a large chunk (`substr`, both dialects), whatever the size of
   * the build, so that a client that stops reading costs a bounded buffer (docs/export.md).
   */
  streamEvents(id: string, options: { eventTypes?: readonly string[] } = {}): AsyncIterable<BuildEvent> {
    return this.events.read(id, options.eventTypes, decodeEvent, (e) => e.type.eventType);
  }

  /**
   * The events of a build as streamEvents reads them, each as the text JSON.stringify makes of it,
   * without decoding its data (the export's path: event-codec.ts eventText).
   */
  streamEventTexts(id: string, options: { eventTypes?: readonly string[] } = {}): AsyncIterable<BuildEventText> {
    return this.events.read(id, options.eventTypes, eventText, (e) => e.eventType);
  }


  async countBuilds(options: Omit<ListBuildsOptions, 'maxBuilds' | 'reverse' | 'withAttributes'>): Promise<number> {
    // A query the trend rollups answer is counted from their all-time rows (a few rows).
    if (options.fromInstant === undefined && options.fromBuild === undefined && options.afterSeq === undefined) {
      const n = await countFromRollups(this.handle, options.query, visibilityCondition(options.visibility));
      if (n !== undefined) return n;
      const counted = await this.index?.count({ query: options.query, visibility: options.visibility });
      if (counted !== undefined) return counted;
      // One exact value of a multi-valued field, for a caller who sees every build: a count of its
      // index range (sql/count.ts), without reading a build. A search still (time limit, thread).
      const byValues = options.query !== undefined && seesEverything(options.visibility) ? valueRowsCount(options.query, this.dialect) : undefined;
      if (byValues !== undefined) {
        const rows = await this.guard.search((read) => read(byValues.compile(this.handle.db)));
        return Number(rows[0]?.n ?? 0);
      }
    }
    const { query } = await this.listing.listingFrom({ ...options, withAttributes: false });
    // A search like any other: off the server's thread on SQLite, with the time limit.
    const rows = await this.listing.run<{ n: number | string }>(query.clearSelect().clearOrderBy().select(sql<number>`count(*)`.as('n')), options.query !== undefined);
    return Number(rows[0]?.n ?? 0);
  }

  async fieldValues(name: string, options: FieldValuesOptions): Promise<FieldValueCount[]> {
    const field = findField(name);
    if (field === undefined || !offersDataValues(field)) throw new RangeError(`Values from the data are offered for String fields without a fixed set of values, not for ${JSON.stringify(name)}`);
    const q = fieldValuesQuery(this.handle.db, this.dialect, field, options.prefix ?? '', options.limit ?? 20, visibilityCondition(options.visibility));
    // Bounded, but a read all the same: off the server's thread on SQLite, with the time limit.
    const rows = await this.listing.run<{ value: string; count: number | string }>(q, true);
    return rows.map((r) => ({ value: r.value, count: Number(r.count) }));
  }

  /**
   * Facets and trends are searches too: the direct path's statements run through the search
   * guard (time limit, search threads or slots); what the rollups answer is read here, a few
   * rows of small tables (analytics.ts).
   */
  facets(scope: AggregateScope, limit = 8): Promise<Facets> {
    return buildFacets(this.handle, scope, limit, { guard: this.guard, ...(this.index !== undefined ? { index: this.index } : {}) });
  }

  trends(scope: AggregateScope, options: TrendOptions): Promise<Trends> {
    return buildTrends(this.handle, scope, options, { guard: this.guard, ...(this.index !== undefined ? { index: this.index } : {}) });
  }

  get tests(): TestReads {
    const index = this.index;
    return testReads(this.handle, this.guard, index === undefined ? undefined : (scope) => index.matching(scope));
  }

  async deleteBuilds(selection: PruneSelection, limit: number): Promise<readonly PruneCandidate[]> {
    const candidates = await pruneCandidates(this.handle.db, selection, limit);
    const gone = await deleteBuilds(this.handle, candidates, this.clock());
    const seqs = gone.flatMap((g) => (g.seq === null ? [] : [g.seq]));
    this.postings?.forget(seqs);
    this.index?.forget(seqs);
    return gone;
  }

  async deletedBuild(id: string, visibility: Visibility): Promise<DeletedBuild | undefined> {
    const d = await deletedBuild(this.handle.db, id);
    // Only to callers who could have seen the build: to others it never existed.
    return d !== undefined && projectVisible(visibility, d.project) ? d : undefined;
  }

  recordAttestation(buildId: string, attestation: BuildAttestation): Promise<void> {
    return recordAttestation(this.handle.db, buildId, attestation);
  }

  attestationsOf(buildId: string): Promise<BuildAttestation[]> {
    return attestationsOf(this.handle.db, buildId);
  }

  async latestSeq(): Promise<number> {
    const row = await this.handle.db
      .selectFrom('builds')
      .select(sql<number>`coalesce(max(seq), 0)`.as('m'))
      .executeTakeFirstOrThrow();
    return Number(row.m);
  }

  waitForNewBuilds(afterSeq: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    return this.signal.wait(afterSeq, timeoutMs, signal);
  }

  waitingForNewBuilds(): number {
    return this.signal.waiting;
  }

  async close(): Promise<void> {
    this.index?.close();
    await this.signal.close();
    if (this.pool !== this.options.ingestWorker) await this.pool?.close();
    await this.guard.close();
  }
}
