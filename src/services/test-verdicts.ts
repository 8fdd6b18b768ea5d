// Verdicts on a test from its executions (pure; docs/tests.md): flaky, broken, regressed, passing,
// each with its evidence (the builds) and the estimated failure probability with a 95% Wilson
// score interval.
//
// Why Wilson: a test's failure probability is estimated from few runs, often with no or one
// failure. The textbook (Wald) interval p ± z·sqrt(p(1-p)/n) collapses to [0, 0] with no failure
// and leaves [0, 1] for small n; Clopper-Pearson ("exact") is conservative, wider than its stated
// level. Wilson's interval keeps close to the stated coverage for small n and p near 0, never leaves
// [0, 1], and is a closed form, cheap for thousands of tests per page.
//
// The rules, measured on a generated corpus (test/services/test-verdicts.corpus.test.ts):
// - flaky within a build: a failed attempt and a passed one of the test in the same build (a retry);
// - flaky across builds: a failed and a passed run in builds of the same commit (`Git commit id`);
// - flaky over time: failures in two or more separate short blocks (a block is a run of
//   consecutive failed builds; shorter than BROKEN_MIN_RUNS) with passes between them, i.e.
//   intermittent failure that no single change explains;
// - broken: the latest builds all failed, at least BROKEN_MIN_RUNS of them, and so many that the
//   test's failure rate before the streak (its Wilson upper bound) makes such a streak improbable
//   (< BROKEN_STREAK_P): a change broke it, rather than chance;
// - regressed: the latest builds failed after passes, too few of them yet to call it broken;
// - passing: none of the above (failures, if any, are one short block in the past).

import type { TestRunRow } from '../store/types.js';

/** An execution of a test: one attempt in one build (a stored run without the test's id and group). */
export type TestExecution = Omit<TestRunRow, 'testId' | 'failureGroup'>;

/** What a verdict reads of an execution: its build and outcome. */
export type JudgedRun = Pick<TestExecution, 'seq' | 'buildId' | 'startTime' | 'commit' | 'outcome'>;

/** A build of the evidence. */
export interface BuildRef {
  readonly seq: number;
  readonly buildId: string;
  readonly startTime: number | null;
  readonly commit: string | null;
}

/** An estimated probability with its 95% interval. */
export interface Estimate {
  readonly failures: number;
  readonly trials: number;
  readonly p: number;
  readonly low: number;
  readonly high: number;
}

export type FlakyEvidence =
  | { readonly kind: 'retried'; readonly build: BuildRef }
  | { readonly kind: 'same-commit'; readonly commit: string; readonly failed: BuildRef; readonly passed: BuildRef }
  | { readonly kind: 'intermittent'; readonly failedBuilds: readonly BuildRef[] };

export type Verdict =
  | { readonly kind: 'flaky'; readonly evidence: readonly FlakyEvidence[] }
  | { readonly kind: 'broken'; readonly since: BuildRef; readonly lastPassed: BuildRef | null; readonly failedRuns: number }
  | { readonly kind: 'regressed'; readonly since: BuildRef; readonly lastPassed: BuildRef }
  | { readonly kind: 'passing' }
  | { readonly kind: 'no-runs' };

export type VerdictKind = Verdict['kind'];

/** A build's result for the test: its attempts taken together. */
export type BuildResult = 'passed' | 'failed' | 'flaky' | 'skipped';

export const BROKEN_MIN_RUNS = 3;
export const BROKEN_STREAK_P = 0.01;
const Z95 = 1.959963984540054;

/** The Wilson score interval of `failures` in `trials` at `z` (95% by default). */
export function wilson(failures: number, trials: number, z = Z95): Estimate {
  if (trials <= 0) return { failures: 0, trials: 0, p: 0, low: 0, high: 1 };
  const p = failures / trials;
  const z2 = z * z;
  const denom = 1 + z2 / trials;
  const center = (p + z2 / (2 * trials)) / denom;
  const half = (z / denom) * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials));
  // Clamp the rounding error at the ends (f = 0 gives exactly 0 in exact arithmetic).
  return { failures, trials, p, low: failures === 0 ? 0 : Math.max(0, center - half), high: failures === trials ? 1 : Math.min(1, center + half) };
}

/** The test's failure probability per attempt: failed attempts over passed and failed ones. */
export function failureEstimate(runs: readonly Pick<TestExecution, 'outcome'>[]): Estimate {
  let f = 0;
  let n = 0;
  for (const r of runs) {
    switch (r.outcome) {
      case 'failed':
        f++;
        n++;
        break;
      case 'passed':
        n++;
        break;
      case 'skipped':
        break;
    }
  }
  return wilson(f, n);
}

interface BuildRun {
  readonly ref: BuildRef;
  readonly result: BuildResult;
}

/** The executions grouped by build, in build order (seq), each build's result. */
export function buildResults(runs: readonly JudgedRun[]): BuildRun[] {
  const bySeq = new Map<number, { ref: BuildRef; failed: boolean; passed: boolean }>();
  for (const r of runs) {
    let b = bySeq.get(r.seq);
    if (b === undefined) {
      b = { ref: { seq: r.seq, buildId: r.buildId, startTime: r.startTime, commit: r.commit }, failed: false, passed: false };
      bySeq.set(r.seq, b);
    }
    if (r.outcome === 'failed') b.failed = true;
    if (r.outcome === 'passed') b.passed = true;
  }
  return [...bySeq.values()]
    .sort((a, b) => a.ref.seq - b.ref.seq)
    .map((b) => ({ ref: b.ref, result: b.failed && b.passed ? 'flaky' : b.failed ? 'failed' : b.passed ? 'passed' : 'skipped' }));
}

/** The verdict on a test from its executions (any order). */
export function verdictOf(runs: readonly JudgedRun[]): Verdict {
  const builds = buildResults(runs).filter((b) => b.result !== 'skipped');
  if (builds.length === 0) return { kind: 'no-runs' };

  // Broken: a trailing streak of failed builds, improbable under the rate before it.
  let k = 0;
  while (k < builds.length && builds[builds.length - 1 - k]!.result === 'failed') k++;
  const before = builds.slice(0, builds.length - k);
  if (k >= BROKEN_MIN_RUNS) {
    const rate = wilson(
      before.filter((b) => b.result !== 'passed').length,
      before.length,
    ).high;
    if (before.length === 0 || rate ** k < BROKEN_STREAK_P) {
      const lastPassed = before.length === 0 ? null : before[before.length - 1]!.ref;
      return { kind: 'broken', since: builds[builds.length - k]!.ref, lastPassed, failedRuns: k };
    }
  }

  const evidence: FlakyEvidence[] = [];
  for (const b of builds) if (b.result === 'flaky') evidence.push({ kind: 'retried', build: b.ref });
  const byCommit = new Map<string, { failed?: BuildRef; passed?: BuildRef }>();
  for (const b of builds) {
    if (b.ref.commit === null) continue;
    const c = byCommit.get(b.ref.commit) ?? {};
    if (b.result !== 'passed') c.failed ??= b.ref;
    if (b.result !== 'failed') c.passed ??= b.ref;
    byCommit.set(b.ref.commit, c);
  }
  for (const [commit, c] of byCommit) {
    if (c.failed !== undefined && c.passed !== undefined && c.failed.seq !== c.passed.seq) evidence.push({ kind: 'same-commit', commit, failed: c.failed, passed: c.passed });
  }
  // Short blocks of failed builds, each followed by a pass (the trailing one is judged below).
  const blocks: BuildRef[][] = [];
  let block: BuildRef[] = [];
  for (const b of before) {
    if (b.result === 'failed') block.push(b.ref);
    else {
      if (block.length > 0 && block.length < BROKEN_MIN_RUNS) blocks.push(block);
      block = [];
    }
  }
  if (k > 0 && k < BROKEN_MIN_RUNS && blocks.length > 0) blocks.push(builds.slice(builds.length - k).map((b) => b.ref));
  if (blocks.length >= 2) evidence.push({ kind: 'intermittent', failedBuilds: blocks.flat() });
  if (evidence.length > 0) return { kind: 'flaky', evidence };

  if (k > 0 && before.length > 0) return { kind: 'regressed', since: builds[builds.length - k]!.ref, lastPassed: before[before.length - 1]!.ref };
  if (k > 0) return { kind: 'broken', since: builds[0]!.ref, lastPassed: null, failedRuns: k };
  return { kind: 'passing' };
}
