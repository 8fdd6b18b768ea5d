// The build store over kysely, for SQLite and PostgreSQL (see docs/store.md). Visibility is
// applied in SQL by every listing and lookup; listings are ordered by `seq` (availability order).

import { sql, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Logger } from 'pino';
import type { ToolType } from '../query/catalog.js';
import type { DatabaseHandle } from '../db/database.js';
import { ingestNdjson, NOTIFY_CHANNEL } from './ingest.js';
import { decodeEvents } from './event-codec.js';
import { migrateStore } from './migrations.js';
import { reconcileCatalog } from './reconcile.js';
import { compileQuery } from '../sql/index.js';
import { migrateSearchIndexes, trigramBatch } from '../sql/indexes.js';
import { NewBuildSignal } from './notify.js';
import { PreparePool } from './prepare-pool.js';
import { deleteBuilds, deletedBuild, pruneCandidates } from './prune.js';
import { projectVisible } from './visibility.js';
import { PostingCache, exactTerms, intersect, type PostingCacheOptions, type Postings } from './postings.js';
import type {
  BuildAttributes,
  BuildEvent,
  BuildState,
  BuildStore,
  BuildSummary,
  BuildWithAttributes,
  DeletedBuild,
  ListBuildsOptions,
  PruneCandidate,
  PruneSelection,
  Visibility,
} from './types.js';

export interface BuildStoreOptions {
  /** Server clock (epoch ms) for `availableAt`; Date.now by default. */
  readonly clock?: () => number;
  readonly logger?: Logger;
  /**
   * In-memory posting bitmaps for pages of conjunctions of exact terms (postings.ts), SQLite only;
   * `false` turns them off. Default on, at most 64 MB.
   */
  readonly postings?: PostingCacheOptions | false;
  /**
   * Whether inputs longer than one batch are prepared (parsed, validated, derived) in a worker
   * thread while the previous batch is written (prepare-pool.ts). Default true; a PreparePool of
   * the caller's own is used as it is (and not closed with the store).
   */
  readonly ingestWorker?: boolean | PreparePool;
}

/** `fromBuild` names a build that is not available or not visible to the caller. */
export class UnknownBuildError extends Error {
  constructor(readonly buildId: string) {
    super(`Unknown build ${JSON.stringify(buildId)}: no available build with this ID is visible`);
    this.name = 'UnknownBuildError';
  }
}

export async function openBuildStore(handle: DatabaseHandle, options: BuildStoreOptions = {}): Promise<BuildStore> {
  await migrateStore(handle);
  await migrateSearchIndexes(handle);
  await reconcileCatalog(handle, options.logger);
  const store = new KyselyBuildStore(handle, options);
  if (handle.dialect === 'postgres' && handle.pool !== undefined) {
    await store.signal.listen(handle.pool.options, NOTIFY_CHANNEL);
  }
  return store;
}

const PAGE = 1000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Query = SelectQueryBuilder<any, 'builds', any>;

interface Row {
  id: string;
  seq: number | string;
  available_at: number | string;
  tool_type: string;
  tool_version: string;
  agent_version: string;
  project_name: string | null;
  attributes?: string;
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
  return { ...summary, attributes: JSON.parse(r.attributes ?? '{}') as BuildAttributes };
}

function applyVisibility(q: Query, v: Visibility): Query {
  if (v.projects === 'all') return v.withoutProject ? q : q.where('builds.project_name', 'is not', null);
  const projects = [...v.projects];
  if (projects.length === 0) return v.withoutProject ? q.where('builds.project_name', 'is', null) : q.where(sql<SqlBool>`1 = 0`);
  return q.where((eb) =>
    v.withoutProject
      ? eb.or([eb('builds.project_name', 'in', projects), eb('builds.project_name', 'is', null)])
      : eb('builds.project_name', 'in', projects),
  );
}

class KyselyBuildStore implements BuildStore {
  readonly signal: NewBuildSignal;
  private readonly clock: () => number;

  private readonly postings: PostingCache | undefined;
  private readonly pool: PreparePool | undefined;

  constructor(
    private readonly handle: DatabaseHandle,
    private readonly options: BuildStoreOptions,
  ) {
    this.clock = options.clock ?? Date.now;
    this.postings = handle.sqlite !== undefined && options.postings !== false ? new PostingCache(handle.sqlite, handle.db, options.postings) : undefined;
    this.signal = new NewBuildSignal(() => this.latestSeq(), options.logger);
    const w = options.ingestWorker;
    this.pool = w === false ? undefined : w === undefined || w === true ? new PreparePool(options.logger) : w;
  }

  ingestNdjson: BuildStore['ingestNdjson'] = (input, options) =>
    ingestNdjson(
      { handle: this.handle, clock: this.clock, onAvailable: (s) => this.signal.signal(s), trigram: trigramBatch, ...(this.pool ? { pool: this.pool } : {}) },
      input,
      options,
    );

  private select(withAttributes: boolean): Query {
    const cols = ['builds.id', 'builds.seq', 'builds.available_at', 'builds.tool_type', 'builds.tool_version', 'builds.agent_version', 'builds.project_name'];
    const q = this.handle.db.selectFrom('builds').select(cols as never).where('builds.seq', 'is not', null);
    if (!withAttributes) return q;
    // Attributes live in build_attributes (store migration 0002); a correlated lookup by seq per
    // returned row, so it never changes how the search itself is planned. Rows written before
    // 0002 by another writer fall back to the column.
    return q.select(sql<string>`coalesce((SELECT a.attributes FROM build_attributes AS a WHERE a.seq = builds.seq), builds.attributes)`.as('attributes')) as Query;
  }

  /** The filtered, ordered query of a listing, without limit. */
  private async listing(options: Omit<ListBuildsOptions, 'maxBuilds'>): Promise<Query> {
    return (await this.listingFrom(options)).query;
  }

  /** The listing's query, and the seq of `fromBuild` when given (where a page starts). */
  private async listingFrom(options: Omit<ListBuildsOptions, 'maxBuilds'>): Promise<{ query: Query; fromSeq: number | undefined }> {
    let q = applyVisibility(this.select(options.withAttributes === true), options.visibility);
    const reverse = options.reverse === true;
    let fromSeq: number | undefined;
    if (options.fromBuild !== undefined) {
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
      q = q.where('builds.available_at', reverse ? '<=' : '>=', options.fromInstant);
    }
    if (options.afterSeq !== undefined) q = q.where('builds.seq', '>', options.afterSeq);
    if (options.query !== undefined && options.query.kind !== 'all') {
      q = q.where(compileQuery(options.query, this.handle.dialect));
    }
    return { query: q.orderBy('builds.seq', reverse ? 'desc' : 'asc'), fromSeq };
  }

  async listBuilds(options: ListBuildsOptions): Promise<BuildWithAttributes[] | BuildSummary[]> {
    const max = options.maxBuilds === undefined ? undefined : Math.max(0, Math.floor(options.maxBuilds));
    const split = max === undefined || max === 0 || this.postings === undefined ? undefined : exactTerms(options.query);
    const lists = split === undefined ? undefined : this.postings!.postings(split.exact);
    let rows: Row[];
    if (lists === undefined) {
      const query = await this.listing(options);
      rows = (await (max === undefined ? query : query.limit(max)).execute()) as Row[];
    } else {
      // The candidates match the exact terms already: SQL checks the rest of the query.
      const { query, fromSeq } = await this.listingFrom(split!.rest === undefined ? { ...options, query: undefined } : { ...options, query: split!.rest });
      rows = await this.pageFromPostings(query, lists, fromSeq, options, max!);
    }
    const withAttributes = options.withAttributes === true;
    return rows.map((r) => toSummary(r, withAttributes)) as BuildWithAttributes[] | BuildSummary[];
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
    if (fromSeq === undefined && options.fromInstant !== undefined) {
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
      const rows = (await page.limit(PAGE).execute()) as Row[];
      for (const r of rows) yield toSummary(r, withAttributes);
      if (rows.length < PAGE) return;
      cursor = Number(rows[rows.length - 1]!.seq);
    }
  }

  async getBuild(id: string, visibility: Visibility, options: { withAttributes?: boolean } = {}): Promise<BuildWithAttributes | undefined> {
    const row = (await applyVisibility(this.select(true), visibility).where('builds.id', '=', id).executeTakeFirst()) as Row | undefined;
    if (row === undefined) return undefined;
    const b = toSummary(row, true) as BuildWithAttributes;
    return options.withAttributes === false ? ({ ...b, attributes: {} } as BuildWithAttributes) : b;
  }

  async buildState(id: string, visibility: Visibility): Promise<BuildState> {
    const q = this.handle.db.selectFrom('builds').select(['builds.seq']).where('builds.id', '=', id) as Query;
    const row = (await applyVisibility(q, visibility).executeTakeFirst()) as { seq: number | null } | undefined;
    if (row === undefined) return 'missing';
    return row.seq === null ? 'incomplete' : 'available';
  }

  async *streamEvents(id: string, options: { eventTypes?: readonly string[] } = {}): AsyncIterable<BuildEvent> {
    const types = options.eventTypes === undefined ? undefined : new Set(options.eventTypes);
    let chunk = -1;
    for (;;) {
      const rows = await this.handle.db
        .selectFrom('build_events')
        .select(['chunk', 'events'])
        .where('build_id', '=', id)
        .where('chunk', '>', chunk)
        .orderBy('chunk')
        .limit(50)
        .execute();
      for (const r of rows) {
        for (const e of decodeEvents(r.events as string)) {
          if (types === undefined || types.has(e.type.eventType)) yield e;
        }
        chunk = Number(r.chunk);
      }
      if (rows.length < 50) return;
    }
  }

  async deleteBuilds(selection: PruneSelection, limit: number): Promise<readonly PruneCandidate[]> {
    const candidates = await pruneCandidates(this.handle.db, selection, limit);
    const gone = await deleteBuilds(this.handle, candidates, this.clock());
    this.postings?.forget(gone.flatMap((g) => (g.seq === null ? [] : [g.seq])));
    return gone;
  }

  async deletedBuild(id: string, visibility: Visibility): Promise<DeletedBuild | undefined> {
    const d = await deletedBuild(this.handle.db, id);
    // Only to callers who could have seen the build: to others it never existed.
    return d !== undefined && projectVisible(visibility, d.project) ? d : undefined;
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

  async close(): Promise<void> {
    await this.signal.close();
    if (this.pool !== this.options.ingestWorker) await this.pool?.close();
  }
}
