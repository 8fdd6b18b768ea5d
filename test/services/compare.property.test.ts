// Properties of the comparison on random builds (fast-check): a build compared with itself
// differs in nothing; comparing B with A gives every difference of A with B swapped (before and
// after, added and removed exchanged), in the same order, summary included; and a comparison
// holds exactly the tasks and tests that are not alike.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BuildFacts, Scalar, TaskFacts, TestFacts } from '../../src/services/build-facts.js';
import { compareFacts, swapDifference, type Comparison } from '../../src/services/compare.js';
import { TASK_OUTCOMES } from '../../src/store/tasks.js';

// Small domains, so that two random builds share tasks, tests and values often.
const word = fc.constantFrom('a', 'b', 'c', 'main', 'x y');
const scalar: fc.Arbitrary<Scalar> = fc.oneof(fc.constant(null), fc.boolean(), fc.constantFrom(1, 2, 8), word);
const record = fc.dictionary(fc.constantFrom('jvmVersion', 'os', 'parallel', 'local.enabled'), scalar, { maxKeys: 3 });
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null });
const duration = fc.constantFrom(0, 5, 100, 1_000, 20_000);

const tasks = fc
  .array(fc.record({ path: fc.constantFrom(':a', ':b', ':c', ':d'), outcome: fc.constantFrom(...TASK_OUTCOMES), duration, cacheable: fc.constantFrom(true, false, null) }), { maxLength: 8 })
  .map((list): TaskFacts[] => {
    const seen = new Map<string, number>();
    return list.map((t) => {
      const occurrence = (seen.get(t.path) ?? 0) + 1;
      seen.set(t.path, occurrence);
      return { ...t, occurrence };
    });
  });

const tests = fc
  .uniqueArray(
    fc.record({ suite: fc.constantFrom('S', 'T'), name: fc.constantFrom('one', 'two', 'three'), outcome: fc.constantFrom('passed', 'failed', 'skipped', null), duration, attempts: fc.constantFrom(1, 2) }),
    { selector: (t) => `${t.suite}.${t.name}`, maxLength: 6 },
  )
  .map((list): TestFacts[] => [...list].sort((x, y) => x.suite.localeCompare(y.suite) || x.name.localeCompare(y.name)));

const facts: fc.Arbitrary<BuildFacts> = fc.record({
  id: fc.constantFrom('aaaaaaaaaaaaa', 'bbbbbbbbbbbbb'),
  project: maybe(word),
  tool: fc.constantFrom('native', 'jvmbuild'),
  toolVersion: fc.constantFrom('8.10', '8.11'),
  agentVersion: fc.constantFrom('3.19', '3.20'),
  outcome: maybe(fc.constantFrom('succeeded', 'failed')),
  start: maybe(fc.constantFrom(0, 1_000)),
  duration: maybe(fc.constantFrom(1_000, 5_000, 60_000)),
  user: maybe(word),
  host: maybe(word),
  requested: fc.uniqueArray(word, { maxLength: 3 }),
  excluded: fc.uniqueArray(word, { maxLength: 2 }),
  environment: record,
  options: record,
  cache: record,
  serverSettings: record,
  tags: fc.uniqueArray(word, { maxLength: 3 }),
  values: fc.dictionary(fc.constantFrom('Team', 'Stage'), fc.array(word, { minLength: 1, maxLength: 2 }).map((v) => v.sort()), { maxKeys: 2 }),
  ci: fc.record({ provider: maybe(word), build: maybe(word) }),
  git: fc.record({ repository: maybe(word), commit: maybe(word), branch: maybe(word), status: maybe(fc.constantFrom('clean', 'dirty')) }),
  tasks,
  tests,
  failures: fc.array(fc.record({ classification: fc.constantFrom('verification', 'non-verification'), message: word }), { maxLength: 3 }),
});

/** B as a variation of A (most fields shared), or an unrelated build. */
const pair = fc.oneof(
  fc.tuple(facts, facts),
  fc.tuple(facts, fc.record({ tasks, tests, duration: maybe(fc.constantFrom(1_000, 5_000, 60_000)), outcome: maybe(fc.constantFrom('succeeded', 'failed')) })).map(([a, change]) => [a, { ...a, ...change }] as const),
);

const swapped = (c: Comparison): Comparison => ({
  a: c.b,
  b: c.a,
  identical: c.identical,
  summary: c.summary.map((e) => ({ reason: e.reason, difference: swapDifference(e.difference) })),
  sections: c.sections.map((s) => ({ ...s, differences: s.differences.map(swapDifference) })),
});

describe('comparison properties', () => {
  it('a build compared with itself shows no difference', () => {
    fc.assert(
      fc.property(facts, (f) => {
        const c = compareFacts(f, f);
        expect(c.identical).toBe(true);
        expect(c.summary).toEqual([]);
        for (const s of c.sections) expect(s.differences).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('swapping the two builds swaps every difference, in the same order', () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        expect(compareFacts(b, a)).toEqual(swapped(compareFacts(a, b)));
      }),
      { numRuns: 500 },
    );
  });

  it('swapping twice is no change', () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const c = compareFacts(a, b);
        expect(swapped(swapped(c))).toEqual(c);
      }),
      { numRuns: 100 },
    );
  });

  it('lists as added, removed or changed exactly the tasks that are not alike in both builds', () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const key = (t: { path: string; occurrence: number }) => `${t.path}#${t.occurrence}`;
        const inA = new Map(a.tasks.map((t) => [key(t), t]));
        const inB = new Map(b.tasks.map((t) => [key(t), t]));
        const differing = new Set<string>();
        for (const d of compareFacts(a, b).sections.find((s) => s.id === 'tasks')!.differences) {
          differing.add(d.kind === 'task-added' || d.kind === 'task-removed' ? key(d.task) : d.kind.startsWith('task-') && 'path' in d ? key(d) : '?');
        }
        const expected = new Set([...new Set([...inA.keys(), ...inB.keys()])].filter((k) => JSON.stringify(inA.get(k)) !== JSON.stringify(inB.get(k))));
        expect(differing).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('the summary only holds differences of the sections, and at most twelve', () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const c = compareFacts(a, b);
        const all = c.sections.flatMap((s) => s.differences);
        expect(c.summary.length).toBeLessThanOrEqual(12);
        for (const e of c.summary) expect(all).toContainEqual(e.difference);
        expect(c.identical).toBe(all.length === 0);
      }),
      { numRuns: 200 },
    );
  });
});
