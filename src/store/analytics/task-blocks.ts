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

import { setImmediate as turn } from 'node:timers/promises';
import { TASK_COUNT_COLUMNS } from '../events/tasks.js';
import { LARGE_MARK, SMALL_MARK, type SmallNumbers } from './small-numbers.js';

/** The builds of a trend: their seqs in ascending order, and each one's period. */
export interface Picked {
  readonly seqs: Uint32Array;
  readonly periods: Uint32Array;
}

/** A trend's task sums: counts by period (period i's at i * width), whether a period had builds, and by path index. */
export interface TaskSums {
  readonly counts: Float64Array;
  readonly seen: Uint8Array;
  readonly runs: Uint32Array;
  readonly failures: Uint32Array;
  readonly sum: Float64Array;
  /** -Infinity for a path that did not run. */
  readonly max: Float64Array;
}

/**
 * The share of a block's available builds a trend must pick for the block's sums to serve: the
 * rest are taken back out one by one.
 */
const BLOCK_SHARE = 0.75;

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

/**
 * Adds build s's task counts to counts[at..at + width) and its tasks that ran to the sums by path
 * (a value past its array's is beside it, SmallNumbers).
 */
function addBuild(c: TaskColumns, s: number, counts: Float64Array, at: number, paths: { runs: Uint32Array; failures: Uint32Array; sum: Float64Array; max: Float64Array }): void {
  const counted = c.taskCounts.data;
  const durations = c.taskDurations.data;
  for (let j = 0, from = s * WIDTH; j < WIDTH; j++, from++) {
    const v = counted[from]!;
    counts[at + j]! += v === SMALL_MARK ? c.taskCounts.get(from) : v;
  }
  const { runs, failures, sum, max } = paths;
  for (let t = c.taskStart[s]!; t < c.taskStart[s + 1]!; t++) {
    const key = c.taskKeys[t]!;
    const p = key >>> 1;
    const d = durations[t] === LARGE_MARK ? c.taskDurations.get(t) : durations[t]!;
    runs[p]!++;
    failures[p]! += key & 1;
    sum[p]! += d;
    if (d > max[p]!) max[p] = d;
  }
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
    addBuild(c, s, counts, 0, { runs, failures, sum, max });
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

/**
 * The sums of blocks of 2^shift seqs (at most 2^30; 0: every build by itself), summed on first
 * use and again when builds of the block were read or deleted since.
 */
export class TaskBlocks {
  private blocks: (BlockSums | undefined)[] = [];
  /** What the sums take, about. */
  bytes = 0;
  private readonly shift: number;

  /** `yieldBuilds`: builds summed between two turns of the event loop. */
  constructor(
    shift: number,
    private readonly yieldBuilds: number,
  ) {
    this.shift = Math.max(0, Math.min(shift, 30));
  }

  /** The build with this seq was deleted. */
  drop(seq: number): void {
    const b = seq >>> this.shift;
    const block = this.blocks[b];
    if (block === undefined) return;
    this.bytes -= blockBytes(block);
    this.blocks[b] = undefined;
  }

  clear(): void {
    this.blocks = [];
    this.bytes = 0;
  }

  /**
   * The task sums of the picked builds (every one at most `upTo`, the last seq read), into `n`
   * periods. Block by block: a block whose picked builds are all of one period and at least
   * BLOCK_SHARE of its available builds adds its sums and takes back those of the others, unless
   * one of those holds a longest run of the block (a longest run cannot be taken back); any other
   * block's builds are added one by one. The server's other requests get their turn between parts:
   * a 30-day trend of half a million builds sums ~5 million tasks (~150-200 ms build by build).
   */
  async sums(c: TaskColumns, upTo: number, { seqs, periods }: Picked, n: number): Promise<TaskSums> {
    const width = WIDTH;
    const counts = new Float64Array(n * width);
    const seen = new Uint8Array(n);
    const runs = new Uint32Array(c.paths);
    const failures = new Uint32Array(c.paths);
    const sum = new Float64Array(c.paths);
    const max = new Float64Array(c.paths).fill(-Infinity);
    const { taskStart, taskKeys } = c;
    // A block's longest runs by path, while the builds it leaves out are checked against them.
    const blockMax = new Float64Array(c.paths).fill(-Infinity);
    const byPath = { runs, failures, sum, max };
    const addBuilds = (lo: number, hi: number): void => {
      for (let k = lo; k < hi; k++) {
        seen[periods[k]!] = 1;
        addBuild(c, seqs[k]!, counts, periods[k]! * width, byPath);
      }
    };
    const addBlock = (block: BlockSums, i: number, others: readonly number[]): boolean => {
      for (let j = 0; j < block.paths.length; j++) blockMax[block.paths[j]!] = block.max[j]!;
      let longestKept = true;
      for (const s of others) for (let t = taskStart[s]!; t < taskStart[s + 1]! && longestKept; t++) longestKept = durationOf(c, t) < blockMax[taskKeys[t]! >>> 1]!;
      for (let j = 0; j < block.paths.length; j++) blockMax[block.paths[j]!] = -Infinity;
      if (!longestKept) return false;
      seen[i] = 1;
      for (let j = 0; j < width; j++) counts[i * width + j]! += block.counts[j]!;
      for (let j = 0; j < block.paths.length; j++) {
        const p = block.paths[j]!;
        runs[p]! += block.runs[j]!;
        failures[p]! += block.failures[j]!;
        sum[p]! += block.sum[j]!;
        if (block.max[j]! > max[p]!) max[p] = block.max[j]!;
      }
      for (const s of others) {
        for (let j = 0; j < width; j++) counts[i * width + j]! -= countOf(c, s, j);
        for (let t = taskStart[s]!; t < taskStart[s + 1]!; t++) {
          const key = taskKeys[t]!;
          runs[key >>> 1]!--;
          failures[key >>> 1]! -= key & 1;
          sum[key >>> 1]! -= durationOf(c, t);
        }
      }
      return true;
    };
    const size = 2 ** this.shift;
    let since = 0;
    for (let lo = 0; lo < seqs.length; ) {
      const b = seqs[lo]! >>> this.shift;
      let hi = lo + 1;
      while (hi < seqs.length && seqs[hi]! >>> this.shift === b) hi++;
      const i = periods[lo]!;
      let onePeriod = true;
      for (let k = lo + 1; k < hi && onePeriod; k++) onePeriod = periods[k] === i;
      const first = Math.max(b * size, 1);
      const last = Math.min((b + 1) * size - 1, upTo);
      let added = false;
      if (onePeriod && hi - lo > 1 && hi - lo >= countAvailable(c.available, first, last) * BLOCK_SHARE) {
        const others: number[] = [];
        for (let s = first, k = lo; s <= last; s++) {
          if (k < hi && seqs[k] === s) k++;
          else if (isAvailable(c.available, s)) others.push(s);
        }
        added = addBlock(this.block(c, b, first, last), i, others);
      }
      if (!added) addBuilds(lo, hi);
      since += hi - lo;
      if (since >= this.yieldBuilds) {
        since = 0;
        await turn();
      }
      lo = hi;
    }
    return { counts, seen, runs, failures, sum, max };
  }

  /** The sums of block b (seqs first..last, last the block's or the last read). */
  private block(c: TaskColumns, b: number, first: number, last: number): BlockSums {
    let block = this.blocks[b];
    if (block === undefined || block.last < last) {
      if (block !== undefined) this.bytes -= blockBytes(block);
      block = sumBlock(c, first, last);
      this.blocks[b] = block;
      this.bytes += blockBytes(block);
    }
    return block;
  }
}
