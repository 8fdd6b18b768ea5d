// The build store over kysely, for SQLite and PostgreSQL (see docs/store.md). Visibility is
// applied in SQL by every listing and lookup; listings are ordered by `seq` (availability order).

import { DomainError } from '../errors/domain.js';
import { countFromRollups } from './analytics/rollups-query.js';
import { sql, type CompiledQuery, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Logger } from 'pino';
import type { ToolType } from '../query/catalog.js';
import type { DatabaseHandle } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { ingestNdjson, NOTIFY_CHANNEL } from './ingest/ingest.js';
import { decodeEvent, eventText, storedAttributes } from './events/event-codec.js';
import { mayBeStored, StoredEvents } from './events/stored-events.js';
import { compactStoredEvents } from './schema/compact-events.js';
import { fillTestDimension } from './ingest/test-backfill.js';
import { layoutOf, type StoreLayout } from './schema/layout.js';
import { migrateStoreAndSearch } from './schema/migrations.js';
import { reconcileCatalog } from './schema/reconcile.js';
import { accessPlan, compileQuery, dialectOf, valueRowsCount, type Dialect } from '../sql/index.js';
import { trigramBatch } from '../sql/indexes.js';
import { NewBuildSignal } from './notify.js';
import { PreparePool } from './ingest/prepare-pool.js';
import type { OutputBounds } from './ingest/output-bounds.js';
import type { CheckedExpr } from '../query/checked.js';
import { findField } from '../query/catalog.js';
import { fieldValuesQuery, offersDataValues } from './search/field-values.js';
import { buildFacets, buildTrends } from './analytics/analytics.js';
import { SearchGuard } from './search/search-guard.js';
import { testReads, type TestReads } from './analytics/test-analytics.js';
import { deleteBuilds, deletedBuild, pruneCandidates } from './prune.js';
import { attestationsOf, recordAttestation } from './attestations.js';
import { projectVisible, seesEverything, visibilityCondition } from './search/visibility.js';
import { AnalyticsIndex, type AnalyticsIndexOptions } from './analytics/analytics-index.js';
import { PostingCache, exactTerms, intersect, type PostingCacheOptions, type Postings } from './search/postings.js';
import type {
  AggregateScope,
  BuildAttestation,
  BuildAttributes,
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
const searches = (query: CheckedExpr | undefined): boolean => query !== undefined && query.kind !== 'all';

/** `fromBuild` names a build that is not available or not visible to the caller. */
export class UnknownBuildError extends DomainError {
  readonly kind = 'invalid-parameter';
  constructor(readonly buildId: string) {
    super(`Unknown build ${JSON.stringify(buildId)}: no available build with this ID is visible`);
  }
}

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

const PAGE = 1000;

/**
 * The windows of seq a page whose plan sorts every match walks first (pageFromWindows), and the
 * largest page read that way. The first costs about a thousand row reads, enough for a query that
 * matches one build in twenty; the second reaches one in a few hundred.
 */
const WINDOWS = [1024, 16_384] as const;
const WINDOW_PAGE_MAX = 1000;

/** A listing's query over `builds`, selecting a Row. */
type Query = SelectQueryBuilder<Database, 'builds', Row>;

/** What `run` needs of a select statement. */
interface Runnable<R> {
  execute(): Promise<R[]>;
  compile(): CompiledQuery<R>;
}

/** A listed build (available: seq and available_at are set). */
interface Row {
  id: string;
  seq: number;
  available_at: number;
  tool_type: string;
  tool_version: string;
  agent_version: string;
  project_name: string | null;
  attributes?: string | Uint8Array | null;
}

function toSummary(r: Row, withAttributes: boolean): BuildSummary | BuildWithAttributes {
  const summary: BuildSummary = {
    id: r.id,
    availableAt: Number(r.available_at),
    toolType: r.tool_type as ToolType,
    toolVersion: r.tool_version,
    agentVersion: r.agent_version,
    project: r.project_name,
    seq: Number(r.seq),
  };
  if (!withAttributes) return summary;
  return { ...summary, attributes: JSON.parse(storedAttributes(r.attributes)) as BuildAttributes };
}

/** The one visibility rule (visibility.ts), as every aggregate applies it. */
function applyVisibility(q: Query, v: Visibility): Query {
  return seesEverything(v) ? q : q.where(visibilityCondition(v));
}

class KyselyBuildStore implements BuildStore {
  readonly signal: NewBuildSignal;
  /** The database's dialect hooks, picked once. */
  readonly dialect: Dialect;
  /** How the store's tables are laid out on this database, picked once. */
  readonly layout: StoreLayout;
  /** Reads builds' stored events back. */
  private readonly events: StoredEvents;
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
  }

  /**
   * Runs a listing's statement. A search (`timed`) runs through the search guard (search-guard.ts):
   * with the time limit, on SQLite in a search thread (the statement was built with the deadline
   * check, see listingFrom), on PostgreSQL with `SET LOCAL statement_timeout`, so a slow search
   * neither holds the server's thread nor keeps a pooled connection for longer than the limit.
   */
  private async run<R = Row>(q: Runnable<R>, timed: boolean): Promise<R[]> {
    if (!timed) return (await q.execute()) as R[];
    return this.guard.search((read) => read(q.compile()));
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

  private select(withAttributes: boolean): Query {
    const q: Query = this.handle.db
      .selectFrom('builds')
      .select(['builds.id', 'builds.seq', 'builds.available_at', 'builds.tool_type', 'builds.tool_version', 'builds.agent_version', 'builds.project_name'])
      .where('builds.seq', 'is not', null)
      .$narrowType<{ seq: number; available_at: number }>();
    if (!withAttributes) return q;
    // Attributes live in build_attributes (store migration 0002); a correlated lookup by seq per
    // returned row, so it never changes how the search itself is planned. Rows written before
    // 0002 by another writer fall back to the column. Compressed (0008) or text: one value either
    // way (storedAttributes tells them apart); PostgreSQL needs one type, so it reads bytes.
    return q.select(this.dialect.attributesOfRow.as('attributes')) as Query;
  }

  /** The filtered, ordered query of a listing, without limit. */
  private async listing(options: Omit<ListBuildsOptions, 'maxBuilds'>): Promise<Query> {
    return (await this.listingFrom(options)).query;
  }

  /**
   * The listing's query, and the seq of `fromBuild` when given (where a page starts). A search
   * for a search thread (`run`) checks the deadline first in its WHERE clause, so that the check
   * runs for every row visited, before the query's terms; `inThread` false leaves it out.
   */
  private async listingFrom(options: Omit<ListBuildsOptions, 'maxBuilds'>, inThread = true, opaque = false): Promise<{ query: Query; fromSeq: number | undefined }> {
    let q = applyVisibility(this.select(options.withAttributes === true), options.visibility);
    const reverse = options.reverse === true;
    let fromSeq: number | undefined;
    if (options.fromBuild !== undefined) {
      if (!mayBeStored(options.fromBuild)) throw new UnknownBuildError(options.fromBuild);
      const from = await applyVisibility(this.select(false), options.visibility)
        .where('builds.id', '=', options.fromBuild)
        .executeTakeFirst();
      if (from !== undefined) fromSeq = Number((from as Row).seq);
      else {
        // A deleted build still marks its place: the listing goes on with the next available one.
        const deleted = await this.deletedBuild(options.fromBuild, options.visibility);
        if (deleted === undefined || deleted.seq === null) throw new UnknownBuildError(options.fromBuild);
        fromSeq = deleted.seq;
      }
      q = q.where('builds.seq', reverse ? '<' : '>', fromSeq);
    } else if (options.fromInstant !== undefined) {
      // Both databases keep instants as 64-bit integers; a larger number would be a database error.
      if (!Number.isSafeInteger(options.fromInstant) || options.fromInstant < 0) {
        throw new RangeError(`fromInstant must be epoch milliseconds between 0 and ${Number.MAX_SAFE_INTEGER}, got ${options.fromInstant}`);
      }
      // Oldest first from instant 0 is every available build: the condition would select them
      // all and still cost a row read per candidate (measured: project:bill* at 1M, 228 ms with it).
      if (reverse || options.fromInstant > 0) q = q.where('builds.available_at', reverse ? '<=' : '>=', options.fromInstant);
    }
    if (options.afterSeq !== undefined) q = q.where('builds.seq', '>', options.afterSeq);
    if (options.query !== undefined && options.query.kind !== 'all') {
      if (inThread && this.guard.deadlineCheck !== undefined) q = q.where(this.guard.deadlineCheck);
      // `opaque`: the condition as one test of each row visited, which no index answers, so that
      // the planner walks seq order (see pageFromWindows); exact child-row terms probed per build.
      const condition = compileQuery(options.query, this.dialect, { walk: opaque });
      q = q.where(opaque ? sql<SqlBool>`(${condition}) IS TRUE` : condition);
    }
    return { query: q.orderBy('builds.seq', reverse ? 'desc' : 'asc'), fromSeq };
  }

  async listBuilds(options: ListBuildsOptions): Promise<BuildWithAttributes[] | BuildSummary[]> {
    const max = options.maxBuilds === undefined ? undefined : Math.max(0, Math.floor(options.maxBuilds));
    // The posting planner follows the compiler's access plan (sql/access.ts).
    const split = max === undefined || max === 0 || this.postings === undefined || options.query === undefined ? undefined : exactTerms(options.query, accessPlan(options.query, this.dialect));
    const lists = split === undefined ? undefined : this.postings!.postings(split.exact);
    let rows: Row[];
    if (lists === undefined) {
      const query = await this.listing(options);
      rows = (max !== undefined && (await this.sortsEveryMatch(query, options, max)) ? await this.pageFromWindows(options, max) : undefined) ?? (await this.run(max === undefined ? query : query.limit(max), searches(options.query)));
    } else {
      // The candidates match the exact terms already: SQL checks the rest of the query.
      // (In this thread: the rest is checked per row on a chunk of candidates, see postings.ts.)
      const { query, fromSeq } = await this.listingFrom(split!.rest === undefined ? { ...options, query: undefined } : { ...options, query: split!.rest }, false);
      rows = await this.pageFromPostings(query, lists, fromSeq, options, max!);
    }
    const withAttributes = options.withAttributes === true;
    return rows.map((r) => toSummary(r, withAttributes)) as BuildWithAttributes[] | BuildSummary[];
  }

  /** Plans seen by sortsEveryMatch, by SQL text (the parameters do not change SQLite's choice of index). */
  private readonly sortedPlans = new Map<string, boolean>();

  /**
   * Whether SQLite's plan for this page of a search reads every match and sorts them to return the
   * first `max` (`USE TEMP B-TREE FOR ORDER BY`): a prefix (`project:inv*`) or an `or` of indexed
   * terms is collected through its indexes, out of seq order. Asked of the plan, once per SQL text.
   */
  private async sortsEveryMatch(query: Query, options: ListBuildsOptions, max: number): Promise<boolean> {
    const sqlite = this.handle.sqlite;
    if (sqlite === undefined || !searches(options.query) || max > WINDOW_PAGE_MAX) return false;
    if (options.fromInstant !== undefined && !(options.fromInstant === 0 && options.reverse !== true)) return false;
    const compiled = query.limit(max).compile();
    let sorts = this.sortedPlans.get(compiled.sql);
    if (sorts === undefined) {
      const plan = sqlite.prepare(`EXPLAIN QUERY PLAN ${compiled.sql}`).all(...(compiled.parameters as unknown[])) as { detail: string }[];
      sorts = plan.some((r) => /TEMP B-TREE FOR (RIGHT PART OF )?ORDER BY/.test(r.detail));
      if (this.sortedPlans.size >= 1000) this.sortedPlans.clear();
      this.sortedPlans.set(compiled.sql, sorts);
    }
    return sorts;
  }

  /**
   * A page of a search whose plan sorts every match (sortsEveryMatch), read newest first (or
   * oldest first) in windows of seq instead: the builds of the WINDOWS next seqs from where the
   * page starts, walked in seq order with the query tested on each row (`opaque`), stopping at the
   * page; then the next, larger window; then the plain query over what lies beyond the windows,
   * for the rest of the page. A window that fills the page holds its first builds, since every
   * build beyond it comes later in the order; one that does not has given all of its matches. So
   * the page is the plain query's. `project:inv*` newest first at 1M builds: a sort of ~100k
   * matches before, a walk of a few hundred rows now; a query that matches few builds pays the
   * windows' walks (~17k rows) on top of its plain plan. One search: one deadline for all.
   */
  private async pageFromWindows(options: ListBuildsOptions, max: number): Promise<Row[]> {
    const reverse = options.reverse === true;
    const { query: opaque, fromSeq } = await this.listingFrom(options, true, true);
    const { query: plain } = await this.listingFrom(options);
    // Two subqueries: SQLite answers a lone min() or max() with one seek of the index, both in
    // one select with a scan of it.
    const edges = (await sql<{ first: number | null; last: number | null }>`SELECT (SELECT min(seq) FROM builds) AS first, (SELECT max(seq) FROM builds) AS last`.execute(this.handle.db)).rows[0];
    if (edges?.first === null || edges?.first === undefined || edges.last === null) return [];
    const first = Number(edges.first);
    const last = Number(edges.last);
    // The first seq the page may hold, in its order.
    let at = reverse ? last : first;
    if (fromSeq !== undefined) at = reverse ? Math.min(at, fromSeq - 1) : Math.max(at, fromSeq + 1);
    if (options.afterSeq !== undefined && !reverse) at = Math.max(at, options.afterSeq + 1);
    return this.guard.search(async (read) => {
      const out: Row[] = [];
      for (const size of this.options.pageWindows ?? WINDOWS) {
        // This window: seqs from `at` over `size` seqs in the page's order.
        const end = reverse ? at - size : at + size;
        const window = reverse ? opaque.where('builds.seq', '<=', at).where('builds.seq', '>', end) : opaque.where('builds.seq', '>=', at).where('builds.seq', '<', end);
        out.push(...(await read(window.limit(max - out.length).compile())));
        if (out.length >= max) return out;
        at = end;
        if (reverse ? at < first : at > last) return out;
      }
      const beyond = reverse ? plain.where('builds.seq', '<=', at) : plain.where('builds.seq', '>=', at);
      out.push(...(await read(beyond.limit(max - out.length).compile())));
      return out;
    });
  }

  /**
   * A page whose query has exact terms: the builds in all of their posting bitmaps, in order, are
   * the candidates; `query` (the listing with the rest of the conjunction, the visibility and the
   * bounds) then reads them in growing chunks until the page is full. So the result is exactly
   * the SQL listing's.
   */
  private async pageFromPostings(query: Query, lists: readonly Postings[], fromSeq: number | undefined, options: ListBuildsOptions, max: number): Promise<Row[]> {
    const reverse = options.reverse === true;
    let first = reverse ? 0x7fffffff : 1;
    if (fromSeq !== undefined) first = reverse ? fromSeq - 1 : fromSeq + 1;
    if (options.afterSeq !== undefined && !reverse) first = Math.max(first, options.afterSeq + 1);
    if (fromSeq === undefined && options.fromInstant !== undefined && (reverse || options.fromInstant > 0)) {
      // Where builds available from that instant start (or, newest first, end) in seq order: a
      // bound only, SQL still checks the instant of every build.
      const edge = await this.handle.db
        .selectFrom('builds')
        .select(sql<number | null>`${sql.raw(reverse ? 'max' : 'min')}(seq)`.as('seq'))
        .where('builds.available_at', reverse ? '<=' : '>=', options.fromInstant)
        .executeTakeFirst();
      if (edge?.seq === null || edge?.seq === undefined) return [];
      first = reverse ? Math.min(first, Number(edge.seq)) : Math.max(first, Number(edge.seq));
    }
    const candidates = intersect(lists, first, reverse);
    const out: Row[] = [];
    // Every candidate is a match unless the rest of the query or the visibility turns it down:
    // read a page's worth first, and further ahead each time some were turned down.
    let chunk = max;
    for (;;) {
      const seqs: number[] = [];
      for (let c = candidates.next(); !c.done; c = candidates.next()) if (seqs.push(c.value) >= chunk) break;
      if (seqs.length === 0) return out;
      out.push(...(this.postings!.run(query.where('builds.seq', 'in', seqs).limit(max - out.length).compile()) as Row[]));
      if (out.length >= max || seqs.length < chunk) return out;
      chunk = Math.min(chunk * 4, 8000);
    }
  }

  async *streamBuilds(options: Omit<ListBuildsOptions, 'maxBuilds'>): AsyncIterable<BuildSummary> {
    const base = await this.listing(options);
    const reverse = options.reverse === true;
    const withAttributes = options.withAttributes === true;
    let cursor: number | undefined;
    for (;;) {
      // Keyset pagination on seq: each page is an index range scan, memory stays flat.
      const page = cursor === undefined ? base : base.where('builds.seq', reverse ? '<' : '>', cursor);
      const rows = await this.run(page.limit(PAGE), searches(options.query));
      for (const r of rows) yield toSummary(r, withAttributes);
      if (rows.length < PAGE) return;
      cursor = Number(rows[rows.length - 1]!.seq);
    }
  }

  async getBuild(id: string, visibility: Visibility, options: { withAttributes?: boolean } = {}): Promise<BuildWithAttributes | undefined> {
    if (!mayBeStored(id)) return undefined;
    const row = (await applyVisibility(this.select(true), visibility).where('builds.id', '=', id).executeTakeFirst()) as Row | undefined;
    if (row === undefined) return undefined;
    const b = toSummary(row, true) as BuildWithAttributes;
    return options.withAttributes === false ? ({ ...b, attributes: {} } as BuildWithAttributes) : b;
  }

  async buildState(id: string, visibility: Visibility): Promise<BuildState> {
    if (!mayBeStored(id)) return 'missing';
    const q = this.handle.db.selectFrom('builds').select(['builds.seq']).where('builds.id', '=', id) as Query;
    const row = (await applyVisibility(q, visibility).executeTakeFirst()) as { seq: number | null } | undefined;
    if (row === undefined) return 'missing';
    return row.seq === null ? 'incomplete' : 'available';
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
    const { query } = await this.listingFrom({ ...options, withAttributes: false });
    // A search like any other: off the server's thread on SQLite, with the time limit.
    const rows = await this.run<{ n: number | string }>(query.clearSelect().clearOrderBy().select(sql<number>`count(*)`.as('n')), options.query !== undefined);
    return Number(rows[0]?.n ?? 0);
  }

  async fieldValues(name: string, options: FieldValuesOptions): Promise<FieldValueCount[]> {
    const field = findField(name);
    if (field === undefined || !offersDataValues(field)) throw new RangeError(`Values from the data are offered for String fields without a fixed set of values, not for ${JSON.stringify(name)}`);
    const q = fieldValuesQuery(this.handle.db, this.dialect, field, options.prefix ?? '', options.limit ?? 20, visibilityCondition(options.visibility));
    // Bounded, but a read all the same: off the server's thread on SQLite, with the time limit.
    const rows = await this.run<{ value: string; count: number | string }>(q, true);
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
    return testReads(this.handle, this.guard);
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
