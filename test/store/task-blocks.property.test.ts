// The analytics index's task sums by block (src/store/analytics/task-blocks.ts) against the same
// sums build by build: any available builds, tasks (failed or not, durations past 32 bits),
// task counts past a byte, picked builds and periods, blocks of 1 to 16 seqs, the same blocks used
// again after builds were read or deleted.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TASK_COUNT_COLUMNS } from '../../src/store/events/tasks.js';
import { SmallNumbers } from '../../src/store/analytics/small-numbers.js';
import { TaskBlocks, type Picked, type TaskColumns } from '../../src/store/analytics/task-blocks.js';

const WIDTH = TASK_COUNT_COLUMNS.length;
const PATHS = 4;

const genBuild = fc.record({
  available: fc.boolean(),
  picked: fc.nat(9),
  tasks: fc.array(fc.record({ path: fc.nat(PATHS - 1), failed: fc.boolean(), duration: fc.oneof(fc.nat(100), fc.constantFrom(0, 5_000, 2 ** 32 + 7)) }), { maxLength: 4 }),
  counts: fc.array(fc.oneof(fc.nat(3), fc.constant(300)), { minLength: WIDTH, maxLength: WIDTH }),
});

const genCase = fc.record({
  builds: fc.array(genBuild, { minLength: 1, maxLength: 70 }),
  shift: fc.integer({ min: 1, max: 4 }),
  // Builds per period (consecutive seqs share one) and periods in all.
  span: fc.integer({ min: 1, max: 40 }),
  n: fc.integer({ min: 1, max: 4 }),
  // Seqs read when first summed (the rest read later), and builds deleted then.
  firstRead: fc.nat(70),
  deleted: fc.array(fc.nat(69), { maxLength: 6 }),
});

/** The columns of builds 1..builds.length (seq = index + 1). */
function columnsOf(builds: readonly (typeof genBuild extends fc.Arbitrary<infer T> ? T : never)[]): TaskColumns {
  const available = new Uint32Array((builds.length >>> 5) + 2);
  const taskStart = new Uint32Array(builds.length + 2);
  const tasks = builds.flatMap((b) => b.tasks);
  const taskKeys = new Uint32Array(tasks.length);
  const taskDurations = new SmallNumbers(new Uint32Array(tasks.length));
  const taskCounts = new SmallNumbers(new Uint8Array((builds.length + 2) * WIDTH));
  let t = 0;
  builds.forEach((b, k) => {
    const s = k + 1;
    if (b.available) available[s >>> 5] = available[s >>> 5]! | (1 << (s & 31));
    taskStart[s] = t;
    for (const task of b.tasks) {
      taskKeys[t] = task.path * 2 + (task.failed ? 1 : 0);
      taskDurations.set(t++, task.duration);
    }
    b.counts.forEach((v, j) => taskCounts.set(s * WIDTH + j, v));
  });
  taskStart[builds.length + 1] = t;
  return { available, taskStart, taskKeys, taskDurations, taskCounts, paths: PATHS };
}

/** Most available builds up to `upTo` (a tenth left out), each in period floor(seq / span) mod n. */
function pick(c: TaskColumns, builds: readonly { picked: number }[], upTo: number, span: number, n: number): Picked {
  const seqs: number[] = [];
  for (let s = 1; s <= upTo; s++) if ((c.available[s >>> 5]! & (1 << (s & 31))) !== 0 && builds[s - 1]!.picked !== 0) seqs.push(s);
  return { seqs: Uint32Array.from(seqs), periods: Uint32Array.from(seqs, (s) => Math.floor(s / span) % n) };
}

describe('task sums by block', () => {
  it('equal the sums build by build, blocks used again after builds were read or deleted', async () => {
    await fc.assert(
      fc.asyncProperty(genCase, async (c) => {
        const columns = columnsOf(c.builds);
        const blocks = new TaskBlocks(c.shift, 8);
        const byBuild = () => new TaskBlocks(0, 8);
        // Part of the builds read, then all of them.
        const early = Math.min(c.firstRead, c.builds.length);
        let picked = pick(columns, c.builds, early, c.span, c.n);
        expect(await blocks.sums(columns, early, picked, c.n)).toEqual(await byBuild().sums(columns, early, picked, c.n));
        const upTo = c.builds.length;
        picked = pick(columns, c.builds, upTo, c.span, c.n);
        expect(await blocks.sums(columns, upTo, picked, c.n)).toEqual(await byBuild().sums(columns, upTo, picked, c.n));
        // Deleted builds: out of `available`, their blocks dropped.
        for (const d of c.deleted) {
          const s = (d % upTo) + 1;
          if ((columns.available[s >>> 5]! & (1 << (s & 31))) === 0) continue;
          columns.available[s >>> 5] = columns.available[s >>> 5]! & ~(1 << (s & 31));
          blocks.drop(s);
        }
        picked = pick(columns, c.builds, upTo, c.span, c.n);
        expect(await blocks.sums(columns, upTo, picked, c.n)).toEqual(await byBuild().sums(columns, upTo, picked, c.n));
      }),
      { numRuns: 400 },
    );
  });
});
