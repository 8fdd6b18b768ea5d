// Posting bitmaps: for an exact search term (`project:billing`, `tag:release`, `buildOutcome:failed`)
// a bitmap over seqs of every available build it matches, kept in memory and intersected in order.
//
// Why: a page of a conjunction of such terms, each matching a tenth of the builds but together a
// thousandth, costs SQLite one row visit per build of the term it walks (it has one index per
// column and cannot intersect two in order): 24 ms at 1M builds for
// `project:billing user:farah tag:release`. ANDing bitmaps 32 builds at a time finds the first
// hundred matches in tens of microseconds, and SQL then reads only those rows. A bitmap costs one
// bit per build (125 KB per term at 1M builds) whatever the term's frequency. Builds never change
// once available and seqs only grow (never reused, even after a deletion), so a bitmap stays valid
// and is extended with the builds that became available since it was read. A deleted build (prune.ts)
// may still have its bit set, in a process that did not delete it: a bit only makes a build a
// candidate, and the page's SQL, which reads candidates by seq, finds no row for it.
//
// Only for a dialect whose writers commit in seq order (`commitsInSeqOrder`: SQLite), so that
// "seq > the last one read" never misses a build. (On PostgreSQL concurrent transactions can
// commit seqs out of order.)

import type BetterSqlite3 from 'better-sqlite3';
import { sql, type CompiledQuery, type Kysely, type SqlBool } from 'kysely';
import type { CheckedExpr } from '../../query/checked.js';
import type { Database } from '../../db/schema.js';
import { childListSeqs, compileQuery, type AccessPlan, type Dialect, type TermAccess } from '../../sql/index.js';
import { assertNever } from '../../query/assert.js';
import { LISTING_INDEX } from '../schema/migrations.js';

/** A term with a posting bitmap, and the identity its bitmap is kept under. */
export interface ExactTerm {
  readonly term: CheckedExpr;
  readonly key: string;
}

/**
 * A query split for posting bitmaps: its exact terms, and the rest of the conjunction (what SQL still
 * checks on the candidates); undefined when bitmaps would not help. Which term is an exact equality
 * and which part collects a list of builds is read from the compiler's access plan of the query
 * (sql/access.ts), not decided here again.
 */
export function exactTerms(query: CheckedExpr, plan: AccessPlan): { exact: ExactTerm[]; rest: CheckedExpr | undefined } | undefined {
  const exact: ExactTerm[] = [];
  const others: CheckedExpr[] = [];
  let childTerms = 0;
  for (const e of query.kind === 'and' ? query.operands : [query]) {
    const access = e.kind === 'term' ? plan.accessOf(e) : undefined;
    const key = access === undefined ? undefined : termKey(e, access);
    if (access !== undefined && key !== undefined) {
      exact.push({ term: e, key });
      if (access.kind === 'childList') childTerms++;
    } else others.push(e);
  }
  // One column term is already one index range in SQL; bitmaps pay off for two terms or more, or a
  // child-row one (SQL collects all of its builds before the first row of a page).
  if (!(exact.length >= 2 || (exact.length === 1 && childTerms === 1))) return undefined;
  // SQL reads the candidates chunk by chunk; a part that first collects every build it names (a
  // trigram or child-row list) would do that again for every chunk.
  if (!others.every((e) => perRow(e, plan))) return undefined;
  const rest: CheckedExpr | undefined = others.length === 0 ? undefined : others.length === 1 ? others[0]! : { kind: 'and', operands: others, span: query.span };
  return { exact, rest };
}

/** Whether SQL checks `e` on a build from that build's row alone, or one index seek per build (no list). */
function perRow(e: CheckedExpr, plan: AccessPlan): boolean {
  switch (e.kind) {
    case 'all':
      return true;
    case 'and':
    case 'or':
      return e.operands.every((o) => perRow(o, plan));
    case 'not':
      return perRow(e.operand, plan);
    case 'term': {
      const access = plan.accessOf(e);
      if (access === undefined) throw new Error(`the access plan has no entry for a term on ${e.field.name}`);
      return visitsPerRow(access);
    }
    default:
      return assertNever(e, 'expression');
  }
}

/** Whether an access path is answered per build visited (a row test or an index probe), not by a list. */
function visitsPerRow(access: TermAccess): boolean {
  switch (access.kind) {
    case 'rowEquals':
    case 'row':
    case 'childProbe':
      return true;
    case 'trigram':
    case 'childList':
      return false;
    default:
      return assertNever(access, 'access path');
  }
}

/**
 * Identity of an exact term, from its access path: an equality on the row, or a child-row list of
 * one exact value (values are lower-cased by the checker); undefined for any other term.
 */
function termKey(e: CheckedExpr, access: TermAccess): string | undefined {
  if (e.kind !== 'term') return undefined;
  switch (access.kind) {
    case 'rowEquals':
      return typeof access.value === 'boolean' ? `${e.field.name}\u0000${access.value}` : `${e.field.name}\u0000=${access.value}`;
    case 'childList':
      return access.value === undefined ? undefined : `${e.field.name}\u0000=${access.value}`;
    case 'row':
    case 'trigram':
    case 'childProbe':
      return undefined;
    default:
      return assertNever(access, 'access path');
  }
}

/** The builds a term matches, as a bitmap: bit `seq` is set when the build with that seq matches. */
export interface Postings {
  readonly words: Uint32Array;
}

interface List {
  words: Uint32Array;
  /** Every build with seq <= upTo is accounted for. */
  upTo: number;
}

export interface PostingCacheOptions {
  /** Bytes of bitmaps kept over all terms (seq / 8 each); the least recently used go first. Default 64 MB. */
  readonly maxBytes?: number;
}

/** A term's seqs as one text, SQLite's aggregate over the `seq` column of its rows: what setSeqBits reads. */
export const SEQS_AS_TEXT = sql<string | null>`group_concat(seq)`;

/**
 * Sets the bits of the seqs in `text` (decimal, joined by commas: SEQS_AS_TEXT) in `words`, which
 * has room for all of them; none for undefined (no seq).
 */
export function setSeqBits(words: Uint32Array, text: string | undefined): void {
  if (text === undefined) return;
  let seq = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 44;
    if (c === 44) {
      words[seq >>> 5] = words[seq >>> 5]! | (1 << (seq & 31));
      seq = 0;
    } else if (c >= 48 && c <= 57) seq = seq * 10 + (c - 48);
    else throw new Error(`a term's seqs as text hold ${JSON.stringify(text[i])}`);
  }
}

/**
 * Reads the one text value a statement selects (a term's seqs joined by commas), in the caller's
 * search (a search thread, the time limit). One value, not a row per build: a search thread's
 * driver hands a row over in 1-1.5 µs, ten times what the statement spends on it.
 */
export type ReadText = (query: CompiledQuery) => Promise<string | undefined>;

export class PostingCache {
  private readonly lists = new Map<string, List>();
  private bytes = 0;
  private readonly maxBytes: number;
  private readonly latest: BetterSqlite3.Statement;

  constructor(
    private readonly sqlite: BetterSqlite3.Database,
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    options: PostingCacheOptions = {},
  ) {
    this.maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
    this.latest = sqlite.prepare('SELECT coalesce(max(seq), 0) FROM builds').pluck();
  }

  /**
   * The current posting bitmaps of `terms` (exact terms, see exactTerms). A term's builds not read
   * yet are read by `readSeqs`: the caller's search (a search thread, the time limit), since the
   * first use of a term reads every build it matches (`tag:CI`, 556k at 1M builds: 850 ms, which
   * in the server's thread every other request waited for).
   */
  async postings(terms: readonly ExactTerm[], readText: ReadText): Promise<Postings[] | undefined> {
    const latest = Number(this.latest.get());
    // One bitmap is latest / 8 bytes: past the budget the lists would evict each other.
    if (latest / 8 > this.maxBytes / terms.length) return undefined;
    const lists: Postings[] = [];
    for (const t of terms) lists.push(await this.list(t, latest, readText));
    return lists;
  }

  /**
   * Clears deleted builds from every bitmap. Not needed for correct answers (a page's SQL reads
   * its candidates by seq, and a deleted seq reads nothing; seqs are never reused), but it keeps a
   * page from reading ahead over builds that are gone.
   */
  forget(seqs: readonly number[]): void {
    for (const list of this.lists.values()) {
      for (const s of seqs) {
        const w = s >>> 5;
        if (w < list.words.length) list.words[w] = list.words[w]! & ~(1 << (s & 31));
      }
    }
  }

  private readonly statements = new Map<string, BetterSqlite3.Statement>();

  /**
   * Runs a compiled page query with a prepared statement kept for its text: a full page always
   * has the same text (as many seqs as builds asked for), and preparing it again each time was
   * a tenth of a page's cost.
   */
  run<R>(query: CompiledQuery<R>): R[] {
    let statement = this.statements.get(query.sql);
    if (statement === undefined) {
      // The builds of a page are looked up by seq: from the index that covers a listing's columns
      // (store migration 0003), which SQLite would not pick over the unique index on seq by itself.
      const from = 'from "builds"';
      if (!query.sql.startsWith('select ') || !query.sql.includes(`${from} where`)) throw new Error(`a posting page query of an unexpected form: ${query.sql.slice(0, 80)}`);
      statement = this.sqlite.prepare(query.sql.replace(`${from} where`, `${from} INDEXED BY ${LISTING_INDEX} where`));
      if (this.statements.size >= 64) this.statements.delete(this.statements.keys().next().value!);
      this.statements.set(query.sql, statement);
    }
    return statement.all(...(query.parameters as unknown[])) as R[];
  }

  private async list({ term, key }: ExactTerm, latest: number, readText: ReadText): Promise<List> {
    let list = this.lists.get(key);
    if (list !== undefined) {
      // Most recently used last: eviction takes the first.
      this.lists.delete(key);
      this.lists.set(key, list);
    } else {
      list = { words: new Uint32Array(0), upTo: 0 };
      this.lists.set(key, list);
    }
    if (list.upTo < latest) await this.extend(term, list, latest, readText);
    this.evict(key);
    return list;
  }

  private async extend(term: CheckedExpr, list: List, latest: number, readText: ReadText): Promise<void> {
    const from = list.upTo;
    // A term read as a list of child rows: those rows' seqs, without a look-up of `builds` each.
    const seqs =
      childListSeqs(term, this.dialect, (seq) => sql<SqlBool>`${seq} > ${from} AND ${seq} <= ${latest}`) ??
      this.db.selectFrom('builds').select('builds.seq').where('builds.seq', '>', from).where('builds.seq', '<=', latest).where(compileQuery(term, this.dialect));
    const text = await readText(sql`SELECT ${SEQS_AS_TEXT} AS seqs FROM (${seqs}) AS t`.compile(this.db));
    // Another search may have extended the list meanwhile (over the same or a later range): bits
    // are only ever set, and the list is read up to the furthest either reached.
    const need = (latest >>> 5) + 1;
    if (need > list.words.length) {
      // Room for some growth, so a steady trickle of new builds does not copy the bitmap each time.
      const grown = new Uint32Array(Math.max(need, Math.ceil(list.words.length * 1.25)));
      grown.set(list.words);
      this.bytes += (grown.length - list.words.length) * 4;
      list.words = grown;
    }
    setSeqBits(list.words, text);
    list.upTo = Math.max(list.upTo, latest);
  }

  private evict(keep: string): void {
    for (const [key, list] of this.lists) {
      if (this.bytes <= this.maxBytes) return;
      if (key === keep) continue;
      this.lists.delete(key);
      this.bytes -= list.words.length * 4;
    }
  }
}

/**
 * The seqs set in every bitmap, in order (descending when `reverse`), from `first` (inclusive):
 * 32 builds per step, one AND per bitmap.
 */
export function* intersect(lists: readonly Postings[], first: number, reverse: boolean): Generator<number> {
  if (lists.length === 0 || first < 0) return;
  const words = lists.map((l) => l.words);
  // Past the shortest bitmap no seq is in all of them.
  const n = Math.min(...words.map((w) => w.length));
  if (!reverse) {
    let w = first >>> 5;
    let mask = -1 << (first & 31);
    for (; w < n; w++, mask = -1) {
      let x = mask;
      for (const ws of words) x &= ws[w]!;
      while (x !== 0) {
        const low = x & -x;
        yield w * 32 + 31 - Math.clz32(low);
        x ^= low;
      }
    }
    return;
  }
  let w = first >>> 5;
  let mask = (first & 31) === 31 ? -1 : (1 << ((first & 31) + 1)) - 1;
  if (w >= n) {
    w = n - 1;
    mask = -1;
  }
  for (; w >= 0; w--, mask = -1) {
    let x = mask;
    for (const ws of words) x &= ws[w]!;
    while (x !== 0) {
      const bit = 31 - Math.clz32(x);
      yield w * 32 + bit;
      x &= ~(1 << bit);
    }
  }
}
