// Posting lists: for an exact search term (`project:billing`, `tag:release`, `buildOutcome:failed`)
// the sorted seqs of every available build it matches, kept in memory and intersected in order.
//
// Why: a page of a conjunction of such terms, each matching a tenth of the builds but together a
// thousandth, costs SQLite one row visit per build of the term it walks (it has one index per
// column and cannot intersect two in order): 24 ms at 1M builds for
// `project:billing user:farah tag:release`. Intersecting sorted lists in order (leapfrog with
// galloping) finds the first hundred matches in well under a millisecond, and SQL then reads only
// those rows. Builds never change once available and seqs only grow, so a list stays valid and is
// extended with the builds that became available since it was read.
//
// SQLite only: its writers commit in seq order, so "seq > the last one read" never misses a build.
// (On PostgreSQL concurrent transactions can commit seqs out of order.)

import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { CheckedExpr } from '../query/checked.js';
import { compileQuery } from '../sql/index.js';

/**
 * A query split for posting lists: its exact terms, and the rest of the conjunction (what SQL still
 * checks on the candidates); undefined when lists would not help.
 */
export function exactTerms(query: CheckedExpr | undefined): { exact: CheckedExpr[]; rest: CheckedExpr | undefined } | undefined {
  if (query === undefined) return undefined;
  const operands = query.kind === 'and' ? query.operands : [query];
  const exact = operands.filter((e) => termKey(e) !== undefined);
  // One column term is already one index range in SQL; lists pay off for two terms or more, or a
  // multi-valued one (SQL collects all of its builds before the first row of a page).
  if (!(exact.length >= 2 || (exact.length === 1 && exact[0]!.kind === 'term' && exact[0]!.field.multi))) return undefined;
  const others = operands.filter((e) => termKey(e) === undefined);
  // SQL reads the candidates chunk by chunk; a part that first collects every build it names (a
  // trigram or child-row list) would do that again for every chunk.
  if (!others.every(perRow)) return undefined;
  const rest: CheckedExpr | undefined = others.length === 0 ? undefined : others.length === 1 ? others[0]! : { kind: 'and', operands: others, span: query.span };
  return { exact, rest };
}

/** Whether SQL checks `e` on a build from that build's row alone, or one index seek (no list). */
function perRow(e: CheckedExpr): boolean {
  switch (e.kind) {
    case 'all':
      return true;
    case 'and':
    case 'or':
      return e.operands.every(perRow);
    case 'not':
      // A negated exact child-row term is a probe (sql/compile.ts).
      return (e.operand.kind === 'term' && e.operand.field.multi && termKey(e.operand) !== undefined) || perRow(e.operand);
    case 'term': {
      if (e.field.multi) return false;
      const p = e.predicate;
      // An infix or suffix pattern is answered from the trigram table.
      return !(p.kind === 'pattern' && p.pattern.segments.length > 1 && p.pattern.segments[0] === '');
    }
  }
}

/** Identity of an exact term: field and value (values are lower-cased by the checker). */
function termKey(e: CheckedExpr): string | undefined {
  if (e.kind !== 'term') return undefined;
  const p = e.predicate;
  if (p.kind === 'pattern' && e.field.type === 'string' && p.pattern.segments.length === 1) return `${e.field.name}\u0000=${p.pattern.segments[0]}`;
  if (p.kind === 'boolean') return `${e.field.name}\u0000${p.value}`;
  return undefined;
}

interface List {
  seqs: Int32Array;
  length: number;
  /** Every build with seq <= upTo is accounted for. */
  upTo: number;
}

/** A view of a list: its sorted seqs [0, length). */
export interface Postings {
  readonly seqs: Int32Array;
  readonly length: number;
}

export interface PostingCacheOptions {
  /** Seqs kept over all lists (4 bytes each); the least recently used lists go first. Default 16M (64 MB). */
  readonly maxEntries?: number;
}

export class PostingCache {
  private readonly lists = new Map<string, List>();
  private entries = 0;
  private readonly maxEntries: number;
  private readonly latest: BetterSqlite3.Statement;

  constructor(
    private readonly sqlite: BetterSqlite3.Database,
    private readonly db: Kysely<any>,
    options: PostingCacheOptions = {},
  ) {
    this.maxEntries = options.maxEntries ?? 16 * 1024 * 1024;
    this.latest = sqlite.prepare('SELECT coalesce(max(seq), 0) FROM builds').pluck();
  }

  /** The current posting lists of `terms` (exact terms, see exactTerms). */
  postings(terms: readonly CheckedExpr[]): Postings[] | undefined {
    const latest = Number(this.latest.get());
    if (latest > 0x7fffffff) return undefined;
    return terms.map((t) => this.list(t, latest));
  }

  private list(term: CheckedExpr, latest: number): List {
    const key = termKey(term)!;
    let list = this.lists.get(key);
    if (list !== undefined) {
      // Most recently used last: eviction takes the first.
      this.lists.delete(key);
      this.lists.set(key, list);
    } else {
      list = { seqs: new Int32Array(64), length: 0, upTo: 0 };
      this.lists.set(key, list);
      this.entries += list.seqs.length;
    }
    if (list.upTo < latest) this.extend(term, list, latest);
    this.evict(key);
    return list;
  }

  private extend(term: CheckedExpr, list: List, latest: number): void {
    const { sql, parameters } = this.db
      .selectFrom('builds')
      .select('builds.seq')
      .where('builds.seq', '>', list.upTo)
      .where('builds.seq', '<=', latest)
      .where(compileQuery(term, 'sqlite'))
      .orderBy('builds.seq')
      .compile();
    const seqs = this.sqlite.prepare(sql).pluck().all(...(parameters as unknown[])) as number[];
    if (list.length + seqs.length > list.seqs.length) {
      let capacity = list.seqs.length;
      while (capacity < list.length + seqs.length) capacity *= 2;
      const grown = new Int32Array(capacity);
      grown.set(list.seqs.subarray(0, list.length));
      this.entries += capacity - list.seqs.length;
      list.seqs = grown;
    }
    for (const s of seqs) list.seqs[list.length++] = s;
    list.upTo = latest;
  }

  private evict(keep: string): void {
    for (const [key, list] of this.lists) {
      if (this.entries <= this.maxEntries) return;
      if (key === keep) continue;
      this.lists.delete(key);
      this.entries -= list.seqs.length;
    }
  }
}

/** First index at or after `from` whose value is >= target (galloping, then binary search). */
function seekUp(l: Int32Array, length: number, from: number, target: number): number {
  if (from >= length || l[from]! >= target) return from;
  let lo = from;
  let step = 1;
  let hi = from + 1;
  while (hi < length && l[hi]! < target) {
    lo = hi;
    step *= 2;
    hi = lo + step;
  }
  if (hi > length) hi = length;
  // l[lo] < target, and hi === length or l[hi] >= target.
  while (lo + 1 < hi) {
    const mid = (lo + hi) >>> 1;
    if (l[mid]! < target) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** Last index at or before `from` whose value is <= target, or -1. */
function seekDown(l: Int32Array, from: number, target: number): number {
  if (from < 0 || l[from]! <= target) return from;
  let hi = from;
  let step = 1;
  let lo = from - 1;
  while (lo >= 0 && l[lo]! > target) {
    hi = lo;
    step *= 2;
    lo = hi - step;
  }
  if (lo < -1) lo = -1;
  // l[hi] > target, and lo === -1 or l[lo] <= target.
  while (lo + 1 < hi) {
    const mid = (lo + hi) >> 1;
    if (l[mid]! > target) hi = mid;
    else lo = mid;
  }
  return lo;
}

/**
 * The seqs in every list, in order (descending when `reverse`), starting at `first` (inclusive):
 * a leapfrog join. Each list's cursor only moves forward, by galloping, so the cost follows the
 * number of jumps, not the lists' lengths.
 */
export function* intersect(lists: readonly Postings[], first: number, reverse: boolean): Generator<number> {
  const n = lists.length;
  if (n === 0) return;
  const pos = lists.map((l) => (reverse ? l.length - 1 : 0));
  let target = first;
  for (;;) {
    let agreed = 0;
    let i = 0;
    while (agreed < n) {
      const l = lists[i]!;
      const p = reverse ? seekDown(l.seqs, pos[i]!, target) : seekUp(l.seqs, l.length, pos[i]!, target);
      if (reverse ? p < 0 : p >= l.length) return;
      pos[i] = p;
      const v = l.seqs[p]!;
      if (v === target) agreed++;
      else {
        target = v;
        agreed = 1;
      }
      i = (i + 1) % n;
    }
    yield target;
    target += reverse ? -1 : 1;
  }
}
