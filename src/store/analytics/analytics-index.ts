// The analytics index: the count, the facets and the trends of any query from memory,
// instead of reading every matching build again for each request.
//
// Why: at a million builds the facets of `tag:CI` read ~556k wide rows of `builds` by seq (1.2-5 s
// whatever the statement's shape), and a count of a term SQLite has no single index range for
// visits every candidate. Here each build's facet values are held once, by seq, as dictionary ids
// (four columns of 4 bytes, its start time, its tags and requested tasks): 37-50 bytes a build,
// 40-50 MB at 1M. A query becomes a bitmap over seqs: each term's bitmap is read once by SQL
// (`SELECT seq ... WHERE <the term>`, the compiler's own condition, so the answer is the
// compiler's) or from the values held (fromColumns) and kept, and the
// query's and/or/not are word-wise operations on them. The count is the matching bits; the facets
// count the matching builds' ids, a few milliseconds for a million.
//
// Trends need more of each build: its duration, its task counts by outcome (`build_task_counts`)
// and the tasks that ran (`build_tasks` rows of outcome executed or failed: path, failed or not,
// duration), ~46 more bytes a demo build (90 MB in all at 1M). The direct SQL trend reads the
// matching builds and their tasks again for every request (10 s for `tag:CI` at 1M); here they are
// summed from memory, 30-200 ms.
//
// Kept in step with the store: builds never change once available and seqs only grow, committed in
// seq order (`commitsInSeqOrder` of sql/dialect-hooks.ts, on both databases), so the columns and
// every term's bitmap are extended with the builds above the last seq read. A deletion clears the build's bit in `available`, the bitmap every
// answer is intersected with: here at once for this process's deletions (`forget`), and for
// another process's (`buildscope prune`, or another server on the same PostgreSQL database) by comparing the number of available
// bits with the exact number of available builds of the all-time rollup rows, read in the same
// statement as the latest seq: when they differ, the index is read again from the start.
//
// Every read is a statement of the caller's search (the search threads, the time limit); what a
// read that timed out had loaded stays, so the next search goes on from there.

import { setImmediate as turn } from 'node:timers/promises';
import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import type { Logger } from 'pino';
import type { CheckedExpr } from '../../query/checked.js';
import { assertNever } from '../../query/assert.js';
import type { Database } from '../../db/schema.js';
import { childListSeqs, compileQuery, type Dialect } from '../../sql/index.js';
import { matchPattern } from '../../query/evaluate.js';
import type { Predicate } from '../../query/checked.js';
import { boundsOf, withinBounds } from '../../sql/bounds.js';
import { valueFieldCode } from '../../sql/value-fields.js';
import { numbersOf, textOf, type PackedRows } from '../search/packed-rows.js';
import { Dictionary, HeldValues, idsOf } from './held-values.js';
import { seqCount } from '../search/seq-set.js';
import { SEQS_AS_TEXT, setSeqBits } from '../search/postings.js';
import { columnIndexName } from '../../sql/indexes.js';
import { LISTING_INDEX, TREND_INDEX } from '../schema/migrations.js';
import { layoutOf, type StoreLayout } from '../schema/layout.js';
import { ALL_TIME, BUILD_ROLLUPS } from './rollups.js';
import type { PathRow, PeriodRow, TrendRows } from './rollups-query.js';
import { TASK_COUNT_COLUMNS, TASK_OUTCOME_CODES } from '../events/tasks.js';
import { grow, SmallNumbers } from './small-numbers.js';
import { bucketOf, HISTOGRAM_BUCKETS, keepPlanned, percentilesOfPlan, planPercentiles } from './duration-percentiles.js';
import { TaskBlocks, type Picked, type TaskColumns } from './task-blocks.js';
import { VALUES_SEQ_INDEX } from '../../sql/layout.js';
import type { GuardedSearch, ReadPacked, ReadRows } from '../search/search-guard.js';
import type { AggregateScope, FacetValue, Facets, Visibility } from '../types.js';

export interface AnalyticsIndexOptions {
  /** Bytes the columns may take (about 90 a demo build); a store past it is answered by SQL. Default 256 MiB. */
  readonly maxBytes?: number;
  /** Bytes of term bitmaps kept (a bit a build each); the least recently used go first. Default 64 MiB. */
  readonly maxTermBytes?: number;
  /**
   * New builds past which their columns are read from whole narrow indexes (see load), in the
   * background (see catchUp). Default 20,000.
   */
  readonly wideReadBuilds?: number;
  /** Where the layout reads many builds in ranges of seq (PostgreSQL): the builds of a range, instead of the layout's. */
  readonly seqRangeBuilds?: number;
  /** Seqs of a block of task sums as a power of two (task-blocks.ts), at most 30; 0 sums every build's tasks by itself. Default 12: 4,096. */
  readonly blockShift?: number;
  readonly logger?: Pick<Logger, 'info' | 'warn'>;
}

/** The time limit of a catch-up (see catchUp). */
const CATCH_UP_MS = 30 * 60_000;

/** Terms whose new matches one statement reads. */
const TERMS_PER_READ = 50;
/**
 * The multi-valued fields of every tool whose values the index holds (HeldValues), by their
 * column: the tags for the facets and their terms, the requested tasks for their terms. Both are
 * a few dozen distinct values in ~1.3-1.9 rows a demo build; a term on either read by SQL on its
 * first use at a million builds took 0.1-2 s (`requested:*test*`: 215k builds).
 */
const MULTI_FIELDS = ['tag', 'requested'] as const;
type MultiField = (typeof MULTI_FIELDS)[number];
/**
 * Bytes a build takes in the columns, its values and tasks aside: four ids, the start time, the
 * offsets of its values (one per field of MULTI_FIELDS); for the trends its duration, its five
 * task counts and its tasks' offset.
 */
const BYTES_PER_BUILD = 4 * 4 + 8 + 4 * MULTI_FIELDS.length + 8 + TASK_COUNT_COLUMNS.length + 4;
/** Bytes of a task that ran: its path and whether it failed, its duration. */
const BYTES_PER_TASK = 4 + 4;
/** Builds whose task rows one statement reads: ~3.6 rows each in the demo data, a few MB a read. */
const TASK_READ_BUILDS = 100_000;

/** The index of the period holding t (periods starting at `starts`, t at or after the first). */
function periodOf(starts: Float64Array, t: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Counts the builds seqs[from..to) into their periods (`periods[k]`): builds, succeeded, failed,
 * the known durations, and those by bucket (duration-percentiles.ts) (periodRows).
 */
function countPeriods(
  seqs: Uint32Array,
  periods: Uint32Array,
  from: number,
  to: number,
  columns: { readonly outcome: Uint32Array; readonly duration: Float64Array; readonly ok: number; readonly bad: number },
  into: { readonly builds: Uint32Array; readonly succeeded: Uint32Array; readonly failed: Uint32Array; readonly known: Uint32Array; readonly histogram: Uint32Array },
): void {
  const { outcome, duration, ok, bad } = columns;
  const { builds, succeeded, failed, known, histogram } = into;
  for (let k = from; k < to; k++) {
    const s = seqs[k]!;
    const i = periods[k]!;
    builds[i]!++;
    if (outcome[s] === ok) succeeded[i]!++;
    else if (outcome[s] === bad) failed[i]!++;
    const d = duration[s]!;
    if (Number.isNaN(d)) continue;
    known[i]!++;
    histogram[i * HISTOGRAM_BUCKETS + bucketOf(d)]!++;
  }
}

/** Builds a trend's pass reads between two turns of the event loop (periodRows, taskRows). */
const YIELD_BUILDS = 32_768;

/** The facet fields held, in the order of their columns. */
const FIELDS = ['buildOutcome', 'buildTool', 'project', 'user'] as const;

/**
 * The search fields' columns whose values the index holds, by the facet field that holds them: the
 * very columns for `buildoutcome` and `user`; for `project` and `buildtool`, the lower-cased form
 * (store/events/derive.ts) of the `project_name` and `tool_type` held for the facets, which the
 * search language's matcher compares as it lower-cases both sides (query/evaluate.ts).
 */
const HELD_COLUMNS: Readonly<Record<string, (typeof FIELDS)[number] | undefined>> = { buildoutcome: 'buildOutcome', user: 'user', project: 'project', buildtool: 'buildTool' };
/** Where a column read goes: a facet field's ids, or the start times or durations. */
type Target = (typeof FIELDS)[number] | 'start' | 'duration';

interface TermList {
  words: Uint32Array;
  upTo: number;
}

export class AnalyticsIndex {
  private readonly maxBytes: number;
  private readonly maxTermBytes: number;
  private readonly wideReadBuilds: number;
  private upTo = 0;
  /** The ID of the build at seq upTo when it was read (refresh). */
  private upToId: string | undefined;
  private available = new Uint32Array(0);
  private availableCount = 0;
  private readonly dictionaries = { buildOutcome: new Dictionary(), buildTool: new Dictionary(), project: new Dictionary(), user: new Dictionary() };
  private columns = { buildOutcome: new Uint32Array(0), buildTool: new Uint32Array(0), project: new Uint32Array(0), user: new Uint32Array(0) };
  private start = new Float64Array(0);
  /** The values of the multi-valued fields of MULTI_FIELDS, by seq. */
  private readonly multi: Readonly<Record<MultiField, HeldValues>> = { tag: new HeldValues(), requested: new HeldValues() };
  /** Build durations by seq (NaN: none). */
  private duration = new Float64Array(0);
  /** Task counts of seq s, in TASK_COUNT_COLUMNS order: at s * 5 + k. */
  private readonly taskCounts = new SmallNumbers(new Uint8Array(0));
  /** The tasks that ran of seq s: taskKeys/taskDurations[taskStart[s] .. taskStart[s + 1]). */
  private taskStart = new Uint32Array(1);
  /** A task's path (its index in taskPaths) times two, plus one when it failed. */
  private taskKeys = new Uint32Array(0);
  private readonly taskDurations = new SmallNumbers(new Uint32Array(0));
  private taskCount = 0;
  /** Task paths by index; `taskPathIndex` maps a task_paths id to it. */
  private readonly taskPaths: string[] = [];
  private readonly taskPathIndex = new Map<number, number>();
  private readonly terms = new Map<string, TermList>();
  private termBytes = 0;
  /** The tasks' sums by block of seqs (task-blocks.ts), summed on first use. */
  private readonly taskBlocks: TaskBlocks;
  /** The search being answered (see match), or the catch-up. */
  private busy: Promise<unknown> = Promise.resolve();
  private catchingUp = false;
  private closed = false;
  private readonly logger: Pick<Logger, 'info' | 'warn'> | undefined;
  private readonly layout: StoreLayout;
  private readonly seqRangeBuilds: number | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly guard: GuardedSearch,
    options: AnalyticsIndexOptions = {},
  ) {
    this.maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
    this.maxTermBytes = options.maxTermBytes ?? 64 * 1024 * 1024;
    this.wideReadBuilds = options.wideReadBuilds ?? 20_000;
    this.logger = options.logger;
    this.layout = layoutOf(dialect.name);
    this.seqRangeBuilds = options.seqRangeBuilds;
    this.taskBlocks = new TaskBlocks(options.blockShift ?? 12, YIELD_BUILDS);
  }

  /** The number of the scope's builds, or undefined when the store is past the index's budget. */
  count(scope: AggregateScope): Promise<number | undefined> {
    return this.guard.search(async (read, readPacked) => {
      const match = await this.match(scope, read, readPacked);
      if (match === undefined) return undefined;
      let n = 0;
      this.eachBuild(match, scope, () => void n++);
      return n;
    });
  }

  /**
   * The scope's builds as a bitmap over seqs, or undefined when past the budget or while the
   * builds are read: the candidates of a listing's page (search/listing.ts, which checks each
   * by SQL again).
   */
  matching(scope: AggregateScope): Promise<Uint32Array | undefined> {
    return this.guard.search(async (read, readPacked) => {
      const match = await this.match(scope, read, readPacked);
      if (match === undefined) return undefined;
      const out = new Uint32Array(match.length);
      this.eachBuild(match, scope, (seq) => (out[seq >>> 5] = out[seq >>> 5]! | (1 << (seq & 31))));
      return out;
    });
  }

  /** The facets of the scope's builds (as analytics.ts's buildFacets), or undefined when past the budget. */
  facets(scope: AggregateScope, limit: number): Promise<Facets | undefined> {
    return this.guard.search(async (read, readPacked) => {
      const match = await this.match(scope, read, readPacked);
      if (match === undefined) return undefined;
      const counts = FIELDS.map((f) => new Uint32Array(this.dictionaries[f].values.length));
      const columns = FIELDS.map((f) => this.columns[f]);
      const heldTags = this.multi.tag;
      const tags = new Uint32Array(heldTags.dictionary.values.length);
      this.eachBuild(match, scope, (seq) => {
        for (let f = 0; f < columns.length; f++) counts[f]![columns[f]![seq]!]!++;
        heldTags.countInto(seq, tags);
      });
      const top = (c: Uint32Array, d: Dictionary): FacetValue[] => {
        const out: FacetValue[] = [];
        // Id 0 is null: no value, not counted (as SQL's IS NOT NULL).
        for (let id = 1; id < c.length; id++) if (c[id]! > 0) out.push({ value: d.values[id]!, count: c[id]! });
        // Most frequent first, ties by value in SQLite's order (the bytes of UTF-8).
        out.sort((a, b) => b.count - a.count || Buffer.compare(Buffer.from(a.value), Buffer.from(b.value)));
        return out.slice(0, limit);
      };
      const [buildOutcome, buildTool, project, user] = FIELDS.map((f, i) => top(counts[i]!, this.dictionaries[f]));
      return { buildOutcome: buildOutcome!, buildTool: buildTool!, project: project!, user: user!, tag: top(tags, heldTags.dictionary) };
    });
  }

  /**
   * The rows of a trend over `periods` (as the direct path's, analytics.ts) of the scope's
   * builds, or undefined when past the budget or while the builds are read. The scope's own time
   * range is replaced by the periods', as in SQL.
   */
  trendRows(scope: AggregateScope, periods: readonly { readonly start: number; readonly end: number }[]): Promise<TrendRows | undefined> {
    const ranged: AggregateScope = { ...scope, startFrom: periods[0]!.start, startTo: periods[periods.length - 1]!.end };
    return this.guard.search(async (read, readPacked) => {
      const match = await this.match(ranged, read, readPacked);
      if (match === undefined) return undefined;
      // Each pass over the matched builds is tens of milliseconds at a million: the server's other
      // requests get a turn between them (and within the longest, pathRows).
      await turn();
      const picked = this.pick(match, ranged, Float64Array.from(periods, (p) => p.start));
      await turn();
      const periodRows = await this.periodRows(picked, periods.length);
      await turn();
      const { tasks, paths } = await this.taskRows(picked, periods.length);
      return { periods: periodRows, tasks, paths };
    });
  }

  /** The builds of `match` the scope keeps, each with its period. */
  private pick(match: Uint32Array, scope: AggregateScope, starts: Float64Array): Picked {
    const seqs = new Uint32Array(seqCount(match));
    const periods = new Uint32Array(seqs.length);
    const start = this.start;
    let n = 0;
    this.eachBuild(match, scope, (seq) => {
      seqs[n] = seq;
      periods[n++] = periodOf(starts, start[seq]!);
    });
    return { seqs: seqs.subarray(0, n), periods: periods.subarray(0, n) };
  }

  /**
   * Builds, outcomes and nearest-rank duration percentiles per period with builds: the smallest
   * duration d such that at least p% of the period's known durations are <= d.
   */
  private async periodRows({ seqs, periods }: Picked, n: number): Promise<Map<number, PeriodRow>> {
    const builds = new Uint32Array(n);
    const succeeded = new Uint32Array(n);
    const failed = new Uint32Array(n);
    const known = new Uint32Array(n);
    const histogram = new Uint32Array(n * HISTOGRAM_BUCKETS);
    const outcome = this.columns.buildOutcome;
    const duration = this.duration;
    // As SQL's `buildoutcome = 'succeeded'`: the exact text.
    const ok = this.dictionaries.buildOutcome.find('succeeded');
    const bad = this.dictionaries.buildOutcome.find('failed');
    // Turns of the event loop within the passes too: the two passes and the percentiles of a
    // million builds took 80-120 ms in one run (-user:bot's 30 days), which the server's other
    // requests waited. Each part between two turns is one call of a plain function
    // (countPeriods, keepPlanned).
    for (let from = 0; from < seqs.length; from += YIELD_BUILDS) {
      if (from > 0) await turn();
      countPeriods(seqs, periods, from, Math.min(from + YIELD_BUILDS, seqs.length), { outcome, duration, ok, bad }, { builds, succeeded, failed, known, histogram });
    }
    // The percentiles: the buckets holding each period's ranks, then only their durations.
    const plan = planPercentiles(histogram, known, n);
    const kept = new Float64Array(plan.start[n * 4]!);
    const next = plan.start.slice(0, n * 4);
    for (let from = 0; from < seqs.length; from += YIELD_BUILDS) {
      await turn();
      keepPlanned(seqs, periods, from, Math.min(from + YIELD_BUILDS, seqs.length), duration, plan, kept, next);
    }
    const out = new Map<number, PeriodRow>();
    for (let i = 0; i < n; i++) {
      if (builds[i] === 0) continue;
      out.set(i, { builds: builds[i]!, succeeded: succeeded[i]!, failed: failed[i]!, percentiles: known[i] === 0 ? null : percentilesOfPlan(plan, kept, i) });
    }
    return out;
  }

  /**
   * The task rows of a trend: the builds' task counts summed per period with builds (in
   * TASK_COUNT_COLUMNS order), and the runs, failures, mean and longest duration of every task
   * path that ran in the builds (task-blocks.ts). Paths that never ran are in neither top-ten list,
   * so they are left out; the mean is the same double as SQL's avg().
   */
  private async taskRows(picked: Picked, n: number): Promise<{ tasks: Map<number, number[]>; paths: PathRow[] }> {
    const width = TASK_COUNT_COLUMNS.length;
    const { counts, seen, runs, failures, sum, max } = await this.taskBlocks.sums(this.taskColumns(), this.upTo, picked, n);
    const tasks = new Map<number, number[]>();
    for (let i = 0; i < n; i++) if (seen[i] === 1) tasks.set(i, Array.from(counts.subarray(i * width, (i + 1) * width)));
    const out: PathRow[] = [];
    for (let p = 0; p < runs.length; p++) if (runs[p]! > 0) out.push({ path: this.taskPaths[p]!, runs: runs[p]!, failures: failures[p]!, mean: sum[p]! / runs[p]!, mx: max[p]! });
    return { tasks, paths: out };
  }

  private taskColumns(): TaskColumns {
    return { available: this.available, taskStart: this.taskStart, taskKeys: this.taskKeys, taskDurations: this.taskDurations, taskCounts: this.taskCounts, paths: this.taskPaths.length };
  }

  /** Builds this process deleted: out of every answer at once. */
  forget(seqs: readonly number[]): void {
    for (const s of seqs) {
      const w = s >>> 5;
      const bit = 1 << (s & 31);
      if (w < this.available.length && (this.available[w]! & bit) !== 0) {
        this.available[w] = this.available[w]! & ~bit;
        this.availableCount--;
        this.taskBlocks.drop(s);
      }
    }
  }

  /** Calls `f` with the seq of each build of `match` that the scope's visibility and time range keep. */
  private eachBuild(match: Uint32Array, scope: AggregateScope, f: (seq: number) => void): void {
    const visible = this.visibleProjects(scope.visibility);
    const project = this.columns.project;
    const start = this.start;
    const from = scope.startFrom ?? -Infinity;
    const to = scope.startTo ?? Infinity;
    const ranged = scope.startFrom !== undefined || scope.startTo !== undefined;
    for (let w = 0; w < match.length; w++) {
      let x = match[w]!;
      while (x !== 0) {
        const low = x & -x;
        x ^= low;
        const seq = w * 32 + 31 - Math.clz32(low);
        if (visible !== undefined && visible[project[seq]!] === 0) continue;
        // A build without a start time (NaN) is outside every range, as in SQL.
        if (ranged && !(start[seq]! >= from && start[seq]! < to)) continue;
        f(seq);
      }
    }
  }

  /** Per project id, 1 when the caller sees its builds; undefined when the caller sees every build. */
  private visibleProjects(v: Visibility): Uint8Array | undefined {
    if (v.projects === 'all' && v.withoutProject) return undefined;
    const names = this.dictionaries.project.values;
    const listed = v.projects === 'all' ? undefined : new Set(v.projects);
    return Uint8Array.from(names, (name, id) => (id === 0 ? (v.withoutProject ? 1 : 0) : listed === undefined || listed.has(name) ? 1 : 0));
  }

  /**
   * The bitmap of the available builds the query matches, or undefined past the budget. One at a
   * time: a search that arrives meanwhile waits, then goes on from what this one read.
   */
  private match(scope: AggregateScope, read: ReadRows, readPacked: ReadPacked): Promise<Uint32Array | undefined> {
    // While the columns are read in the background, searches read the database.
    if (this.catchingUp) return Promise.resolve(undefined);
    const done = this.busy.then(() => this.matchNow(scope, read, readPacked));
    this.busy = done.catch(() => undefined);
    return done;
  }

  private async matchNow(scope: AggregateScope, read: ReadRows, readPacked: ReadPacked): Promise<Uint32Array | undefined> {
    const latest = await this.refresh(read, readPacked, false);
    if (latest === undefined) return undefined;
    const query = scope.query ?? { kind: 'all', span: { start: 0, end: 0 } };
    const terms = new Map<string, CheckedExpr>();
    collectTerms(query, terms);
    await this.extendTerms(terms, latest, readPacked);
    this.evictTerms(terms);
    const n = this.available.length;
    const bitmap = (e: CheckedExpr): Uint32Array => {
      switch (e.kind) {
        case 'all':
          return this.available.slice();
        case 'term': {
          const words = this.terms.get(termKey(e))!.words;
          const out = new Uint32Array(n);
          out.set(words.length > n ? words.subarray(0, n) : words);
          return out;
        }
        case 'and': {
          const [first, ...rest] = e.operands.map(bitmap);
          for (const b of rest) for (let w = 0; w < n; w++) first![w] = first![w]! & b[w]!;
          return first ?? this.available.slice();
        }
        case 'or': {
          const out = new Uint32Array(n);
          for (const b of e.operands.map(bitmap)) for (let w = 0; w < n; w++) out[w] = out[w]! | b[w]!;
          return out;
        }
        case 'not': {
          const b = bitmap(e.operand);
          for (let w = 0; w < n; w++) b[w] = this.available[w]! & ~b[w]!;
          return b;
        }
        default:
          return assertNever(e, 'expression');
      }
    };
    const out = bitmap(query);
    // A term's bitmap may still hold builds deleted since it was read.
    for (let w = 0; w < n; w++) out[w] = out[w]! & this.available[w]!;
    return out;
  }

  /**
   * Reads the builds above the last seq read; the latest seq, or undefined past the budget. Reads
   * everything again when the available builds are not those counted by the rollups (another
   * process deleted some).
   */
  private async refresh(read: ReadRows, readPacked: ReadPacked, catchingUp: boolean): Promise<number | undefined> {
    for (let attempt = 0; attempt < 2; attempt++) {
      // The build IDs at the newest seq and at the last one read: a seq that now holds another
      // build than the one read (deleted from the top and used again, as SQLite does once every
      // build is gone) makes the columns stale even where the number of builds agrees.
      const head = await read(
        sql<{ latest: number | string; total: number | string; latest_id: string | null; read_id: string | null }>`SELECT
          coalesce((SELECT max(seq) FROM builds), 0) AS latest,
          coalesce((SELECT sum(builds) FROM ${sql.raw(BUILD_ROLLUPS)} WHERE lvl = ${sql.lit(ALL_TIME)} AND t = 0), 0) AS total,
          (SELECT b.id FROM builds AS b WHERE b.seq = (SELECT max(seq) FROM builds)) AS latest_id,
          (SELECT b.id FROM builds AS b WHERE b.seq = ${this.upTo}) AS read_id`.compile(this.db),
      );
      const latest = Number(head[0]!.latest);
      const total = Number(head[0]!.total);
      const readId = head[0]!.read_id ?? undefined;
      if (readId !== undefined && this.upToId !== undefined && readId !== this.upToId) {
        this.reset();
        continue;
      }
      if (latest * BYTES_PER_BUILD + this.heldValues() * 4 + this.taskCount * BYTES_PER_TASK > this.maxBytes) {
        this.reset();
        return undefined;
      }
      if (latest - this.upTo > this.wideReadBuilds && !catchingUp) {
        this.catchUp();
        return undefined;
      }
      if (this.upTo < latest) await this.load(latest, readPacked);
      this.upToId = head[0]!.latest_id ?? undefined;
      if (this.availableCount === total) return latest;
      this.reset();
    }
    return undefined;
  }

  /**
   * Reads the columns of every build not read yet, in the background, without the search time
   * limit: at a million builds that takes seconds (more on a busy machine), and within a search it
   * would end every search in the limit until one finished it. The server starts it when it
   * opens the store; searches start it when many builds are missing (the first use, or after
   * another process deleted builds). Meanwhile they read the database, as without the index.
   */
  catchUp(): void {
    if (this.catchingUp) return;
    this.catchingUp = true;
    const started = Date.now();
    const done = this.busy
      .then(() => this.guard.search((read, readPacked) => this.refresh(read, readPacked, true), { timeoutMs: CATCH_UP_MS }))
      .then(
        (latest) => this.logger?.info({ builds: this.availableCount, latest, ms: Date.now() - started, bytes: this.bytes() }, 'The analytics index has read the stored builds'),
        (e: unknown) => {
          if (!this.closed) this.logger?.warn({ err: e }, 'The analytics index could not read the stored builds; counts, facets and trends read the database');
        },
      )
      .finally(() => (this.catchingUp = false));
    this.busy = done;
  }

  /** Resolves when no search or catch-up is under way (tests: after catchUp). */
  async settled(): Promise<void> {
    await this.busy;
  }

  /** The store closes: a catch-up cut short by it is not a failure worth a warning. */
  close(): void {
    this.closed = true;
  }

  /** What the columns and term bitmaps take, in bytes. */
  private bytes(): number {
    const trends = this.duration.byteLength + this.taskCounts.data.byteLength + this.taskStart.byteLength + this.taskKeys.byteLength + this.taskDurations.data.byteLength;
    return FIELDS.reduce((n, f) => n + this.columns[f].byteLength, 0) + this.start.byteLength + MULTI_FIELDS.reduce((n, f) => n + this.multi[f].bytes, 0) + this.available.byteLength + this.termBytes + trends + this.taskBlocks.bytes;
  }

  private reset(): void {
    this.upTo = 0;
    this.upToId = undefined;
    this.available = new Uint32Array(0);
    this.availableCount = 0;
    for (const f of MULTI_FIELDS) this.multi[f].clear();
    this.taskCount = 0;
    this.taskCounts.clear();
    this.taskDurations.clear();
    this.terms.clear();
    this.termBytes = 0;
    this.taskBlocks.clear();
  }

  /**
   * Reads the columns and multi-valued fields' values of the builds with seq in (upTo, to]. Many builds (the first
   * use) are read as the layout's column scan says (on SQLite from narrow indexes, each scanned
   * once whole: the wide rows of `builds` by seq cost ~30 us a build at 1M, a million in 30 s, the
   * index entries a fraction of that; on PostgreSQL in ranges of seq). A few (the builds that
   * arrived since) are read by seq from the table.
   */
  private async load(to: number, readPacked: ReadPacked): Promise<void> {
    const scan = this.layout.columnScan;
    if (to - this.upTo > this.wideReadBuilds && scan.kind === 'narrow-indexes') return this.loadRange(to, readPacked, true);
    const step = scan.kind === 'seq-ranges' ? (this.seqRangeBuilds ?? scan.builds) : Infinity;
    while (this.upTo < to) await this.loadRange(Math.min(to, this.upTo + step), readPacked, false);
  }

  /** load() of the builds with seq in (upTo, to], from narrow indexes or by seq from the table. */
  private async loadRange(to: number, readPacked: ReadPacked, fromIndexes: boolean): Promise<void> {
    const from = this.upTo;
    const check = this.guard.deadlineCheck ?? sql<SqlBool>`1 = 1`;
    const range = sql`${check} AND seq > ${from} AND seq <= ${to}`;
    const hint = (index: string) => this.dialect.indexHint(index);
    // Each read: its rows (seq first), and where each further column goes.
    const reads: { sql: RawBuilder<unknown>; into: readonly Target[] }[] = fromIndexes
      ? [
          { sql: sql`SELECT seq, tool_type, project_name FROM builds ${hint(LISTING_INDEX)} WHERE ${range}`, into: ['buildTool', 'project'] },
          { sql: sql`SELECT seq, buildoutcome, buildstarttime, buildduration FROM builds ${hint(TREND_INDEX)} WHERE ${range}`, into: ['buildOutcome', 'start', 'duration'] },
          { sql: sql`SELECT seq, "user" FROM builds ${hint(columnIndexName('user'))} WHERE ${range}`, into: ['user'] },
        ]
      : [{ sql: sql`SELECT seq, tool_type, project_name, buildoutcome, buildstarttime, buildduration, "user" FROM builds WHERE ${range}`, into: ['buildTool', 'project', 'buildOutcome', 'start', 'duration', 'user'] }];
    const read = [];
    for (const r of reads) read.push({ rows: await readPacked(r.sql.compile(this.db), r.into.length + 1), into: r.into });
    // The held multi-valued fields' rows in one scan of the seq index (their fields are not
    // spread: none has rows in a second table, sql/layout.ts valueTables).
    const codes = MULTI_FIELDS.map((f) => valueFieldCode(f));
    const values = await readPacked(
      sql`SELECT seq, field, value FROM build_values ${hint(VALUES_SEQ_INDEX.build_values)} WHERE ${range} AND field IN (${sql.join(codes.map((c) => sql.lit(c)))}) ORDER BY seq`.compile(this.db),
      3,
    );
    const size = to + 2;
    this.available = grow(this.available, (to >>> 5) + 1);
    for (const f of FIELDS) this.columns[f] = grow(this.columns[f], size);
    this.start = grow(this.start, size);
    this.duration = grow(this.duration, size);
    for (const [n, { rows, into }] of read.entries()) {
      if (rows.length === 0) continue;
      const seqs = (rows.columns[0] as { data: Float64Array }).data;
      // Every read holds every build of the range: the first one says which are available.
      if (n === 0) {
        for (const s of seqs) this.available[s >>> 5] = this.available[s >>> 5]! | (1 << (s & 31));
        this.availableCount += rows.length;
      }
      into.forEach((target, c) => {
        const column = rows.columns[c + 1]!;
        if (target === 'start' || target === 'duration') {
          const values = numbersOf(column);
          const out = this[target];
          for (let r = 0; r < rows.length; r++) out[seqs[r]!] = values[r]!;
          return;
        }
        const ids = idsOf(column, this.dictionaries[target]);
        const out = this.columns[target];
        for (let r = 0; r < rows.length; r++) out[seqs[r]!] = ids[r]!;
      });
    }
    this.appendValues(from, to, codes, values);
    for (let a = from; a < to; a += TASK_READ_BUILDS) await this.loadTasks(a, Math.min(to, a + TASK_READ_BUILDS), readPacked);
    this.upTo = to;
  }

  /** Hands the rows of the held multi-valued fields (seq, field code, value; by seq) to each field's HeldValues. */
  private appendValues(from: number, to: number, codes: readonly number[], rows: PackedRows): void {
    const seqs = rows.length > 0 ? numbersOf(rows.columns[0]!) : new Float64Array(0);
    const fields = rows.length > 0 ? numbersOf(rows.columns[1]!) : new Float64Array(0);
    const texts = rows.length > 0 ? rows.columns[2]! : undefined;
    MULTI_FIELDS.forEach((f, i) => {
      const held = this.multi[f];
      const mine: number[] = [];
      for (let r = 0; r < rows.length; r++) if (fields[r] === codes[i]) mine.push(r);
      const ids = texts === undefined ? new Uint32Array(0) : idsOf(texts, held.dictionary, mine);
      held.append(from, to, Float64Array.from(mine, (r) => seqs[r]!), ids);
    });
  }

  /**
   * Reads the task counts and the tasks that ran of the builds with seq in (from, to]: ranges of
   * the keys of `build_task_counts` and `build_tasks` (seq first), in parts of TASK_READ_BUILDS
   * builds so that what crosses from the search thread stays a few MB.
   */
  private async loadTasks(from: number, to: number, readPacked: ReadPacked): Promise<void> {
    const check = this.guard.deadlineCheck ?? sql<SqlBool>`1 = 1`;
    const range = sql`${check} AND seq > ${from} AND seq <= ${to}`;
    const width = TASK_COUNT_COLUMNS.length;
    const counts = await readPacked(sql`SELECT seq, ${sql.join(TASK_COUNT_COLUMNS.map((c) => sql.ref(c)))} FROM build_task_counts WHERE ${range}`.compile(this.db), width + 1);
    const ran = sql.lit(TASK_OUTCOME_CODES.executed);
    const failed = sql.lit(TASK_OUTCOME_CODES.failed);
    const tasks = await readPacked(
      sql`SELECT seq, path_id, outcome = ${failed} AS failed, duration_ms FROM build_tasks WHERE ${range} AND outcome IN (${ran}, ${failed}) ORDER BY seq, ord`.compile(this.db),
      4,
    );
    this.taskCounts.grow((to + 2) * width);
    // A build without a row of counts has no tasks: zeros (the range may hold a read from before a reset).
    this.taskCounts.data.fill(0, (from + 1) * width, (to + 1) * width);
    if (counts.length > 0) {
      const seqs = numbersOf(counts.columns[0]!);
      for (let c = 0; c < width; c++) {
        const values = numbersOf(counts.columns[c + 1]!);
        for (let r = 0; r < counts.length; r++) this.taskCounts.set(seqs[r]! * width + c, values[r]!);
      }
    }
    const [seqs, pathIds, failures, durations] = tasks.length > 0 ? tasks.columns.map(numbersOf) : [];
    await this.learnPaths(pathIds ?? new Float64Array(0), readPacked);
    this.taskStart = grow(this.taskStart, to + 2);
    this.taskKeys = grow(this.taskKeys, this.taskCount + tasks.length);
    this.taskDurations.grow(this.taskCount + tasks.length);
    let k = 0;
    for (let s = from + 1; s <= to; s++) {
      this.taskStart[s] = this.taskCount;
      for (; k < tasks.length && seqs![k] === s; k++) {
        this.taskKeys[this.taskCount] = this.taskPathIndex.get(pathIds![k]!)! * 2 + (failures![k] === 1 ? 1 : 0);
        this.taskDurations.set(this.taskCount++, durations![k]!);
      }
    }
    this.taskStart[to + 1] = this.taskCount;
  }

  /** Reads the text of the task paths not met before (task_paths rows never change). */
  private async learnPaths(ids: Float64Array, readPacked: ReadPacked): Promise<void> {
    const seen = new Set<number>();
    for (const id of ids) if (!this.taskPathIndex.has(id)) seen.add(id);
    const unknown = [...seen];
    for (let i = 0; i < unknown.length; i += 500) {
      const part = unknown.slice(i, i + 500);
      const rows = await readPacked(sql`SELECT id, path FROM task_paths WHERE id IN (${sql.join(part.map((id) => sql.lit(id)))})`.compile(this.db), 2);
      const column = rows.columns[1];
      if (rows.length === 0 || column?.kind !== 'strings') continue;
      const found = numbersOf(rows.columns[0]!);
      for (let r = 0; r < rows.length; r++) {
        this.taskPathIndex.set(found[r]!, this.taskPaths.length);
        this.taskPaths.push(column.values[column.ids[r]! - 1]!);
      }
    }
  }

  /**
   * Brings the bitmaps of `terms` up to `latest`, reading the builds each matches above its last
   * read: TERMS_PER_READ terms a statement (UNION ALL), as a query of a hundred terms read one
   * statement per term spent its time on the way to the search thread and back.
   */
  private async extendTerms(terms: ReadonlyMap<string, CheckedExpr>, latest: number, readPacked: ReadPacked): Promise<void> {
    const stale: { list: TermList; term: CheckedExpr }[] = [];
    for (const [key, term] of terms) {
      let list = this.terms.get(key);
      if (list !== undefined) this.terms.delete(key);
      list ??= { words: new Uint32Array(0), upTo: 0 };
      // Most recently used last: eviction takes the first.
      this.terms.set(key, list);
      if (list.upTo < latest) stale.push({ list, term });
    }
    const check = (this.guard.deadlineCheck ?? sql<SqlBool>`1 = 1`) as RawBuilder<SqlBool>;
    const fromSql = stale.filter(({ list, term }) => !this.fromColumns(term, list, latest));
    for (let i = 0; i < fromSql.length; i += TERMS_PER_READ) {
      const part = fromSql.slice(i, i + TERMS_PER_READ);
      const arms = part.map(({ list, term }, k) => {
        // A term read as a list of child rows (values, custom values): their seqs are the answer
        // (sql/compile.ts childListSeqs), without a look-up of `builds` per match (556k for
        // `tag:CI` at 1M; `requested:*test*`'s 215k took 256-271 ms that way, 20-42 ms without).
        const values = childListSeqs(term, this.dialect, (seq) => sql<SqlBool>`${check} AND ${seq} > ${list.upTo} AND ${seq} <= ${latest}`);
        const matched =
          values ??
          this.db
            .selectFrom('builds')
            .select('builds.seq')
            .where(check)
            .where('builds.seq', '>', list.upTo)
            .where('builds.seq', '<=', latest)
            .where(compileQuery(term, this.dialect));
        const t = sql.raw(`t${k}`);
        return this.layout.termRead === 'words'
          ? sql`SELECT seq / 32 AS w, bit_or(CAST(1 AS bigint) << CAST(seq % 32 AS integer)) AS bits, ${sql.lit(k)} AS k FROM (${matched}) AS ${t} GROUP BY seq / 32`
          : sql`SELECT ${SEQS_AS_TEXT} AS seqs, ${sql.lit(k)} AS k FROM (${matched}) AS ${t}`;
      });
      const words = this.layout.termRead === 'words';
      const rows = await readPacked(sql`${sql.join(arms, sql` UNION ALL `)}`.compile(this.db), words ? 3 : 2);
      for (const { list } of part) this.room(list, latest);
      if (rows.length > 0 && words) {
        const [w, bits, ks] = rows.columns.map(numbersOf);
        // A word's bits as a 32-bit integer (bit 31 arrives as 2^31, which `|` takes as its sign bit).
        for (let r = 0; r < rows.length; r++) {
          const into = part[ks![r]!]!.list.words;
          into[w![r]!] = into[w![r]!]! | bits![r]!;
        }
      } else if (rows.length > 0) {
        const [seqs, ks] = rows.columns;
        const k = numbersOf(ks!);
        for (let r = 0; r < rows.length; r++) setSeqBits(part[k[r]!]!.list.words, textOf(seqs!, r));
      }
      for (const { list } of part) list.upTo = latest;
    }
  }

  /**
   * Extends a term's bitmap to `latest` from the columns held, without SQL, when the term is a
   * value pattern (exact, prefix, infix, `*`) on a column the index holds (HELD_COLUMNS: the
   * outcome, user, project and build tool) or a multi-valued field of MULTI_FIELDS (tags,
   * requested tasks: the value rows the compiled condition tests). The dictionary's values that match are found with the search language's own matcher
   * (query/evaluate.ts, which SQL answers the same as: the differential tests), then the builds with
   * one of them. Read by SQL on a term's first use at a million builds, `tag:CI` was 556k value
   * rows (2 s on SQLite), `user:alice` 90k builds read by seq (0.7 s) and `user:*ar*` every
   * build's user (5 s); from the columns, one pass over their ids. False: read it by SQL.
   */
  private fromColumns(term: CheckedExpr, list: TermList, latest: number): boolean {
    if (term.kind !== 'term') return false;
    if (term.predicate.kind === 'compare' || term.predicate.kind === 'range') return this.fromNumbers(term.field.column, term.predicate, list, latest);
    if (term.predicate.kind !== 'pattern') return false;
    const multi = term.field.multi && term.field.tool === null ? this.multiOf(term.field.column) : undefined;
    const held = term.field.multi ? undefined : HELD_COLUMNS[term.field.column];
    if (held === undefined && multi === undefined) return false;
    const pattern = term.predicate.pattern;
    // Which of the dictionary's ids match (id 0 is no value, NULL, which no pattern matches).
    const dictionary = multi?.dictionary ?? this.dictionaries[held!];
    const matches = new Uint8Array(dictionary.values.length);
    let any = false;
    for (let id = 1; id < dictionary.values.length; id++) if (matchPattern(pattern, dictionary.values[id]!)) {
        matches[id] = 1;
        any = true;
      }
    const words = this.room(list, latest);
    if (any && multi !== undefined) multi.mark(matches, list.upTo, latest, words);
    else if (any) {
      const ids = this.columns[held!];
      for (let s = list.upTo + 1; s <= latest; s++) if (matches[ids[s]!] === 1) words[s >>> 5] = words[s >>> 5]! | (1 << (s & 31));
    }
    list.upTo = latest;
    return true;
  }

  /**
   * The same for a range or comparison of the start time or the duration, which the index holds
   * (NaN for none, which no bound holds, as SQL's NULL): the bounds the compiler compares with
   * (sql/bounds.ts), tested as it tests them. `buildStartTime:[2026-10-01 to 2026-10-31]` on its
   * first use at a million builds read every build's seq by SQL.
   */
  private fromNumbers(column: string, predicate: Extract<Predicate, { kind: 'compare' | 'range' }>, list: TermList, latest: number): boolean {
    const values = column === 'buildstarttime' ? this.start : column === 'buildduration' ? this.duration : undefined;
    if (values === undefined) return false;
    const bounds = boundsOf(predicate);
    const words = this.room(list, latest);
    for (let s = list.upTo + 1; s <= latest; s++) {
      const v = values[s]!;
      if (!Number.isNaN(v) && withinBounds(v, bounds)) words[s >>> 5] = words[s >>> 5]! | (1 << (s & 31));
    }
    list.upTo = latest;
    return true;
  }

  /** Grows a term's bitmap to hold seq `latest`, counted in the bitmaps' bytes; its words. */
  private room(list: TermList, latest: number): Uint32Array {
    const before = list.words.length;
    list.words = grow(list.words, (latest >>> 5) + 1);
    this.termBytes += (list.words.length - before) * 4;
    return list.words;
  }

  /** The values held of a multi-valued field's column, if it is one of MULTI_FIELDS. */
  private multiOf(column: string): HeldValues | undefined {
    return (MULTI_FIELDS as readonly string[]).includes(column) ? this.multi[column as MultiField] : undefined;
  }

  /** The values of the multi-valued fields held, over all builds. */
  private heldValues(): number {
    return MULTI_FIELDS.reduce((n, f) => n + this.multi[f].size, 0);
  }

  /** Drops the least recently used bitmaps past the budget, except those of the query at hand. */
  private evictTerms(keep: ReadonlyMap<string, unknown>): void {
    for (const [k, l] of this.terms) {
      if (this.termBytes <= this.maxTermBytes) return;
      if (keep.has(k)) continue;
      this.terms.delete(k);
      this.termBytes -= l.words.length * 4;
    }
  }
}

/** A term's identity: its field and predicate (values resolved, relative times as instants). */
function termKey(e: Extract<CheckedExpr, { kind: 'term' }>): string {
  return `${e.field.name}\u0000${JSON.stringify(e.predicate)}`;
}

function collectTerms(e: CheckedExpr, into: Map<string, CheckedExpr>): void {
  switch (e.kind) {
    case 'all':
      return;
    case 'term':
      into.set(termKey(e), e);
      return;
    case 'and':
    case 'or':
      for (const o of e.operands) collectTerms(o, into);
      return;
    case 'not':
      collectTerms(e.operand, into);
      return;
    default:
      assertNever(e, 'expression');
  }
}
