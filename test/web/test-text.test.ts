// The Tests pages' addresses and wording (web/src/logic.ts, web/src/test-text.ts), in Node.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { wilson } from '../../src/services/test-verdicts.js';
import { routeOf, testsUrl, testUrl } from '../../web/src/logic.js';
import { estimateText, niceMax, pct, verdictSentence } from '../../web/src/test-text.js';

describe('the Tests pages', () => {
  it('round-trip their addresses', () => {
    fc.assert(
      fc.property(fc.string(), (query) => {
        const u = new URL(testsUrl(query), 'http://x');
        expect(routeOf(u.pathname, u.search)).toEqual({ page: 'tests', query });
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (id) => {
        expect(routeOf(testUrl(id), '')).toEqual({ page: 'test', id });
      }),
    );
    for (const bad of ['/tests/0', '/tests/-1', '/tests/x', '/tests/99999999999999999']) expect(routeOf(bad, '')).toEqual({ page: 'unknown' });
  });

  it('word a probability in order: a larger one never reads smaller', () => {
    const read = (s: string) => Number(s.slice(0, -1));
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(read(pct(lo))).toBeLessThanOrEqual(read(pct(hi)));
      }),
    );
    expect([pct(0), pct(0.0004), pct(0.071), pct(0.1333), pct(0.999), pct(1)]).toEqual(['0%', '0.1%', '7.1%', '13%', '99%', '100%']);
    expect(estimateText(wilson(4, 30))).toBe('13% (95% interval 5.3%–30%)');
    // Only a probability of exactly 0 or 1 reads 0% or 100%.
    fc.assert(
      fc.property(fc.double({ min: 1e-9, max: 1 - 1e-9, noNaN: true }), (p) => {
        expect(['0%', '100%']).not.toContain(pct(p));
      }),
    );
  });

  it("scale the duration chart to a round maximum at most 2.5 times the longest run", () => {
    fc.assert(
      fc.property(fc.double({ min: 1.0001, max: 1e9, noNaN: true }), (m) => {
        const top = niceMax(m);
        expect(top).toBeGreaterThanOrEqual(m);
        expect(top).toBeLessThanOrEqual(2.5 * m);
        expect(top / 10 ** Math.floor(Math.log10(top))).toBeOneOf([1, 2, 5]);
      }),
    );
  });

  it('say why a test is flaky, broken or newly failing', () => {
    const b = { seq: 1, buildId: 'b1', startTime: null, commit: null };
    expect(verdictSentence({ kind: 'flaky', evidence: [{ kind: 'retried', build: b }] })).toBe('Flaky: it failed and then passed on a retry in the same build.');
    expect(verdictSentence({ kind: 'broken', since: b, lastPassed: null, failedRuns: 4 })).toContain('(4 builds)');
    expect(verdictSentence({ kind: 'regressed', since: b, lastPassed: b })).toMatch(/^Newly failing/);
  });
});
