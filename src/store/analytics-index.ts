// The analytics index (SQLite): the count and the facets of any query from memory, instead of
// reading every matching build again for each request.
//
// Why: at a million builds the facets of `tag:CI` read ~556k wide rows of `builds` by seq (1.2-5 s
// whatever the statement's shape), and a count of a term SQLite has no single index range for
// visits every candidate. Here each build's facet values are held once, by seq, as dictionary ids
// (four columns of 4 bytes, its start time, its tags): 29-40 bytes a build, 30-40 MB at 1M. A
// query becomes a bitmap over seqs: each term's bitmap is read once by SQL (`SELECT seq ... WHERE
// <the term>`, the compiler's own condition, so the answer is the compiler's) and kept, and the
// query's and/or/not are word-wise operations on them. The count is the matching bits; the facets
// count the matching builds' ids, a few milliseconds for a million.
//
// Kept in step with the store: builds never change once available and seqs only grow (committed
// in seq order on SQLite), so the columns and every term's bitmap are extended with the builds
// above the last seq read. A deletion clears the build's bit in `available`, the bitmap every
// answer is intersected with: here at once for this process's deletions (`forget`), and for
// another process's (`buildscope prune` on the same file) by comparing the number of available
// bits with the exact number of available builds of the all-time rollup rows, read in the same
// statement as the latest seq: when they differ, the index is read again from the start.
//
// Every read is a statement of the caller's search (the search threads, the time limit); what a
// read that timed out had loaded stays, so the next search goes on from there.

import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import type { Logger } from 'pino';
import type { CheckedExpr } from '../query/checked.js';
import { assertNever } from '../query/assert.js';
import type { Database } from '../db/schema.js';
import { compileQuery, valueRowsSeqs, type Dialect } from '../sql/index.js';
import { valueFieldCode } from '../sql/value-fields.js';
import type { PackedColumn } from './packed-rows.js';
import { columnIndexName } from '../sql/indexes.js';
import { LISTING_INDEX, TREND_INDEX } from './migrations.js';
import { ALL_TIME, BUILD_ROLLUPS } from './rollups.js';
import { VALUES_SEQ_INDEX } from './value-field-codes.js';
import type { GuardedSearch, ReadPacked, ReadRows } from './search-guard.js';
import type { AggregateScope, FacetValue, Facets, Visibility } from './types.js';

export interface AnalyticsIndexOptions {
  /** Bytes the columns may take (about 40 a build); a store past it is answered by SQL. Default 256 MiB. */
  readonly maxBytes?: number;
  /** Bytes of term bitmaps kept (a bit a build each); the least recently used go first. Default 64 MiB. */
  readonly maxTermBytes?: number;
  /**
   * New builds past which their columns are read from whole narrow indexes (see load), in the
   * background (see catchUp). Default 20,000.
   */
  readonly wideReadBuilds?: number;
  readonly logger?: Pick<Logger, 'info' | 'warn'>;
}

/** The time limit of a catch-up (see catchUp). */
const CATCH_UP_MS = 30 * 60_000;

/** Terms whose new matches one statement reads. */
const TERMS_PER_READ = 50;
/** Bytes a build takes in the columns, tags aside: four ids, the start time, the tags' offset. */
const BYTES_PER_BUILD = 4 * 4 + 8 + 4;

/** Text values by id; id 0 is null. */
class Dictionary {
  readonly values: string[] = [''];
  private readonly ids = new Map<string, number>();

  id(value: string): number {
    let id = this.ids.get(value);
    if (id === undefined) {
      id = this.values.push(value) - 1;
      this.ids.set(value, id);
    }
    return id;
  }
}

/** Ids in this index's dictionary of one packed text column (a column of only nulls packs as numbers). */
function idsOf(column: PackedColumn, dictionary: Dictionary): Uint32Array {
  switch (column.kind) {
    case 'strings': {
      const map = column.values.map((v) => dictionary.id(v));
      return column.ids.map((id) => (id === 0 ? 0 : map[id - 1]!));
    }
    case 'numbers':
      return Uint32Array.from(column.data, (n) => (Number.isNaN(n) ? 0 : dictionary.id(String(n))));
    default:
      return assertNever(column, 'packed column');
  }
}

function grow<T extends Uint32Array | Float64Array>(a: T, need: number): T {
  if (need <= a.length) return a;
  const grown = new (a.constructor as new (n: number) => T)(Math.max(need, Math.ceil(a.length * 1.25), 1024));
  grown.set(a);
  return grown;
}

/** The facet fields held, in the order of their columns. */
const FIELDS = ['buildOutcome', 'buildTool', 'project', 'user'] as const;
/** Where a column read goes: a facet field's ids, or the start times. */
type Target = (typeof FIELDS)[number] | 'start';

interface TermList {
  words: Uint32Array;
  upTo: number;
}

export class AnalyticsIndex {
  private readonly maxBytes: number;
  private readonly maxTermBytes: number;
  private readonly wideReadBuilds: number;
  private upTo = 0;
  private available = new Uint32Array(0);
  private availableCount = 0;
  private readonly dictionaries = { buildOutcome: new Dictionary(), buildTool: new Dictionary(), project: new Dictionary(), user: new Dictionary(), tag: new Dictionary() };
  private columns = { buildOutcome: new Uint32Array(0), buildTool: new Uint32Array(0), project: new Uint32Array(0), user: new Uint32Array(0) };
  private start = new Float64Array(0);
  /** Tags of seq s: tagIds[tagStart[s] .. tagStart[s + 1]). */
  private tagStart = new Uint32Array(1);
  private tagIds = new Uint32Array(0);
  private tagCount = 0;
  private readonly terms = new Map<string, TermList>();
  private termBytes = 0;
  /** The search being answered (see match), or the catch-up. */
  private busy: Promise<unknown> = Promise.resolve();
  private catchingUp = false;
  private closed = false;
  private readonly logger: Pick<Logger, 'info' | 'warn'> | undefined;

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

  /** The facets of the scope's builds (as analytics.ts's buildFacets), or undefined when past the budget. */
  facets(scope: AggregateScope, limit: number): Promise<Facets | undefined> {
    return this.guard.search(async (read, readPacked) => {
      const match = await this.match(scope, read, readPacked);
      if (match === undefined) return undefined;
      const counts = FIELDS.map((f) => new Uint32Array(this.dictionaries[f].values.length));
      const columns = FIELDS.map((f) => this.columns[f]);
      const tags = new Uint32Array(this.dictionaries.tag.values.length);
      const { tagStart, tagIds } = this;
      this.eachBuild(match, scope, (seq) => {
        for (let f = 0; f < columns.length; f++) counts[f]![columns[f]![seq]!]!++;
        for (let k = tagStart[seq]!; k < tagStart[seq + 1]!; k++) tags[tagIds[k]!]!++;
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
      return { buildOutcome: buildOutcome!, buildTool: buildTool!, project: project!, user: user!, tag: top(tags, this.dictionaries.tag) };
    });
  }

  /** Builds this process deleted: out of every answer at once. */
  forget(seqs: readonly number[]): void {
    for (const s of seqs) {
      const w = s >>> 5;
      const bit = 1 << (s & 31);
      if (w < this.available.length && (this.available[w]! & bit) !== 0) {
        this.available[w] = this.available[w]! & ~bit;
        this.availableCount--;
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
      const head = await read(
        sql<{ latest: number | string; total: number | string }>`SELECT
          coalesce((SELECT max(seq) FROM builds), 0) AS latest,
          coalesce((SELECT sum(builds) FROM ${sql.raw(BUILD_ROLLUPS)} WHERE lvl = ${sql.lit(ALL_TIME)} AND t = 0), 0) AS total`.compile(this.db),
      );
      const latest = Number(head[0]!.latest);
      const total = Number(head[0]!.total);
      if (latest * BYTES_PER_BUILD + this.tagCount * 4 > this.maxBytes) {
        this.reset();
        return undefined;
      }
      if (latest - this.upTo > this.wideReadBuilds && !catchingUp) {
        this.catchUp();
        return undefined;
      }
      if (this.upTo < latest) await this.load(latest, readPacked);
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
          if (!this.closed) this.logger?.warn({ err: e }, 'The analytics index could not read the stored builds; counts and facets read the database');
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
    return FIELDS.reduce((n, f) => n + this.columns[f].byteLength, 0) + this.start.byteLength + this.tagStart.byteLength + this.tagIds.byteLength + this.available.byteLength + this.termBytes;
  }

  private reset(): void {
    this.upTo = 0;
    this.available = new Uint32Array(0);
    this.availableCount = 0;
    this.tagCount = 0;
    this.terms.clear();
    this.termBytes = 0;
  }

  /**
   * Reads the columns and tags of the builds with seq in (upTo, to]. Many builds (the first
   * use) are read from narrow indexes, each scanned once whole: the wide rows of `builds` by seq
   * cost ~30 us a build at 1M (a million in 30 s), the index entries a fraction of that. A few
   * (the builds that arrived since) are read by seq from the table.
   */
  private async load(to: number, readPacked: ReadPacked): Promise<void> {
    const from = this.upTo;
    const check = this.guard.deadlineCheck ?? sql<SqlBool>`1 = 1`;
    const range = sql`${check} AND seq > ${from} AND seq <= ${to}`;
    // Each read: its rows (seq first), and where each further column goes.
    const reads: { sql: RawBuilder<unknown>; into: readonly Target[] }[] =
      to - from > this.wideReadBuilds
        ? [
            { sql: sql`SELECT seq, tool_type, project_name FROM builds INDEXED BY ${sql.raw(LISTING_INDEX)} WHERE ${range}`, into: ['buildTool', 'project'] },
            { sql: sql`SELECT seq, buildoutcome, buildstarttime FROM builds INDEXED BY ${sql.raw(TREND_INDEX)} WHERE ${range}`, into: ['buildOutcome', 'start'] },
            { sql: sql`SELECT seq, "user" FROM builds INDEXED BY ${sql.raw(columnIndexName('user'))} WHERE ${range}`, into: ['user'] },
          ]
        : [{ sql: sql`SELECT seq, tool_type, project_name, buildoutcome, buildstarttime, "user" FROM builds WHERE ${range}`, into: ['buildTool', 'project', 'buildOutcome', 'start', 'user'] }];
    const read = [];
    for (const r of reads) read.push({ rows: await readPacked(r.sql.compile(this.db), r.into.length + 1), into: r.into });
    const tags = await readPacked(
      sql`SELECT seq, value FROM build_values INDEXED BY ${sql.raw(VALUES_SEQ_INDEX)} WHERE ${range} AND field = ${sql.lit(valueFieldCode('tag'))} ORDER BY seq`.compile(this.db),
      2,
    );
    const size = to + 2;
    this.available = grow(this.available, (to >>> 5) + 1);
    for (const f of FIELDS) this.columns[f] = grow(this.columns[f], size);
    this.start = grow(this.start, size);
    this.tagStart = grow(this.tagStart, size);
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
        if (target === 'start') {
          for (let r = 0; r < rows.length; r++) this.start[seqs[r]!] = column.kind === 'numbers' ? column.data[r]! : Number(column.values[column.ids[r]! - 1]);
          return;
        }
        const ids = idsOf(column, this.dictionaries[target]);
        const out = this.columns[target];
        for (let r = 0; r < rows.length; r++) out[seqs[r]!] = ids[r]!;
      });
    }
    const tagSeqs = tags.length > 0 ? (tags.columns[0] as { data: Float64Array }).data : new Float64Array(0);
    const tagValues = tags.length > 0 ? idsOf(tags.columns[1]!, this.dictionaries.tag) : new Uint32Array(0);
    this.tagIds = grow(this.tagIds, this.tagCount + tags.length);
    let k = 0;
    for (let s = from + 1; s <= to; s++) {
      this.tagStart[s] = this.tagCount;
      while (k < tags.length && tagSeqs[k] === s) this.tagIds[this.tagCount++] = tagValues[k++]!;
    }
    this.tagStart[to + 1] = this.tagCount;
    this.upTo = to;
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
    for (let i = 0; i < stale.length; i += TERMS_PER_READ) {
      const part = stale.slice(i, i + TERMS_PER_READ);
      const arms = part.map(({ list, term }, k) => {
        // One exact value of a multi-valued field: its value rows are the answer (sql/count.ts),
        // without a look-up of `builds` per match (556k for `tag:CI` at 1M).
        const values = valueRowsSeqs(term, this.dialect, sql`${check} AND v.seq > ${list.upTo} AND v.seq <= ${latest}`);
        const matched =
          values ??
          this.db
            .selectFrom('builds')
            .select('builds.seq')
            .where(check)
            .where('builds.seq', '>', list.upTo)
            .where('builds.seq', '<=', latest)
            .where(compileQuery(term, this.dialect));
        return sql`SELECT seq, ${sql.lit(k)} AS k FROM (${matched}) AS ${sql.raw(`t${k}`)}`;
      });
      const rows = await readPacked(sql`${sql.join(arms, sql` UNION ALL `)}`.compile(this.db), 2);
      for (const { list } of part) {
        const before = list.words.length;
        list.words = grow(list.words, (latest >>> 5) + 1);
        this.termBytes += (list.words.length - before) * 4;
      }
      if (rows.length > 0) {
        const seqs = (rows.columns[0] as { data: Float64Array }).data;
        const ks = (rows.columns[1] as { data: Float64Array }).data;
        for (let r = 0; r < rows.length; r++) {
          const words = part[ks[r]!]!.list.words;
          const s = seqs[r]!;
          words[s >>> 5] = words[s >>> 5]! | (1 << (s & 31));
        }
      }
      for (const { list } of part) list.upTo = latest;
    }
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
