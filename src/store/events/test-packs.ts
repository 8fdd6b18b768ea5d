// A build's test executions and failures in two values, with its start: a row of test_packs (store
// migration 0024), the form the Tests page's counts and failure groups read for a query the
// rollups do not answer. Counting from test_runs' indexes tests every one of their entries against
// the query's builds (20 million at 100,000 builds: 10-22 s, docs/tests.md); counting from packs
// reads only the matching builds, one row each, and a search thread folds them into per-test and
// per-group counts in a tight loop.
//
// Formats (frozen: stored rows carry them), unsigned LEB128 varints:
// - runs: the build's executions ordered by test id (then outcome and duration), each as
//   `(test id - previous test id) * 4 + outcome` (TEST_OUTCOME_CODES; the previous id -1 for the
//   first) and the duration in whole ms. A retry of a test has a delta of 0, which is how a build
//   is counted once per test. Durations are whole ms (event timestamps are integers), so the sums
//   are exact, as SQL's are.
// - failures: the failed attempts and the build's own failures ordered by group id, then test, each
//   as `group id - previous group id` (the previous -1 for the first; 0: the same group again) and
//   `test id + 1`, or 0 for a failure of the build's own. None: NULL.

import { TEST_OUTCOME_CODES, TEST_OUTCOME_OF_CODE } from './test-runs.js';
import type { TestOutcome } from './test-events.js';
import { assertNever } from '../../query/assert.js';
import type { TestCounts, TestIdentityRow } from '../types.js';

/** One execution of a pack: test id, outcome code, duration in whole ms. */
export type PackedTestRun = readonly [testId: number, outcome: number, durationMs: number];

function pushVarint(out: number[], v: number): void {
  while (v >= 128) {
    out.push((v % 128) + 128);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

/** The pack of one build's executions (in any order); a Buffer, which both database drivers bind as bytes. */
export function encodeTestPack(runs: readonly PackedTestRun[]): Buffer {
  // One order whatever the input's, so a build has one pack (a retry's entries by outcome, then duration).
  const sorted = [...runs].sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  const out: number[] = [];
  let previous = -1;
  for (const [id, outcome, duration] of sorted) {
    pushVarint(out, (id - previous) * 4 + outcome);
    pushVarint(out, Math.max(0, Math.round(duration)));
    previous = id;
  }
  return Buffer.from(out);
}

/** A row of test_packs: the build's seq and start, its executions' pack and its failures' (or null). */
export type TestPackRow = readonly [seq: number, start: number | null, runs: Buffer, failures: Buffer | null];

/** A build's execution as a pack row is made of: its test id, outcome code, duration and failure group (or null). */
export type PackRun = readonly [seq: number, testId: number, outcome: number, durationMs: number, groupId: number | null];

/**
 * The test_packs rows of builds (seq and start; those with neither runs nor failures get none),
 * from their executions and their own failures' groups ([seq, group id]), in any order.
 */
export function testPackRows(builds: Iterable<readonly [seq: number, start: number | null]>, runs: Iterable<PackRun>, own: Iterable<readonly [seq: number, groupId: number]>): TestPackRow[] {
  const executions = new Map<number, PackedTestRun[]>();
  const failures = new Map<number, PackedFailure[]>();
  const add = <T>(m: Map<number, T[]>, seq: number, v: T) => {
    const list = m.get(seq);
    if (list === undefined) m.set(seq, [v]);
    else list.push(v);
  };
  for (const [seq, test, outcome, duration, group] of runs) {
    add(executions, seq, [test, outcome, duration] as const);
    if (group !== null) add(failures, seq, [group, test] as const);
  }
  for (const [seq, group] of own) add(failures, seq, [group, null] as const);
  const rows: TestPackRow[] = [];
  for (const [seq, start] of builds) {
    const ran = executions.get(seq) ?? [];
    const failed = failures.get(seq) ?? [];
    if (ran.length > 0 || failed.length > 0) rows.push([seq, start, encodeTestPack(ran), encodeFailurePack(failed)]);
  }
  return rows;
}

/** Per-test counts of a set of builds' packs, for the tests they ran (partial: sums of several merge by addition, except latest, by max). */
export interface TestCountsPart {
  readonly ids: Float64Array;
  /** Executions not skipped. */
  readonly runs: Float64Array;
  readonly failures: Float64Array;
  readonly skipped: Float64Array;
  /** Builds that ran the test. */
  readonly builds: Float64Array;
  /** All executions, and the sum of their durations (the mean is their quotient). */
  readonly executions: Float64Array;
  readonly durationSum: Float64Array;
  /** The latest execution, as `seq * 4 + outcome code` (latestRun): the greatest is the latest. */
  readonly latest: Float64Array;
}

/**
 * A test's latest execution in builds, as one number: `seq * 4 + outcome code`, so that the
 * greatest is the latest build's and, of its attempts, the one test_runs' index (test_id, seq,
 * outcome, ...) orders last, which is the one a walk of that index back from the newest finds
 * first (SQL: `max(seq * 4 + outcome)`).
 */
function latestRun(seq: number, outcome: number): number {
  return seq * 4 + outcome;
}

/** The build and outcome of a latestRun number. */
export function ofLatestRun(latest: number): { readonly seq: number; readonly outcome: TestOutcome } {
  const code = latest % 4;
  return { seq: (latest - code) / 4, outcome: TEST_OUTCOME_OF_CODE[code] ?? 'skipped' };
}

const FAILED = TEST_OUTCOME_CODES.failed;
const SKIPPED = TEST_OUTCOME_CODES.skipped;

/** Where varint() reads next in the pack being folded (a fold is synchronous, one pack at a time). */
let cursor = 0;

/** The varint at `cursor` in `pack`; moves `cursor` past it. */
function varint(pack: Uint8Array): number {
  let b = pack[cursor++]!;
  if (b < 128) return b;
  let v = b - 128;
  for (let scale = 128; ; scale *= 128) {
    b = pack[cursor++]!;
    v += (b & 127) * scale;
    if (b < 128) return v;
  }
}

/** The fields of one test in TestCountsFold's array, in this order. */
const EXECUTIONS = 0;
const DURATION_SUM = 1;
const FAILURES = 2;
const SKIPS = 3;
const BUILDS = 4;
const LATEST = 5;
const STRIDE = 8;

/**
 * Folds packs into per-test counts, one build at a time (a search thread iterates a statement's
 * rows into it without holding them). A test's counts are 8 numbers of one array, at 8 times its
 * id: one cache line a test (one array per field took twice as long). The array grows to the
 * highest test id seen: 64 bytes a test of the store (64 MB at a million tests), for the fold's
 * time only.
 */
class TestCountsFold {
  private size = 0;
  private counts: Float64Array = new Float64Array(1024 * STRIDE);

  // The loop of the Tests page's counts: 10 million executions for a query of half of 100,000
  // builds.
  add(seq: number, pack: Uint8Array, from: number, to: number): void {
    let counts = this.counts;
    const n = to;
    cursor = from;
    let at = -STRIDE;
    const runOf = latestRun(seq, 0);
    while (cursor < n) {
      const v = varint(pack);
      const duration = varint(pack);
      const outcome = v % 4;
      const delta = (v - outcome) / 4;
      // A delta of 0 is the same test again (a retry): its build is counted once.
      if (delta !== 0) {
        at += delta * STRIDE;
        if (at >= counts.length) counts = this.grow(at);
        counts[at + BUILDS]! += 1;
      }
      // Every attempt: a build's are in outcome order, the last of them is its latest.
      if (counts[at + LATEST]! < runOf + outcome) counts[at + LATEST] = runOf + outcome;
      counts[at + EXECUTIONS]! += 1;
      counts[at + DURATION_SUM]! += duration;
      if (outcome === FAILED) counts[at + FAILURES]! += 1;
      else if (outcome === SKIPPED) counts[at + SKIPS]! += 1;
    }
    const size = at / STRIDE + 1;
    if (size > this.size) this.size = size;
  }

  /** The counts of every test seen, by ascending id. */
  part(): TestCountsPart {
    const c = this.counts;
    let n = 0;
    for (let at = EXECUTIONS; at < this.size * STRIDE; at += STRIDE) if (c[at]! > 0) n++;
    const part = { ids: new Float64Array(n), runs: new Float64Array(n), failures: new Float64Array(n), skipped: new Float64Array(n), builds: new Float64Array(n), executions: new Float64Array(n), durationSum: new Float64Array(n), latest: new Float64Array(n) };
    // Plain loops: Float64Array.from with a function, 8 times over the tests, took 100 ms of the
    // 310 ms that 12 ranges' folds took (50,000 builds, 12,420 tests).
    for (let id = 0, i = 0; id < this.size; id++) {
      const at = id * STRIDE;
      if (c[at + EXECUTIONS] === 0) continue;
      part.ids[i] = id;
      part.runs[i] = c[at + EXECUTIONS]! - c[at + SKIPS]!;
      part.failures[i] = c[at + FAILURES]!;
      part.skipped[i] = c[at + SKIPS]!;
      part.builds[i] = c[at + BUILDS]!;
      part.executions[i] = c[at + EXECUTIONS]!;
      part.durationSum[i] = c[at + DURATION_SUM]!;
      part.latest[i] = c[at + LATEST]!;
      i++;
    }
    return part;
  }

  private grow(at: number): Float64Array {
    const grown = new Float64Array(Math.max(at + STRIDE, this.counts.length * 2));
    grown.set(this.counts);
    return (this.counts = grown);
  }
}

/** One test's counts over every part (parts of disjoint builds). */
export type TestCountsTotal = Omit<TestCounts, keyof TestIdentityRow> & { readonly testId: number };

/** The parts' counts summed per test, the tests with most failures first (ties: most runs, id), at most `limit`. */
export function topTestCounts(parts: readonly TestCountsPart[], limit: number): TestCountsTotal[] {
  const totals = new Map<number, { runs: number; failures: number; skipped: number; builds: number; executions: number; durationSum: number; latest: number }>();
  for (const p of parts) {
    for (let i = 0; i < p.ids.length; i++) {
      const id = p.ids[i]!;
      const t = totals.get(id);
      if (t === undefined) {
        totals.set(id, { runs: p.runs[i]!, failures: p.failures[i]!, skipped: p.skipped[i]!, builds: p.builds[i]!, executions: p.executions[i]!, durationSum: p.durationSum[i]!, latest: p.latest[i]! });
        continue;
      }
      t.runs += p.runs[i]!;
      t.failures += p.failures[i]!;
      t.skipped += p.skipped[i]!;
      t.builds += p.builds[i]!;
      t.executions += p.executions[i]!;
      t.durationSum += p.durationSum[i]!;
      t.latest = Math.max(t.latest, p.latest[i]!);
    }
  }
  return [...totals]
    .sort(([ia, a], [ib, b]) => b.failures - a.failures || b.runs - a.runs || ia - ib)
    .slice(0, limit)
    .map(([testId, t]) => {
      const latest = ofLatestRun(t.latest);
      return { testId, runs: t.runs, failures: t.failures, skipped: t.skipped, builds: t.builds, meanDurationMs: t.durationSum / t.executions, lastSeq: latest.seq, latestOutcome: latest.outcome };
    });
}

/** One failure of a build: its group, and the test that failed (null: a failure of the build's own). */
export type PackedFailure = readonly [groupId: number, testId: number | null];

/** The pack of one build's failures, or null for none. */
export function encodeFailurePack(failures: readonly PackedFailure[]): Buffer | null {
  if (failures.length === 0) return null;
  const keyed = failures.map(([group, test]) => [group, test === null ? 0 : test + 1] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out: number[] = [];
  let previous = -1;
  for (const [group, test] of keyed) {
    pushVarint(out, group - previous);
    pushVarint(out, test);
    previous = group;
  }
  return Buffer.from(out);
}

/** The varints of a pack's bytes [from, to), in order. */
function varints(pack: Uint8Array, from: number, to: number): number[] {
  const out: number[] = [];
  for (cursor = from; cursor < to; ) out.push(varint(pack));
  return out;
}

/** Per-group counts of a set of builds' failure packs (as TestCountsPart: sums, first and last by min and max, tests by union). */
export interface FailureGroupsPart {
  readonly ids: Float64Array;
  readonly builds: Float64Array;
  readonly failures: Float64Array;
  /** The least and greatest start of the builds (NaN: none had one). */
  readonly firstSeen: Float64Array;
  readonly lastSeen: Float64Array;
  readonly lastSeq: Float64Array;
  /** The tests each group hit: group i's are tests[testsFrom[i]] up to testsFrom[i + 1]. */
  readonly testsFrom: Float64Array;
  readonly tests: Float64Array;
}

interface GroupTotal {
  builds: number;
  failures: number;
  firstSeen: number;
  lastSeen: number;
  lastSeq: number;
  readonly tests: Set<number>;
}

const newGroupTotal = (): GroupTotal => ({ builds: 0, failures: 0, firstSeen: NaN, lastSeen: NaN, lastSeq: 0, tests: new Set() });

/** NaN where there is none: the least of two. */
const least = (a: number, b: number): number => (Number.isNaN(a) ? b : Number.isNaN(b) ? a : Math.min(a, b));
const greatest = (a: number, b: number): number => (Number.isNaN(a) ? b : Number.isNaN(b) ? a : Math.max(a, b));

/** Folds failure packs into per-group counts, one build at a time (a few failures a build: a map, not arrays by id). */
class FailureGroupsFold {
  private readonly groups = new Map<number, GroupTotal>();

  /** A build's failures, the bytes [from, to) of `pack`; `when`: its start (NaN: none). */
  add(seq: number, when: number, pack: Uint8Array, from: number, to: number): void {
    const v = varints(pack, from, to);
    let group = -1;
    let total: GroupTotal | undefined;
    for (let i = 0; i < v.length; i += 2) {
      if (v[i] !== 0 || total === undefined) {
        group += v[i]!;
        total = this.groups.get(group);
        if (total === undefined) this.groups.set(group, (total = newGroupTotal()));
        total.builds += 1;
        total.firstSeen = least(total.firstSeen, when);
        total.lastSeen = greatest(total.lastSeen, when);
        total.lastSeq = Math.max(total.lastSeq, seq);
      }
      total.failures += 1;
      if (v[i + 1] !== 0) total.tests.add(v[i + 1]! - 1);
    }
  }

  /** The counts of every group seen, by ascending id. */
  part(): FailureGroupsPart {
    const ids = [...this.groups.keys()].sort((a, b) => a - b);
    const n = ids.length;
    const part = { ids: Float64Array.from(ids), builds: new Float64Array(n), failures: new Float64Array(n), firstSeen: new Float64Array(n), lastSeen: new Float64Array(n), lastSeq: new Float64Array(n), testsFrom: new Float64Array(n + 1), tests: new Float64Array(0) };
    let hit = 0;
    for (const t of this.groups.values()) hit += t.tests.size;
    part.tests = new Float64Array(hit);
    let k = 0;
    for (let i = 0; i < n; i++) {
      const t = this.groups.get(ids[i]!)!;
      part.builds[i] = t.builds;
      part.failures[i] = t.failures;
      part.firstSeen[i] = t.firstSeen;
      part.lastSeen[i] = t.lastSeen;
      part.lastSeq[i] = t.lastSeq;
      for (const test of t.tests) part.tests[k++] = test;
      part.testsFrom[i + 1] = k;
    }
    return part;
  }
}

/** One group's counts over every part (parts of disjoint builds); first and last seen null when no build had a start. */
export interface FailureGroupsTotal {
  readonly groupId: number;
  readonly builds: number;
  readonly tests: number;
  readonly failures: number;
  readonly firstSeen: number | null;
  readonly lastSeen: number | null;
  readonly lastSeq: number;
}

/** The parts' counts summed per group, the groups with most builds first (ties: id), at most `limit`. */
export function topFailureGroups(parts: readonly FailureGroupsPart[], limit: number): FailureGroupsTotal[] {
  const totals = new Map<number, GroupTotal>();
  for (const p of parts) {
    for (let i = 0; i < p.ids.length; i++) {
      const id = p.ids[i]!;
      let t = totals.get(id);
      if (t === undefined) totals.set(id, (t = newGroupTotal()));
      t.builds += p.builds[i]!;
      t.failures += p.failures[i]!;
      t.firstSeen = least(t.firstSeen, p.firstSeen[i]!);
      t.lastSeen = greatest(t.lastSeen, p.lastSeen[i]!);
      t.lastSeq = Math.max(t.lastSeq, p.lastSeq[i]!);
      for (let k = p.testsFrom[i]!; k < p.testsFrom[i + 1]!; k++) t.tests.add(p.tests[k]!);
    }
  }
  const orNull = (v: number) => (Number.isNaN(v) ? null : v);
  return [...totals]
    .sort(([ia, a], [ib, b]) => b.builds - a.builds || ia - ib)
    .slice(0, limit)
    .map(([groupId, t]) => ({ groupId, builds: t.builds, tests: t.tests.size, failures: t.failures, firstSeen: orNull(t.firstSeen), lastSeen: orNull(t.lastSeen), lastSeq: t.lastSeq }));
}

/** The folds a search thread runs over the pack streams a statement selects, and what each answers. */
export interface PackFolds {
  /** Of streams without the executions (PackStreamSql, runs false). */
  readonly failureGroups: FailureGroupsPart;
  /** Both, of whole streams: one read for a page that shows both. */
  readonly both: { readonly counts: TestCountsPart; readonly groups: FailureGroupsPart };
}
export type PackFold = keyof PackFolds;

/**
 * A pack stream: the test_packs rows of many builds in one value, each as its seq (8 bytes), its
 * start (8 bytes, whole ms; -1: none), the lengths of its runs and of its failures (4 bytes each),
 * then those two packs; integers big-endian, in any order of builds. A statement makes one of a
 * range of builds (StoreLayout.packStream): on SQLite each row read cost about 7 us in the search
 * thread (a Buffer a blob, an array a row), ten times what SQLite's scan of it costs; one value
 * a range read 50,000 builds' packs in 115-190 ms where rows took 270-440 ms.
 */
const PACK_STREAM_HEADER = 24;

/** The builds of a pack stream, each as the folds take it. */
function eachPack(stream: Uint8Array, pack: (seq: number, start: number, runsFrom: number, runsTo: number, failuresTo: number) => void): void {
  const view = new DataView(stream.buffer, stream.byteOffset, stream.byteLength);
  for (let at = 0; at < stream.length; ) {
    const seq = view.getUint32(at) * 2 ** 32 + view.getUint32(at + 4);
    const start = view.getInt32(at + 8) * 2 ** 32 + view.getUint32(at + 12);
    const runsFrom = at + PACK_STREAM_HEADER;
    const runsTo = runsFrom + view.getUint32(at + 16);
    const failuresTo = runsTo + view.getUint32(at + 20);
    pack(seq, start < 0 ? NaN : start, runsFrom, runsTo, failuresTo);
    at = failuresTo;
  }
}

/** A pack stream as a statement selects it: its bytes, or null for no build. */
function streamBytes(stream: unknown): Uint8Array | undefined {
  return stream === null ? undefined : (stream as Uint8Array);
}

/** The fold `fold` of the rows of a statement that selects pack streams (one column, StoreLayout.packStream). */
export function foldPacks<F extends PackFold>(fold: F, rows: Iterable<readonly unknown[]>): PackFolds[F] {
  const f: PackFold = fold;
  const groups = new FailureGroupsFold();
  switch (f) {
    case 'failureGroups':
      for (const [stream] of rows) {
        const bytes = streamBytes(stream);
        if (bytes === undefined) continue;
        eachPack(bytes, (seq, start, _runsFrom, runsTo, failuresTo) => groups.add(seq, start, bytes, runsTo, failuresTo));
      }
      return groups.part() as PackFolds[F];
    case 'both': {
      const counts = new TestCountsFold();
      for (const [stream] of rows) {
        const bytes = streamBytes(stream);
        if (bytes === undefined) continue;
        eachPack(bytes, (seq, start, runsFrom, runsTo, failuresTo) => {
          counts.add(seq, bytes, runsFrom, runsTo);
          groups.add(seq, start, bytes, runsTo, failuresTo);
        });
      }
      return { counts: counts.part(), groups: groups.part() } as PackFolds[F];
    }
    default:
      return assertNever(f, 'pack fold');
  }
}

/** The buffers of a fold's answer (its arrays), to transfer rather than copy between threads. */
export function foldedBuffers(answer: PackFolds[PackFold]): ArrayBuffer[] {
  const parts: object[] = 'counts' in answer ? [answer.counts, answer.groups] : [answer];
  return parts.flatMap((p) => Object.values(p).map((a: Float64Array) => a.buffer as ArrayBuffer));
}
