// Properties of the comparison on random builds (fast-check): a build compared with itself
// differs in nothing; comparing B with A gives every difference of A with B swapped (before and
// after, added and removed exchanged), in the same order, summary included; and a comparison
// holds exactly the tasks and tests that are not alike.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BuildFacts, Scalar, TaskFacts, TestFacts } from '../../src/services/build-facts.js';
import { compareFacts, swapDifference, type Comparison } from '../../src/services/compare.js';
import type { TaskInputFacts } from '../../src/services/task-inputs.js';
import { TASK_OUTCOMES } from '../../src/store/events/tasks.js';

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

// What a task's cache key was made of: few keys, inputs, files and hashes, so that two builds'
// tasks often differ in one input or file, and outputs that hold other tasks' inputs.
const hash = fc.constantFrom('h1', 'h2');
const inputFacts = fc.record({
  cacheKey: fc.constantFrom('k1', 'k2', null),
  implementation: fc.constantFrom('"i1"', '"i2"'),
  inputs: fc.dictionary(fc.constantFrom('source', 'classpath', 'options.debug'), hash, { maxKeys: 3 }),
  files: fc.dictionary(fc.constantFrom('source', 'classpath'), fc.dictionary(fc.constantFrom('src/A.java', 'build/classes/A.class', 'build/libs/a.jar', 'lib.jar'), hash, { maxKeys: 3 }), { maxKeys: 2 }),
  filesOmitted: fc.subarray(['classpath', 'source']),
  outputs: fc.subarray(['build/classes', 'build/libs', 'build/libs/a.jar']),
});

const withInputs = (list: readonly TaskFacts[]): fc.Arbitrary<TaskInputFacts[]> =>
  fc.tuple(...list.map(() => fc.option(inputFacts, { nil: undefined }))).map((recorded) =>
    list.flatMap((t, i) => (recorded[i] === undefined ? [] : [{ path: t.path, occurrence: t.occurrence, ...recorded[i]! }])),
  );

const flip = (h: string | undefined): string => (h === 'h1' ? 'h2' : 'h1');
const classChanged = (t: TaskInputFacts): TaskInputFacts => ({
  ...t,
  inputs: { ...t.inputs, classpath: flip(t.inputs['classpath']) },
  files: { ...t.files, classpath: { ...t.files['classpath'], 'build/classes/A.class': flip(t.files['classpath']?.['build/classes/A.class']) } },
});

const tests = fc
  .uniqueArray(
    fc.record({ suite: fc.constantFrom('S', 'T'), name: fc.constantFrom('one', 'two', 'three'), outcome: fc.constantFrom('passed', 'failed', 'skipped', null), duration, attempts: fc.constantFrom(1, 2) }),
    { selector: (t) => `${t.suite}.${t.name}`, maxLength: 6 },
  )
  .map((list): TestFacts[] => [...list].sort((x, y) => x.suite.localeCompare(y.suite) || x.name.localeCompare(y.name)));

/** Resolved configurations (dependencies.ts), ordered as resolvedConfigurationsOf orders them. */
const dependencies = fc
  .uniqueArray(
    fc.record({
      project: fc.constantFrom(':', ':lib'),
      configuration: fc.constantFrom('compileClasspath', 'test'),
      modules: fc.dictionary(fc.constantFrom('acme:money', 'junit:junit', 'project :lib'), fc.constantFrom('', '1.2', '1.3', '9.9 (unresolved)'), { maxKeys: 3 }),
      omitted: fc.constantFrom(0, 2),
    }),
    { selector: (c) => `${c.project}\u0000${c.configuration}`, maxLength: 3 },
  )
  .map((list) => [...list].sort((x, y) => (`${x.project}\u0000${x.configuration}` < `${y.project}\u0000${y.configuration}` ? -1 : 1)));

const factsWithoutInputs = fc.record({
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
  dependencies,
});

const facts: fc.Arbitrary<BuildFacts> = factsWithoutInputs.chain((f) => withInputs(f.tasks).map((taskInputs) => ({ ...f, taskInputs })));

/** B as a variation of A (most fields shared), or an unrelated build. */
const pair = fc.oneof(
  fc.tuple(facts, facts),
  fc
    .tuple(facts, fc.record({ tasks, tests, dependencies, duration: maybe(fc.constantFrom(1_000, 5_000, 60_000)), outcome: maybe(fc.constantFrom('succeeded', 'failed')) }))
    .chain(([a, change]) => withInputs(change.tasks).map((taskInputs) => [a, { ...a, ...change, taskInputs }] as const)),
  // The same tasks, their inputs recorded anew: differences of inputs alone.
  facts.chain((a) => withInputs(a.tasks).map((taskInputs) => [a, { ...a, taskInputs }] as const)),
  // The same tasks, some with one class file of their classpath changed (another task's output, where one says so).
  facts.chain((a) =>
    fc.array(fc.boolean(), { minLength: a.taskInputs.length, maxLength: a.taskInputs.length }).map((flips) => [a, { ...a, taskInputs: a.taskInputs.map((t, i) => (flips[i] ? classChanged(t) : t)) }] as const),
  ),
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
        // A task in both whose recorded key, implementation or input hashes differ is not alike either.
        const made = (f: BuildFacts) => new Map(f.taskInputs.map((t) => [key(t), JSON.stringify([t.cacheKey, t.implementation, Object.entries(t.inputs).sort()])]));
        const [madeA, madeB] = [made(a), made(b)];
        const inputsDiffer = (k: string) => inA.has(k) && inB.has(k) && madeA.has(k) && madeB.has(k) && madeA.get(k) !== madeB.get(k);
        const expected = new Set([...new Set([...inA.keys(), ...inB.keys()])].filter((k) => JSON.stringify(inA.get(k)) !== JSON.stringify(inB.get(k)) || inputsDiffer(k)));
        expect(differing).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it("a task's input changes name only inputs whose hashes differ, and upstream only when other tasks produced every changed file", () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const inputsOf = (f: BuildFacts) => new Map(f.taskInputs.map((t) => [`${t.path}#${t.occurrence}`, t]));
        const [ia, ib] = [inputsOf(a), inputsOf(b)];
        for (const d of compareFacts(a, b).sections.find((s) => s.id === 'tasks')!.differences) {
          if (d.kind !== 'task-inputs') continue;
          const [x, y] = [ia.get(`${d.path}#${d.occurrence}`)!, ib.get(`${d.path}#${d.occurrence}`)!];
          for (const i of d.inputs) {
            expect(x.inputs[i.name]).not.toEqual(y.inputs[i.name]);
            for (const f of i.files) expect(x.files[i.name]?.[f.path]).not.toEqual(y.files[i.name]?.[f.path]);
            if (i.producedBy.length > 0) expect(i.files.length).toBeGreaterThan(0);
          }
          expect(d.cause === 'upstream').toBe(!d.implementation && d.inputs.length > 0 && d.inputs.every((i) => i.producedBy.length > 0));
          expect(d.cause === 'inputs').toBe(d.inputs.some((i) => i.producedBy.length === 0));
        }
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
