// A build's test executions in one value (src/store/events/test-packs.ts) and the per-test counts
// folded from packs: the counts of any builds' packs, folded in any split into parts and summed,
// equal the counts computed directly from the executions (what the SQL over test_runs computes),
// and the failure groups likewise; the fold of both gives the groups' fold's groups; one build has one pack whatever the order of its executions; and a set of seqs cut into ranges
// (seq-set.ts `seqRanges`) holds each of its seqs in exactly one range, none over the limit.

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { encodeFailurePack, encodeTestPack, foldPacks, topFailureGroups, topTestCounts, type PackedFailure, type PackedTestRun } from '../../src/store/events/test-packs.js';
import { seqRanges } from '../../src/store/search/seq-set.js';
import { packStreamOf } from './pack-stream.js';

const run = fc.tuple(
  fc.integer({ min: 1, max: 40 }),
  fc.constantFrom(0, 1, 2),
  // Durations past one byte, and past 2^31 (whole ms, as the events give them).
  fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 2 ** 40 })),
) as fc.Arbitrary<PackedTestRun>;
const build = fc.array(run, { minLength: 1, maxLength: 12 });

/** The counts as SQL computes them over test_runs: per test id, sorted and cut as the Tests page's. */
function reference(builds: readonly (readonly PackedTestRun[])[], limit: number, base: number) {
  const by = new Map<number, { runs: number; failures: number; skipped: number; seqs: Set<number>; durations: number[]; lastSeq: number; lastOutcomes: number[] }>();
  builds.forEach((runs, i) => {
    const seq = base + i;
    for (const [id, outcome, duration] of runs) {
      const t = by.get(id) ?? { runs: 0, failures: 0, skipped: 0, seqs: new Set<number>(), durations: [], lastSeq: 0, lastOutcomes: [] };
      by.set(id, t);
      if (outcome !== 2) t.runs++;
      if (outcome === 1) t.failures++;
      if (outcome === 2) t.skipped++;
      t.seqs.add(seq + 1);
      t.durations.push(duration);
      if (seq + 1 > t.lastSeq) t.lastOutcomes = [];
      if (seq + 1 >= t.lastSeq) t.lastOutcomes.push(outcome);
      t.lastSeq = Math.max(t.lastSeq, seq + 1);
    }
  });
  return [...by]
    .sort(([ia, a], [ib, b]) => b.failures - a.failures || b.runs - a.runs || ia - ib)
    .slice(0, limit)
    .map(([testId, t]) => ({ testId, runs: t.runs, failures: t.failures, skipped: t.skipped, builds: t.seqs.size, meanDurationMs: t.durations.reduce((a, b) => a + b, 0) / t.durations.length, lastSeq: t.lastSeq, latestOutcome: WALK_FINDS[Math.max(...t.lastOutcomes)] }));
}

/** The outcome a walk of test_runs' index back from the newest finds first among a build's attempts, by outcome code (skipped, then failed, then passed). */
const WALK_FINDS = ['passed', 'failed', 'skipped'] as const;

describe('test packs', () => {
  it('fold into the counts computed from the executions, in any split into parts', () => {
    fc.assert(
      // Seqs past 32 bits too (a stream's header holds 64).
      fc.property(fc.array(build, { minLength: 1, maxLength: 30 }), fc.array(fc.nat(), { maxLength: 5 }), fc.integer({ min: 1, max: 50 }), fc.constantFrom(0, 2 ** 33), (builds, cuts, limit, base) => {
        const rows = builds.map((runs, i) => [base + i + 1, encodeTestPack(runs)] as const);
        const at = [...new Set(cuts.map((c) => c % rows.length))].sort((a, b) => a - b);
        // A part: a statement's rows, a stream each (a range's, or null for none).
        const parts = [0, ...at, rows.length].slice(1).map((end, k, ends) => foldPacks('both', [[null], [packStreamOf(rows.slice(k === 0 ? 0 : ends[k - 1], end).map(([seq, pack]) => [seq, null, pack, null]))]]).counts);
        expect(topTestCounts(parts, limit)).toEqual(reference(builds, limit, base));
      }),
    );
  });

  it('are one value per build whatever the order of its executions', () => {
    fc.assert(fc.property(build, fc.nat(), (runs, seed) => {
      const shuffled = [...runs].sort((a, b) => ((a[2] * 31 + seed) % 7) - ((b[2] * 31 + seed) % 7));
      expect(encodeTestPack(shuffled).equals(encodeTestPack(runs))).toBe(true);
    }));
  });
});

/** A build's failures: groups and tests from few, so that builds share them; some of the build's own. */
const failures = fc.array(fc.tuple(fc.integer({ min: 0, max: 6 }), fc.option(fc.integer({ min: 1, max: 5 }), { nil: null })), { maxLength: 6 }) as fc.Arbitrary<PackedFailure[]>;

/** The failure groups as SQL computes them over test_runs and build_failures: per group id, sorted and cut as the lists are. */
function groupsReference(builds: readonly { readonly start: number | null; readonly failures: readonly PackedFailure[] }[], limit: number) {
  const by = new Map<number, { seqs: Set<number>; tests: Set<number>; failures: number; starts: number[]; lastSeq: number }>();
  builds.forEach((b, i) => {
    for (const [group, test] of b.failures) {
      const g = by.get(group) ?? { seqs: new Set<number>(), tests: new Set<number>(), failures: 0, starts: [], lastSeq: 0 };
      by.set(group, g);
      g.seqs.add(i + 1);
      if (test !== null) g.tests.add(test);
      g.failures++;
      if (b.start !== null) g.starts.push(b.start);
      g.lastSeq = Math.max(g.lastSeq, i + 1);
    }
  });
  return [...by]
    .sort(([ia, a], [ib, b]) => b.seqs.size - a.seqs.size || ia - ib)
    .slice(0, limit)
    .map(([groupId, g]) => ({ groupId, builds: g.seqs.size, tests: g.tests.size, failures: g.failures, firstSeen: g.starts.length === 0 ? null : Math.min(...g.starts), lastSeen: g.starts.length === 0 ? null : Math.max(...g.starts), lastSeq: g.lastSeq }));
}

describe('failure packs', () => {
  it('fold into the failure groups computed from the failures, in any split into parts', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ start: fc.option(fc.integer({ min: 0, max: 1000 }), { nil: null }), failures }), { minLength: 1, maxLength: 30 }), fc.array(fc.nat(), { maxLength: 5 }), fc.integer({ min: 1, max: 10 }), (builds, cuts, limit) => {
        const rows = builds.map((b, i) => [i + 1, b.start, encodeFailurePack(b.failures)] as const);
        const at = [...new Set(cuts.map((c) => c % rows.length))].sort((a, b) => a - b);
        const parts = [0, ...at, rows.length].slice(1).map((end, k, ends) => foldPacks('failureGroups', [[packStreamOf(rows.slice(k === 0 ? 0 : ends[k - 1], end).map(([seq, start, f]) => [seq, start, null, f]))]]));
        expect(topFailureGroups(parts, limit)).toEqual(groupsReference(builds, limit));
      }),
    );
  });
});

describe('the fold of counts and groups at once', () => {
  it('answers the groups the groups alone answer, of the same builds', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ start: fc.option(fc.integer({ min: 0, max: 1000 }), { nil: null }), runs: build, failures }), { minLength: 1, maxLength: 20 }), (builds) => {
        const rows = builds.map((b, i) => [i + 1, b.start, encodeTestPack(b.runs), encodeFailurePack(b.failures)] as const);
        const both = foldPacks('both', [[packStreamOf(rows)]]);
        expect(both.groups).toEqual(foldPacks('failureGroups', [[packStreamOf(rows.map((r) => [r[0], r[1], null, r[3]]))]]));
      }),
    );
  });
});

describe('a set of seqs in ranges', () => {
  it('holds each seq in exactly one range, the ranges in order, none with more than the limit', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat({ max: 3000 }), { maxLength: 400 }), fc.integer({ min: 32, max: 200 }), (seqs, perRange) => {
        const words = new Uint32Array(100);
        for (const s of seqs) words[s >>> 5]! |= 1 << (s & 31);
        const ranges = seqRanges(words, perRange);
        for (let k = 1; k < ranges.length; k++) expect(ranges[k]![0]).toBeGreaterThan(ranges[k - 1]![1]);
        for (const [first, last] of ranges) {
          const inside = seqs.filter((s) => s >= first && s <= last);
          expect(inside.length).toBeGreaterThan(0);
          expect(inside.length).toBeLessThanOrEqual(perRange);
        }
        expect(seqs.every((s) => ranges.filter(([first, last]) => s >= first && s <= last).length === 1)).toBe(true);
      }),
    );
  });
});
