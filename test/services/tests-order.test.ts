// The order of the Tests page's flakiest list (src/services/tests.ts, byFlakiness): by the lower end
// of the failure probability's 95% interval, so that more runs showing the same failure rate rank
// higher, and a test with few runs does not top the list by one failure.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { byFlakiness, type TestSummary } from '../../src/services/tests.js';
import { wilson } from '../../src/services/test-verdicts.js';

const summary = (testId: number, failures: number, trials: number): TestSummary => ({
  testId,
  tool: 'jvmbuild',
  project: 'shop',
  suite: 'acme.T',
  name: `t${testId}`,
  parameters: '',
  runs: trials,
  failures,
  skipped: 0,
  builds: trials,
  meanDurationMs: 1,
  lastSeq: 1,
  latestOutcome: 'failed',
  verdict: 'flaky',
  estimate: wilson(failures, trials),
});

describe('the flakiest first', () => {
  it('ranks the same failure rate over more runs first', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 2, max: 20 }), (f, more, k) => {
        const n = f + more + 1;
        expect(byFlakiness(summary(1, f * k, n * k), summary(2, f, n))).toBeLessThan(0);
      }),
    );
  });

  it('is a total order: antisymmetric and transitive on any tests', () => {
    const arb = fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 30 })).map(([f, p]) => [f, f + p + 1] as const);
    fc.assert(
      fc.property(fc.array(arb, { minLength: 2, maxLength: 12 }), (xs) => {
        const tests = xs.map(([f, n], i) => summary(i + 1, f, n));
        const sorted = [...tests].sort(byFlakiness);
        for (let i = 1; i < sorted.length; i++) expect(byFlakiness(sorted[i - 1]!, sorted[i]!)).toBeLessThan(0);
        for (const a of tests) for (const b of tests) expect(Math.sign(byFlakiness(a, b)) + Math.sign(byFlakiness(b, a))).toBe(0);
      }),
    );
  });

  it('puts 15 of 60 attempts over 1 of 2', () => {
    expect([summary(1, 1, 2), summary(2, 15, 60)].sort(byFlakiness).map((t) => t.testId)).toEqual([2, 1]);
  });
});
