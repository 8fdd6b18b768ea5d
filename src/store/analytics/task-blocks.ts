// The analytics index's tasks summed by block of seqs, for the trends of queries that match most
// builds (analytics-index.ts `byBlocks`).
//
// Why: a 30-day trend of `-user:bot` at a million demo builds summed 8.8 million tasks build by
// build: 96 ms for the task paths and 28 ms for the task counts, of 260 ms (SQLite, in one
// process). When most of a block's builds are picked, all in one period, the block's sums less
// those of its few builds left out are the same numbers, for a few hundred additions instead of
// thousands. Sums of whole numbers in doubles are exact below 2^53 in any order, so the answer is
// the one build by build (test/store/analytics-index.test.ts compares both with the direct SQL
// path). A longest run cannot be taken back out: where a build left out holds a block's longest
// run of a path, that block is summed build by build.

import { TASK_COUNT_COLUMNS } from '../events/tasks.js';
import { LARGE_MARK, SMALL_MARK, type SmallNumbers } from './small-numbers.js';

/** The analytics index's task columns, by seq. */
export interface TaskColumns {
  readonly available: Uint32Array;
  /** The tasks of seq s: taskKeys/taskDurations[taskStart[s] .. taskStart[s + 1]). */
  readonly taskStart: Uint32Array;
  /** A task's path index times two, plus one when it failed. */
  readonly taskKeys: Uint32Array;
  readonly taskDurations: SmallNumbers<Uint32Array>;
  /** Task counts of seq s in TASK_COUNT_COLUMNS order, at s * width + k. */
  readonly taskCounts: SmallNumbers<Uint8Array>;
  /** Path indexes are below this. */
  readonly paths: number;
}

/** The tasks of the available builds of seqs first..last, summed; by path, only the paths that ran. */
export interface BlockSums {
  readonly last: number;
  /** Available builds summed. */
  readonly builds: number;
  readonly counts: Float64Array;
  readonly paths: Uint32Array;
  readonly runs: Uint32Array;
  readonly failures: Uint32Array;
  readonly sum: Float64Array;
  readonly max: Float64Array;
}

const WIDTH = TASK_COUNT_COLUMNS.length;

export function isAvailable(available: Uint32Array, seq: number): boolean {
  return ((available[seq >>> 5] ?? 0) & (1 << (seq & 31))) !== 0;
}

/** A task's duration (SmallNumbers keeps the few past 32 bits beside the array). */
export function durationOf(c: TaskColumns, t: number): number {
  const d = c.taskDurations.data[t]!;
  return d === LARGE_MARK ? c.taskDurations.get(t) : d;
}

/** Task count k of seq s. */
export function countOf(c: TaskColumns, s: number, k: number): number {
  const at = s * WIDTH + k;
  const v = c.taskCounts.data[at]!;
  return v === SMALL_MARK ? c.taskCounts.get(at) : v;
}

/** Sums the tasks of the available builds with seq in first..last. */
export function sumBlock(c: TaskColumns, first: number, last: number): BlockSums {
  const counts = new Float64Array(WIDTH);
  const runs = new Uint32Array(c.paths);
  const failures = new Uint32Array(c.paths);
  const sum = new Float64Array(c.paths);
  const max = new Float64Array(c.paths).fill(-Infinity);
  let builds = 0;
  for (let s = first; s <= last; s++) {
    if (!isAvailable(c.available, s)) continue;
    builds++;
    for (let k = 0; k < WIDTH; k++) counts[k]! += countOf(c, s, k);
    for (let t = c.taskStart[s]!; t < c.taskStart[s + 1]!; t++) {
      const key = c.taskKeys[t]!;
      const p = key >>> 1;
      const d = durationOf(c, t);
      runs[p]!++;
      failures[p]! += key & 1;
      sum[p]! += d;
      if (d > max[p]!) max[p] = d;
    }
  }
  const ran: number[] = [];
  for (let p = 0; p < c.paths; p++) if (runs[p]! > 0) ran.push(p);
  const paths = Uint32Array.from(ran);
  return {
    last,
    builds,
    counts,
    paths,
    runs: Uint32Array.from(ran, (p) => runs[p]!),
    failures: Uint32Array.from(ran, (p) => failures[p]!),
    sum: Float64Array.from(ran, (p) => sum[p]!),
    max: Float64Array.from(ran, (p) => max[p]!),
  };
}

/** Bytes a block's sums take, about (for the index's size). */
export function blockBytes(b: BlockSums): number {
  return 64 + WIDTH * 8 + b.paths.length * (4 + 4 + 4 + 8 + 8);
}

/** How many of the seqs first..last are available. */
export function countAvailable(available: Uint32Array, first: number, last: number): number {
  let n = 0;
  let s = first;
  for (; s <= last && (s & 31) !== 0; s++) if (isAvailable(available, s)) n++;
  for (; s + 31 <= last; s += 32) n += bitCount(available[s >>> 5] ?? 0);
  for (; s <= last; s++) if (isAvailable(available, s)) n++;
  return n;
}

function bitCount(x: number): number {
  x = x - ((x >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
