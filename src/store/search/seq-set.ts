// A set of builds given to a search statement as a bitmap over seqs (bit s of word s >>> 5), the
// form in which the analytics index answers a query (analytics-index.ts `matching`). A statement
// over the test dimension's index then tests each entry's seq against the set instead of joining
// the build and testing the query on it: on SQLite a test's walk of the index by seq read its
// entries about four times faster so (measured at 20 million executions, docs/tests.md).
//
// The bitmap travels as the statement's parameter (a Uint32Array); each database tests it as its
// layout says (schema/layout.ts `seqSet`). On SQLite that is a function defined on every
// connection that runs searches (the search threads' and the server's own, where a search runs
// should a thread fail). A SQL function gets a blob argument as a fresh copy on every call, so the
// connection's thread puts the bitmap in its own registry just before the statement runs, binds the
// registry's number in its place (bindSeqSets), and takes it out after (release).

import type BetterSqlite3 from 'better-sqlite3';
import type { RawBuilder, SqlBool } from 'kysely';
import type { DialectName } from '../../db/database.js';
import { layoutOf, SEQ_SET_FUNCTION } from '../schema/layout.js';

/** The sets a connection of this thread tests, by the number bound in their place. */
const registry = new Map<number, Uint32Array>();
let nextId = 1;

/** Called before each test: the search threads stop a statement past its deadline here (read-worker.ts). */
let beforeEach: () => void = () => undefined;

function inSet(id: unknown, seq: unknown): number {
  beforeEach();
  const words = registry.get(Number(id));
  if (words === undefined) throw new Error(`${SEQ_SET_FUNCTION}: no set ${String(id)} in this thread`);
  return hasSeq(words, Number(seq)) ? 1 : 0;
}

const defined = new WeakSet<BetterSqlite3.Database>();

/**
 * Defines the set function on a SQLite connection of this thread (once per connection). `check`
 * runs before each test: a statement that tests a set needs no deadline check of its own, one
 * function call a row less (a walk of 445,000 index entries took 330 ms with one call a row, 470
 * ms with two).
 */
export function defineSeqSetFunction(db: BetterSqlite3.Database, check?: () => void): void {
  if (check !== undefined) beforeEach = check;
  if (defined.has(db)) return;
  db.function(SEQ_SET_FUNCTION, { deterministic: true }, inSet);
  defined.add(db);
}

/**
 * The parameters with every set replaced by the number of its place in this thread's registry,
 * and the release of those places (call it when the statement's rows are read).
 */
export function bindSeqSets(parameters: readonly unknown[]): { readonly parameters: readonly unknown[]; release(): void } {
  if (!parameters.some((p) => p instanceof Uint32Array)) return { parameters, release: () => undefined };
  const ids: number[] = [];
  const bound = parameters.map((p) => {
    if (!(p instanceof Uint32Array)) return p;
    const id = nextId++;
    registry.set(id, p);
    ids.push(id);
    return id;
  });
  return { parameters: bound, release: () => ids.forEach((id) => registry.delete(id)) };
}

/** The condition that `seq` is in the set `words`, the set its own parameter. */
export function inSeqSet(dialect: DialectName, seq: RawBuilder<unknown>, words: Uint32Array): RawBuilder<SqlBool> {
  const test = layoutOf(dialect).seqSet;
  return test.contains(seq, words, test.value(words));
}

/** The lowest and highest seq in the set, or undefined when it is empty. */
export function seqBounds(words: Uint32Array): { readonly first: number; readonly last: number } | undefined {
  let lo = 0;
  while (lo < words.length && words[lo] === 0) lo++;
  if (lo === words.length) return undefined;
  let hi = words.length - 1;
  while (words[hi] === 0) hi--;
  const low = words[lo]! & -words[lo]!;
  return { first: lo * 32 + 31 - Math.clz32(low), last: hi * 32 + 31 - Math.clz32(words[hi]!) };
}

/**
 * The set cut into ranges of seqs [first, last], in order, each holding at most `perRange` of its
 * seqs (by whole words of 32), so that a read of the set's rows can go a range at a time.
 */
export function seqRanges(words: Uint32Array, perRange: number): [number, number][] {
  const ranges: [number, number][] = [];
  let start = -1;
  let held = 0;
  for (let w = 0; w < words.length; w++) {
    const bits = popcount(words[w]!);
    if (bits === 0) continue;
    if (start >= 0 && held + bits > perRange) {
      ranges.push([start, w * 32 - 1]);
      start = -1;
      held = 0;
    }
    if (start < 0) start = w * 32;
    held += bits;
  }
  if (start >= 0) ranges.push([start, words.length * 32 - 1]);
  return ranges;
}

/** The number of seqs in the set. */
export function seqCount(words: Uint32Array): number {
  let n = 0;
  for (const w of words) n += popcount(w);
  return n;
}

/** Whether seq `seq` is in the set. */
export function hasSeq(words: Uint32Array, seq: number): boolean {
  return seq >= 0 && seq < words.length * 32 && ((words[seq >>> 5]! >>> (seq & 31)) & 1) === 1;
}

function popcount(v: number): number {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
