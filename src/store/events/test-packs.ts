// A build's test executions in one value (test_packs.runs, store migration 0024): the form the Tests
// page's counts read for a query the per-test rollups do not answer. Counting from test_runs' index
// tests every one of its entries against the query's builds (20 million at 100,000 builds, 6-21 s,
// docs/tests.md); counting from packs reads only the matching builds, one row each, and a search
// thread folds their executions into per-test counts in a tight loop.
//
// Format (frozen: stored rows carry it): the build's executions ordered by test id (then outcome and
// duration), each as two unsigned LEB128 varints, `(testId - previous testId) * 4 + outcome`
// (TEST_OUTCOME_CODES, the previous id -1 for the first) and the duration in whole ms. A test run twice in a build (a retry)
// has a delta of 0 the second time, which is how a build is counted once per test. Durations are
// whole ms (event timestamps are integers), so the sums are exact, as SQL's are.

import { TEST_OUTCOME_CODES } from './test-runs.js';

/** One execution of a pack: test id, outcome code, duration in whole ms. */
export type PackedTestRun = readonly [testId: number, outcome: number, durationMs: number];

function pushVarint(out: number[], v: number): void {
  while (v >= 128) {
    out.push((v % 128) + 128);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

/** Where varint() reads next in the pack being folded (the fold is synchronous, one pack at a time). */
let at = 0;

/** The varint at `at` in `pack`, `at` moved past it. */
function varint(pack: Uint8Array): number {
  let b = pack[at++]!;
  if (b < 128) return b;
  let v = b - 128;
  let scale = 128;
  for (;;) {
    b = pack[at++]!;
    v += (b & 127) * scale;
    if (b < 128) return v;
    scale *= 128;
  }
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

/** The packs of executions given in build order (seq, then anything): [seq, pack] per build. */
export function testPacksOf(runs: Iterable<readonly [seq: number, testId: number, outcome: number, durationMs: number]>): [number, Buffer][] {
  const packs: [number, Buffer][] = [];
  let seq: number | undefined;
  let build: PackedTestRun[] = [];
  for (const [s, id, outcome, duration] of runs) {
    if (s !== seq) {
      if (seq !== undefined) packs.push([seq, encodeTestPack(build)]);
      seq = s;
      build = [];
    }
    build.push([id, outcome, duration]);
  }
  if (seq !== undefined) packs.push([seq, encodeTestPack(build)]);
  return packs;
}

/** Per-test counts of a set of builds' packs, for the tests they ran (partial: sums of several merge by addition, except lastSeq, by max). */
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
  readonly lastSeq: Float64Array;
}

const FIELDS = ['ids', 'runs', 'failures', 'skipped', 'builds', 'executions', 'durationSum', 'lastSeq'] as const;

const FAILED = TEST_OUTCOME_CODES.failed;
const SKIPPED = TEST_OUTCOME_CODES.skipped;

/**
 * Folds packs into per-test counts, one build at a time (a search thread iterates a statement's
 * rows into it without holding them). Counts live in arrays indexed by test id, grown as ids
 * appear.
 */
export class TestCountsFold {
  private size = 0;
  private runs = new Float64Array(1024);
  private failures = new Float64Array(1024);
  private skipped = new Float64Array(1024);
  private builds = new Float64Array(1024);
  private executions = new Float64Array(1024);
  private durationSum = new Float64Array(1024);
  private lastSeq = new Float64Array(1024);

  add(seq: number, pack: Uint8Array): void {
    let id = -1;
    const n = pack.length;
    at = 0;
    while (at < n) {
      const v = varint(pack);
      const duration = varint(pack);
      const outcome = v % 4;
      const delta = (v - outcome) / 4;
      // A delta of 0 is the same test again (a retry): its build is counted once.
      if (delta !== 0) {
        id += delta;
        if (id >= this.runs.length) this.grow(id);
        if (id >= this.size) this.size = id + 1;
        this.builds[id]! += 1;
        if (this.lastSeq[id]! < seq) this.lastSeq[id] = seq;
      }
      this.executions[id]! += 1;
      this.durationSum[id]! += duration;
      if (outcome === FAILED) this.failures[id]! += 1;
      else if (outcome === SKIPPED) this.skipped[id]! += 1;
      if (outcome !== SKIPPED) this.runs[id]! += 1;
    }
  }

  /** The counts of every test seen, by ascending id. */
  part(): TestCountsPart {
    const ids: number[] = [];
    for (let id = 0; id < this.size; id++) if (this.executions[id]! > 0) ids.push(id);
    const pick = (a: Float64Array) => Float64Array.from(ids, (id) => a[id]!);
    return {
      ids: Float64Array.from(ids),
      runs: pick(this.runs),
      failures: pick(this.failures),
      skipped: pick(this.skipped),
      builds: pick(this.builds),
      executions: pick(this.executions),
      durationSum: pick(this.durationSum),
      lastSeq: pick(this.lastSeq),
    };
  }

  private grow(id: number): void {
    const length = Math.max(id + 1, this.runs.length * 2);
    const grown = (a: Float64Array) => {
      const b = new Float64Array(length);
      b.set(a);
      return b;
    };
    this.runs = grown(this.runs);
    this.failures = grown(this.failures);
    this.skipped = grown(this.skipped);
    this.builds = grown(this.builds);
    this.executions = grown(this.executions);
    this.durationSum = grown(this.durationSum);
    this.lastSeq = grown(this.lastSeq);
  }
}

/** The counts of packs read as rows `[seq, pack]`. */
export function foldTestCounts(rows: Iterable<readonly unknown[]>): TestCountsPart {
  const fold = new TestCountsFold();
  for (const [seq, pack] of rows) fold.add(Number(seq), pack as Uint8Array);
  return fold.part();
}

/** The buffers of `part`, to transfer rather than copy between threads. */
export function testCountsBuffers(part: TestCountsPart): ArrayBuffer[] {
  return FIELDS.map((f) => part[f].buffer as ArrayBuffer);
}

/** One test's counts over every part (parts of disjoint builds). */
export interface TestCountsTotal {
  readonly testId: number;
  readonly runs: number;
  readonly failures: number;
  readonly skipped: number;
  readonly builds: number;
  readonly meanDurationMs: number;
  readonly lastSeq: number;
}

/** The parts' counts summed per test, the tests with most failures first (ties: most runs, id), at most `limit`. */
export function topTestCounts(parts: readonly TestCountsPart[], limit: number): TestCountsTotal[] {
  const totals = new Map<number, { runs: number; failures: number; skipped: number; builds: number; executions: number; durationSum: number; lastSeq: number }>();
  for (const p of parts) {
    for (let i = 0; i < p.ids.length; i++) {
      const id = p.ids[i]!;
      const t = totals.get(id);
      if (t === undefined) {
        totals.set(id, { runs: p.runs[i]!, failures: p.failures[i]!, skipped: p.skipped[i]!, builds: p.builds[i]!, executions: p.executions[i]!, durationSum: p.durationSum[i]!, lastSeq: p.lastSeq[i]! });
        continue;
      }
      t.runs += p.runs[i]!;
      t.failures += p.failures[i]!;
      t.skipped += p.skipped[i]!;
      t.builds += p.builds[i]!;
      t.executions += p.executions[i]!;
      t.durationSum += p.durationSum[i]!;
      t.lastSeq = Math.max(t.lastSeq, p.lastSeq[i]!);
    }
  }
  return [...totals]
    .sort(([ia, a], [ib, b]) => b.failures - a.failures || b.runs - a.runs || ia - ib)
    .slice(0, limit)
    .map(([testId, t]) => ({ testId, runs: t.runs, failures: t.failures, skipped: t.skipped, builds: t.builds, meanDurationMs: t.durationSum / t.executions, lastSeq: t.lastSeq }));
}
