// The verdicts on tests (src/services/test-verdicts.ts): the Wilson interval against a reference
// computation (property test), the rules on hand-made histories, and precision and recall of the
// flaky verdict on a generated corpus with known failure probabilities against the run count.

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { failureEstimate, verdictOf, wilson, type TestExecution } from '../../src/services/test-verdicts.js';

/**
 * Reference: the Wilson interval is the set of p with (p̂ - p)² <= z² p (1 - p) / n; its ends are
 * found by bisection on that inequality, independently of the closed form.
 */
function wilsonByBisection(f: number, n: number, z = 1.959963984540054): [number, number] {
  const phat = f / n;
  const inside = (p: number) => (phat - p) ** 2 <= (z * z * p * (1 - p)) / n;
  const edge = (lo: number, hi: number, inAtLo: boolean) => {
    for (let i = 0; i < 200; i++) {
      const mid = (lo + hi) / 2;
      if (inside(mid) === inAtLo) lo = mid;
      else hi = mid;
    }
    return (lo + hi) / 2;
  };
  const low = f === 0 ? 0 : edge(phat, 0, true);
  const high = f === n ? 1 : edge(phat, 1, true);
  return [low, high];
}

describe('the Wilson score interval', () => {
  it('equals the reference computation and holds the estimate', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }).chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n))), ([f, n]) => {
        const e = wilson(f, n);
        const [low, high] = wilsonByBisection(f, n);
        expect(e.low).toBeCloseTo(low, 9);
        expect(e.high).toBeCloseTo(high, 9);
        expect(e.low).toBeLessThanOrEqual(e.p);
        expect(e.high).toBeGreaterThanOrEqual(e.p);
        expect(e.low).toBeGreaterThanOrEqual(0);
        expect(e.high).toBeLessThanOrEqual(1);
      }),
      { numRuns: 2000 },
    );
  });

  it('covers the true probability about 95% of the time', () => {
    const rnd = prng(7);
    let covered = 0;
    const trials = 4000;
    for (let i = 0; i < trials; i++) {
      const p = [0.02, 0.1, 0.3, 0.5][i % 4]!;
      const n = 20 + (i % 5) * 20;
      let f = 0;
      for (let k = 0; k < n; k++) if (rnd() < p) f++;
      const e = wilson(f, n);
      if (e.low <= p && p <= e.high) covered++;
    }
    expect(covered / trials).toBeGreaterThan(0.92);
  });
});

let seqCounter = 0;
const run = (outcome: TestExecution['outcome'], extra: Partial<TestExecution> = {}): TestExecution => {
  seqCounter++;
  return { seq: seqCounter, buildId: `b${seqCounter}`, startTime: seqCounter * 1000, commit: null, outcome, attempt: 1, durationMs: 10, ...extra };
};
const history = (pattern: string): TestExecution[] => [...pattern].map((c) => run(c === 'F' ? 'failed' : c === 'S' ? 'skipped' : 'passed'));

describe('the verdicts', () => {
  it('calls a failed-then-passed retry flaky, with the build as evidence', () => {
    const runs = history('PPPP');
    const b = run('failed');
    runs.push(b, { ...b, outcome: 'passed', attempt: 2 });
    const v = verdictOf(runs);
    expect(v.kind).toBe('flaky');
    expect(v.kind === 'flaky' && v.evidence[0]).toEqual({ kind: 'retried', build: { seq: b.seq, buildId: b.buildId, startTime: b.startTime, commit: null } });
    expect(failureEstimate(runs)).toMatchObject({ failures: 1, trials: 6 });
  });

  it('calls different outcomes on the same commit flaky', () => {
    const runs = [run('passed', { commit: 'abc' }), run('passed', { commit: 'def' }), run('failed', { commit: 'abc' }), run('passed', { commit: 'x' })];
    const v = verdictOf(runs);
    expect(v.kind === 'flaky' && v.evidence.map((e) => e.kind)).toEqual(['same-commit']);
  });

  it('tells broken, regressed, intermittent and passing apart', () => {
    expect(verdictOf(history('PPPPPPPPPPFFFF')).kind).toBe('broken');
    expect(verdictOf(history('PPPPPPPPPPF')).kind).toBe('regressed');
    expect(verdictOf(history('PPFPPPPFPPP')).kind).toBe('flaky');
    // One broken period that was fixed: not flaky.
    expect(verdictOf(history('PPPPFFFFFPPPP')).kind).toBe('passing');
    expect(verdictOf(history('PPPPPPSPP')).kind).toBe('passing');
    expect(verdictOf(history('SS')).kind).toBe('no-runs');
    // A flaky test whose last runs failed by chance stays flaky: the streak is likely at its rate.
    expect(verdictOf(history('PFPFFPPFPFPFFF')).kind).toBe('flaky');
    const broken = verdictOf(history('PPPPPPPPFFFFF'));
    expect(broken.kind === 'broken' && broken.failedRuns).toBe(5);
  });
});

// --- the corpus --------------------------------------------------------------------------------

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Kind = { readonly kind: 'stable' } | { readonly kind: 'flaky'; readonly p: number } | { readonly kind: 'broken'; readonly from: number } | { readonly kind: 'fixed'; readonly from: number; readonly length: number };

/** One test's history of `n` builds (one attempt each, no retries, no commits: the hardest case). */
function generate(k: Kind, n: number, rnd: () => number): TestExecution[] {
  const out: TestExecution[] = [];
  for (let i = 0; i < n; i++) {
    let fails: boolean;
    switch (k.kind) {
      case 'stable':
        fails = false;
        break;
      case 'flaky':
        fails = rnd() < k.p;
        break;
      case 'broken':
        fails = i >= k.from;
        break;
      case 'fixed':
        fails = i >= k.from && i < k.from + k.length;
        break;
    }
    out.push({ seq: i + 1, buildId: `b${i}`, startTime: i, commit: null, outcome: fails ? 'failed' : 'passed', attempt: 1, durationMs: 1 });
  }
  return out;
}

/** Precision of the flaky verdict over all tests, recall over flaky tests of p >= 0.1. */
function measure(n: number, seed: number): { precision: number; recall: number; recallByP: Map<number, number> } {
  const rnd = prng(seed);
  const kinds: Kind[] = [];
  const PS = [0.02, 0.05, 0.1, 0.2, 0.3, 0.5];
  for (let i = 0; i < 300; i++) {
    kinds.push({ kind: 'stable' });
    kinds.push({ kind: 'broken', from: Math.floor(rnd() * n) });
    kinds.push({ kind: 'fixed', from: Math.floor(rnd() * n * 0.7), length: 3 + Math.floor(rnd() * 6) });
    for (const p of PS) kinds.push({ kind: 'flaky', p });
  }
  let tp = 0;
  let fp = 0;
  const hit = new Map<number, [number, number]>();
  for (const k of kinds) {
    const said = verdictOf(generate(k, n, rnd)).kind === 'flaky';
    const truly = k.kind === 'flaky';
    if (said && truly) tp++;
    if (said && !truly) fp++;
    if (k.kind === 'flaky') {
      const h = hit.get(k.p) ?? [0, 0];
      hit.set(k.p, [h[0] + (said ? 1 : 0), h[1] + 1]);
    }
  }
  let found = 0;
  let all = 0;
  for (const [p, [h, t]] of hit)
    if (p >= 0.1) {
      found += h;
      all += t;
    }
  return { precision: tp / Math.max(1, tp + fp), recall: found / all, recallByP: new Map([...hit].map(([p, [h, t]]) => [p, h / t])) };
}

/** The runs the statistics need for the goal (docs/tests.md states it). */
export const RUNS_FOR_GOAL = 50;

describe('the flaky verdict on a generated corpus', () => {
  it(`reaches precision >= 0.95 and recall >= 0.90 for p >= 0.1 within ${RUNS_FOR_GOAL} runs`, () => {
    const rows: string[] = [];
    for (const n of [10, 20, 30, 40, 50, 60]) {
      const m = measure(n, 1000 + n);
      rows.push(`| ${n} | ${m.precision.toFixed(3)} | ${m.recall.toFixed(3)} | ${[...m.recallByP].map(([p, r]) => `${p}: ${r.toFixed(2)}`).join(', ')} |`);
      if (n >= RUNS_FOR_GOAL && process.env['VERDICT_TABLE'] === undefined) {
        expect(m.precision).toBeGreaterThanOrEqual(0.95);
        // For every failure probability of 0.1 or more, not only on average over them.
        for (const [p, r] of m.recallByP) if (p >= 0.1) expect(r, `recall at p = ${p}, ${n} runs`).toBeGreaterThanOrEqual(0.9);
      }
      // Fewer runs do not reach it at p = 0.1: the goal needs about this many.
      if (n === 30 && process.env['VERDICT_TABLE'] === undefined) expect(m.recallByP.get(0.1)).toBeLessThan(0.9);
    }
    if (process.env['VERDICT_TABLE'] !== undefined) console.log(['| runs | precision | recall (p >= 0.1) | recall by p |', '|---|---|---|---|', ...rows].join('\n'));
  });
});
