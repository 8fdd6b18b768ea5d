// Reading builds by query: the listing's statement (visibility, bounds, the compiled query, seq
// order), its pages (through the posting bitmaps, the analytics index's bitmap of the query, the
// windows of seq, or plain SQL), the stream of every match, and lookups by ID. Every search runs
// through the search guard (search-guard.ts).

import { sql, type CompiledQuery, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { DomainError } from '../../errors/domain.js';
import type { ToolType } from '../../query/catalog.js';
import type { CheckedExpr } from '../../query/checked.js';
import type { DatabaseHandle } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { accessPlan, compileQuery, type Dialect } from '../../sql/index.js';
import { storedAttributes } from '../events/event-codec.js';
import { mayBeStored } from '../events/stored-events.js';
import type { SearchGuard } from './search-guard.js';
import { exactTerms, intersect, type PostingCache, type Postings } from './postings.js';
import { textOf } from './packed-rows.js';
import { seesEverything, visibilityCondition } from './visibility.js';
import type { AggregateScope, BuildAttributes, BuildState, BuildSummary, BuildWithAttributes, DeletedBuild, ListBuildsOptions, Visibility } from '../types.js';

/**
 * The builds a query matches as a bitmap over seqs (visibility and time range applied), from memory
 * (the analytics index, store/analytics/analytics-index.ts); undefined when it cannot tell (past
 * its budget, or while it reads the stored builds).
 */
export interface MatchingBuilds {
  matching(scope: AggregateScope): Promise<Uint32Array | undefined>;
}

/** Whether a listing searches (runs a query), and so runs under the time limit. */
const searches = (query: CheckedExpr | undefined): boolean => query !== undefined && query.kind !== 'all';

/** `fromBuild` names a build that is not available or not visible to the caller. */
export class UnknownBuildError extends DomainError {
  readonly kind = 'invalid-parameter';
  constructor(readonly buildId: string) {
    super(`Unknown build ${JSON.stringify(buildId)}: no available build with this ID is visible`);
  }
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
export type Query = SelectQueryBuilder<Database, 'builds', Row>;

/** What `run` needs of a select statement. */
export interface Runnable<R> {
  execute(): Promise<R[]>;
  compile(): CompiledQuery<R>;
}

/** A listed build (available: seq and available_at are set). */
export interface Row {
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

/** The store's reads of builds by query and by ID. */
export class BuildListing {
  constructor(
    private readonly handle: DatabaseHandle,
    private readonly dialect: Dialect,
    private readonly guard: SearchGuard,
    /** The posting bitmaps, where builds become available in seq order (SQLite). */
    private readonly postings: PostingCache | undefined,
    /** Where a page starting at a deleted build goes on (prune.ts keeps their seqs). */
    private readonly deletedBuild: (id: string, visibility: Visibility) => Promise<DeletedBuild | undefined>,
    /** The windows of pageFromWindows, when not WINDOWS (tests). */
    private readonly pageWindows: readonly number[] | undefined,
    /** The analytics index, where the store has one: the candidates of a page of any query. */
    private readonly index: MatchingBuilds | undefined,
  ) {}

  /**
   * Runs a listing's statement. A search (`timed`) runs through the search guard (search-guard.ts):
   * with the time limit, on SQLite in a search thread (the statement was built with the deadline
   * check, see listingFrom), on PostgreSQL with `SET LOCAL statement_timeout`, so a slow search
   * neither holds the server's thread nor keeps a pooled connection for longer than the limit.
   */
  async run<R = Row>(q: Runnable<R>, timed: boolean): Promise<R[]> {
    if (!timed) return (await q.execute()) as R[];
    return this.guard.search((read) => read(q.compile()));
  }

  select(withAttributes: boolean): Query {
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
  async listing(options: Omit<ListBuildsOptions, 'maxBuilds'>): Promise<Query> {
    return (await this.listingFrom(options)).query;
  }

  /**
   * The listing's query, and the seq of `fromBuild` when given (where a page starts). A search
   * for a search thread (`run`) checks the deadline first in its WHERE clause, so that the check
   * runs for every row visited, before the query's terms; `inThread` false leaves it out.
   */
  async listingFrom(options: Omit<ListBuildsOptions, 'maxBuilds'>, inThread = true, opaque = false): Promise<{ query: Query; fromSeq: number | undefined }> {
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
    // The analytics index's matches first: it answers a term from the columns it holds or its own
    // term lists, where the posting cache reads a term's whole posting list from SQL on its first
    // use (tag:CI's first web page at a million builds: 2.1 s by the postings, docs/scaling.md).
    const matched = max === undefined || max === 0 || !searches(options.query) ? undefined : await this.index?.matching({ query: options.query!, visibility: options.visibility });
    let rows: Row[];
    if (matched !== undefined) {
      // Every build of the page is among the index's matches. SQL still checks the whole query
      // on each candidate, as one test of the row (`opaque`) so that the planner reads the
      // candidates by seq rather than the query's own indexes: the page is the SQL listing's.
      const { query, fromSeq } = await this.listingFrom(options, true, true);
      rows = await this.pageFromCandidates(query, [{ words: matched }], fromSeq, options, max!, (q) => this.run(q, true));
    } else {
      // The posting planner follows the compiler's access plan (sql/access.ts).
      const split = max === undefined || max === 0 || this.postings === undefined || options.query === undefined ? undefined : exactTerms(options.query, accessPlan(options.query, this.dialect));
      // A term's first read crosses from the search thread as one typed array of seqs.
      const lists = split === undefined ? undefined : await this.postings!.postings(split.exact, (q) => this.guard.search(async (_read, readPacked) => textOf((await readPacked(q, 1)).columns[0]!, 0)));
      if (lists !== undefined) {
        // The candidates match the exact terms already: SQL checks the rest of the query.
        // (In this thread: the rest is checked per row on a chunk of candidates, see postings.ts.)
        const { query, fromSeq } = await this.listingFrom(split!.rest === undefined ? { ...options, query: undefined } : { ...options, query: split!.rest }, false);
        rows = await this.pageFromCandidates(query, lists, fromSeq, options, max!, async (q) => this.postings!.run(q.compile()) as Row[]);
      } else {
        const query = await this.listing(options);
        rows = (max !== undefined && (await this.sortsEveryMatch(query, options, max)) ? await this.pageFromWindows(options, max) : undefined) ?? (await this.run(max === undefined ? query : query.limit(max), searches(options.query)));
      }
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
      for (const size of this.pageWindows ?? WINDOWS) {
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
   * A page from candidates: the builds in all of `lists` (bitmaps over seq: the posting bitmaps of
   * a query's exact terms, or the analytics index's matches), in order; `query` (the listing with
   * what the candidates do not answer for, the visibility and the bounds) then reads them through
   * `read` in growing chunks until the page is full. So the result is exactly the SQL listing's.
   */
  private async pageFromCandidates(query: Query, lists: readonly Postings[], fromSeq: number | undefined, options: ListBuildsOptions, max: number, read: (q: Query) => Promise<Row[]>): Promise<Row[]> {
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
      out.push(...(await read(query.where('builds.seq', 'in', seqs).limit(max - out.length))));
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
}
