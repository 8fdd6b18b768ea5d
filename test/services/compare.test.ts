// The comparison of two builds, case by case: each kind of difference from builds ingested into a
// store (so the facts are read as the server reads them), the summary's choice and order, and
// the answer for builds that are unknown, invisible, still being stored or deleted.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuildNotReadyError } from '../../src/errors/build.js';
import { NotFoundError } from '../../src/errors/domain.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { CONTRACT_NAMES } from '../../src/services/build-facts.js';
import { compareBuilds, type Comparison, type Difference, type SectionId } from '../../src/services/compare.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { SEE_EVERYTHING, type BuildStore } from '../../src/store/types.js';
import { buildLine, passingAndFailing, type BuildSpec } from './compare-fixtures.js';

const T0 = Date.UTC(2026, 5, 1, 8);
let dir: string;
let database: DatabaseHandle;
let store: BuildStore;
let n = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'buildscope-compare-'));
  database = await openDatabase({ data: dir });
  store = await openBuildStore(database, { ingestWorker: false });
});

afterAll(async () => {
  await store?.close();
  await database?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Ingests two builds made from one spec and its variation, and compares them. */
async function pair(base: Omit<BuildSpec, 'id' | 'start'>, change: Partial<BuildSpec>): Promise<Comparison> {
  const a = `cmpa${String(++n).padStart(9, '0')}`;
  const b = `cmpb${String(n).padStart(9, '0')}`;
  const results = await store.ingestNdjson([buildLine({ ...base, id: a, start: T0 }), buildLine({ ...base, ...change, id: b, start: T0 + 60_000 })].join('\n'));
  expect(results.map((r) => r.status)).toEqual(['stored', 'stored']);
  return compareBuilds(store, a, b, SEE_EVERYTHING);
}

const section = (c: Comparison, id: SectionId): readonly Difference[] => c.sections.find((s) => s.id === id)!.differences;
const BASE: Omit<BuildSpec, 'id' | 'start'> = {
  outcome: 'succeeded',
  tasks: [
    { path: ':a', outcome: 'success', duration: 100 },
    { path: ':b', outcome: 'from-cache', duration: 5 },
  ],
};

describe('each kind of difference', () => {
  it('two builds made alike differ in nothing', async () => {
    const c = await pair(BASE, {});
    expect(c.identical).toBe(true);
    expect(c.summary).toEqual([]);
    expect(c.sections.map((s) => [s.id, s.differences.length])).toEqual([['header', 0], ['asked', 0], ['tasks', 0], ['dependencies', 0], ['tests', 0], ['failures', 0]]);
    expect(c.sections.find((s) => s.id === 'tasks')!.compared).toBe(2);
  });

  it('header: outcome, duration, tool version, user', async () => {
    const c = await pair(BASE, { outcome: 'failed', toolVersion: '8.11', user: 'dana', tasks: [BASE.tasks![0]!, { ...BASE.tasks![1]!, duration: 4_000 }] });
    const fields = section(c, 'header').filter((d) => d.kind === 'field' && d.group === 'build');
    expect(fields).toEqual([
      { kind: 'field', group: 'build', name: 'duration', before: c.a.duration, after: c.b.duration },
      { kind: 'field', group: 'build', name: 'outcome', before: 'succeeded', after: 'failed' },
      { kind: 'field', group: 'build', name: 'tool version', before: '8.10.2', after: '8.11' },
      { kind: 'field', group: 'build', name: 'user', before: 'ci', after: 'dana' },
    ]);
    expect(c.b.duration! - c.a.duration!).toBe(3_995);
  });

  it('what was asked: requested tasks, environment, options, tags, custom values, git', async () => {
    const c = await pair(
      { ...BASE, environment: { jvmVersion: '17' }, options: { parallel: false }, tags: ['CI'], values: { Team: 'core', [CONTRACT_NAMES.gitCommitId]: 'aaa', [CONTRACT_NAMES.gitBranch]: 'main' } },
      {
        requested: ['build', 'check'],
        environment: { jvmVersion: '21', numberOfCpuCores: 4 },
        options: { parallel: true },
        tags: ['CI', 'Dirty'],
        values: { Team: 'web', [CONTRACT_NAMES.gitCommitId]: 'bbb', [CONTRACT_NAMES.gitBranch]: 'main' },
      },
    );
    expect(section(c, 'asked')).toEqual([
      { kind: 'list', group: 'requested', name: 'requested', added: ['check'], removed: [] },
      { kind: 'list', group: 'tags', name: 'tags', added: ['Dirty'], removed: [] },
      { kind: 'field', group: 'git', name: 'commit', before: 'aaa', after: 'bbb' },
      // The Dirty tag is the dirty state when no Git status value says it.
      { kind: 'field', group: 'git', name: 'status', before: null, after: 'dirty' },
      { kind: 'field', group: 'environment', name: 'jvmVersion', before: '17', after: '21' },
      { kind: 'field', group: 'environment', name: 'numberOfCpuCores', before: null, after: 4 },
      { kind: 'field', group: 'options', name: 'parallel', before: false, after: true },
      { kind: 'field', group: 'values', name: 'Team', before: 'core', after: 'web' },
    ]);
  });

  it('tasks: added, removed, outcome (cache) and cacheable changes, durations largest first', async () => {
    const c = await pair(
      { ...BASE, tasks: [...BASE.tasks!, { path: ':c', outcome: 'success', duration: 50 }, { path: ':old', outcome: 'success', duration: 10 }] },
      {
        tasks: [
          { path: ':a', outcome: 'success', duration: 300 },
          { path: ':b', outcome: 'success', duration: 1_005, cacheable: false },
          { path: ':c', outcome: 'success', duration: 60 },
          { path: ':new', outcome: 'failed', duration: 7 },
        ],
      },
    );
    const tasks = section(c, 'tasks');
    expect(tasks.filter((d) => d.kind === 'task-added' || d.kind === 'task-removed').map((d) => [d.kind, d.kind === 'task-added' || d.kind === 'task-removed' ? d.task.path : ''])).toEqual([
      ['task-added', ':new'],
      ['task-removed', ':old'],
    ]);
    expect(tasks.filter((d) => d.kind === 'task-outcome')).toEqual([{ kind: 'task-outcome', path: ':b', occurrence: 1, before: 'from-cache', after: 'executed' }]);
    expect(tasks.filter((d) => d.kind === 'task-cacheable')).toEqual([{ kind: 'task-cacheable', path: ':b', occurrence: 1, before: true, after: false }]);
    expect(tasks.filter((d) => d.kind === 'task-duration').map((d) => (d.kind === 'task-duration' ? [d.path, d.after - d.before] : []))).toEqual([
      [':b', 1_000],
      [':a', 200],
      [':c', 10],
    ]);
    expect(c.summary.filter((e) => e.reason === 'failing-task').map((e) => e.difference)).toEqual([{ kind: 'task-added', task: { path: ':new', occurrence: 1, outcome: 'failed', duration: 7, cacheable: true } }]);
    expect(section(c, 'header')).toContainEqual({ kind: 'field', group: 'counts', name: 'tasks avoided', before: 1, after: 0 });
  });

  it('why a task missed the cache: the inputs whose hashes differ, the files that changed, and the tasks downstream of them', async () => {
    // A Java build: one source file changed, so :compileJava ran, and :compileTestJava ran
    // because :compileJava's outputs (on its classpath) changed.
    const compile = (hello: string, key: string) => ({
      cacheKey: key,
      inputs: { source: hello === 'h1' ? 's1' : 's2', 'options.compilerArgs': 'a1' },
      files: { source: { 'src/main/java/Hello.java': hello, 'src/main/java/Other.java': 'o1' } },
      outputs: ['build/classes/java/main'],
    });
    const downstream = (cls: string, key: string) => ({
      cacheKey: key,
      inputs: { classpath: cls === 'c1' ? 'p1' : 'p2', source: 't1' },
      files: { classpath: { 'build/classes/java/main/Hello.class': cls, 'junit.jar': 'j1' }, source: { 'src/test/java/HelloTest.java': 't1' } },
      outputs: ['build/classes/java/test'],
    });
    const c = await pair(
      {
        ...BASE,
        tasks: [
          { path: ':compileJava', outcome: 'from-cache', duration: 40, inputs: compile('h1', 'k1') },
          { path: ':compileTestJava', outcome: 'from-cache', duration: 30, inputs: downstream('c1', 'k2') },
          { path: ':processResources', outcome: 'up-to-date', duration: 2, inputs: { cacheKey: 'k3', inputs: { resources: 'r1' } } },
        ],
      },
      {
        tasks: [
          { path: ':compileJava', outcome: 'success', duration: 900, inputs: compile('h2', 'k4') },
          { path: ':compileTestJava', outcome: 'success', duration: 700, inputs: downstream('c2', 'k5') },
          { path: ':processResources', outcome: 'up-to-date', duration: 2, inputs: { cacheKey: 'k3', inputs: { resources: 'r1' } } },
        ],
      },
    );
    const inputs = section(c, 'tasks').filter((d) => d.kind === 'task-inputs');
    expect(inputs).toEqual([
      {
        kind: 'task-inputs',
        path: ':compileJava',
        occurrence: 1,
        missed: true,
        before: 'k1',
        after: 'k4',
        implementation: false,
        inputs: [{ name: 'source', change: 'changed', files: [{ path: 'src/main/java/Hello.java', change: 'changed' }], filesOmitted: false, producedBy: [] }],
        cause: 'inputs',
      },
      {
        kind: 'task-inputs',
        path: ':compileTestJava',
        occurrence: 1,
        missed: true,
        before: 'k2',
        after: 'k5',
        implementation: false,
        inputs: [{ name: 'classpath', change: 'changed', files: [{ path: 'build/classes/java/main/Hello.class', change: 'changed' }], filesOmitted: false, producedBy: [':compileJava'] }],
        cause: 'upstream',
      },
    ]);
    // The summary names the root cause only: the compile task and its changed source.
    expect(c.summary.filter((e) => e.reason === 'cache-miss').map((e) => e.difference)).toEqual([inputs[0]]);
  });

  it('a task whose implementation changed, and one whose key differs with no recorded input', async () => {
    const task = (key: string, classLoader: string) => ({ path: ':x', outcome: 'from-cache', duration: 1, inputs: { cacheKey: key, inputs: { a: 'v' }, implementation: { classLoader } } });
    const c = await pair({ ...BASE, tasks: [task('k1', 'c1')] }, { tasks: [{ ...task('k2', 'c2'), outcome: 'success' }] });
    expect(section(c, 'tasks').filter((d) => d.kind === 'task-inputs')).toMatchObject([{ path: ':x', implementation: true, inputs: [], cause: 'implementation', missed: true }]);
    const d = await pair({ ...BASE, tasks: [task('k1', 'c1')] }, { tasks: [task('k2', 'c1')] });
    expect(section(d, 'tasks').filter((x) => x.kind === 'task-inputs')).toMatchObject([{ path: ':x', implementation: false, inputs: [], cause: 'unknown', missed: false }]);
    expect(d.summary).toEqual([]);
  });

  it('tasks of the same path are paired in the order they finished', async () => {
    const c = await pair(
      { ...BASE, tasks: [{ path: ':gen', outcome: 'success', duration: 10 }, { path: ':gen', outcome: 'success', duration: 20 }] },
      { tasks: [{ path: ':gen', outcome: 'success', duration: 10 }, { path: ':gen', outcome: 'up-to-date', duration: 20 }, { path: ':gen', outcome: 'success', duration: 5 }] },
    );
    expect(section(c, 'tasks').map((d) => [d.kind, 'occurrence' in d ? d.occurrence : d.kind === 'task-added' ? d.task.occurrence : 0])).toEqual([
      ['task-added', 3],
      ['task-outcome', 2],
    ]);
  });

  it('tests: newly failing, fixed, added, removed, durations', async () => {
    const tests = [
      { suite: 'S', name: 'breaks', outcome: 'passed', duration: 10 },
      { suite: 'S', name: 'heals', outcome: 'failed', duration: 10 },
      { suite: 'S', name: 'gone', outcome: 'passed', duration: 10 },
      { suite: 'S', name: 'slower', outcome: 'passed', duration: 10 },
    ] as const;
    const c = await pair(
      { ...BASE, tests },
      {
        tests: [
          { ...tests[0], outcome: 'failed' },
          { ...tests[1], outcome: 'passed' },
          { ...tests[3], duration: 500 },
          { suite: 'S', name: 'fresh', outcome: 'skipped', duration: 1 },
        ],
      },
    );
    expect(section(c, 'tests')).toEqual([
      { kind: 'test-added', test: { suite: 'S', name: 'fresh', outcome: 'skipped', duration: 1, attempts: 1 } },
      { kind: 'test-removed', test: { suite: 'S', name: 'gone', outcome: 'passed', duration: 10, attempts: 1 } },
      { kind: 'test-outcome', suite: 'S', name: 'breaks', before: 'passed', after: 'failed' },
      { kind: 'test-outcome', suite: 'S', name: 'heals', before: 'failed', after: 'passed' },
      { kind: 'test-duration', suite: 'S', name: 'slower', before: 10, after: 500 },
    ]);
    expect(c.summary.filter((e) => e.reason === 'failing-test').map((e) => e.difference.kind === 'test-outcome' && e.difference.name)).toEqual(['breaks', 'heals']);
  });

  it('failures: present in one build and not the other, counted as a multiset', async () => {
    const f = (message: string) => ({ classification: 'verification', message });
    const c = await pair({ ...BASE, outcome: 'failed', failures: [f('x'), f('x'), f('y')] }, { failures: [f('x'), f('z')] });
    expect(section(c, 'failures')).toEqual([
      { kind: 'failure-removed', failure: f('x') },
      { kind: 'failure-removed', failure: f('y') },
      { kind: 'failure-added', failure: f('z') },
    ]);
  });
});

describe('dependencies', () => {
  const resolved = (configuration: string, dependencies: string[], more: Record<string, unknown> = {}) => ({ project: ':', configuration, dependencies, ...more });

  it('names modules at another version or in one build only, of the configurations both resolved, and the configurations only one resolved', async () => {
    const c = await pair(
      { ...BASE, dependencies: [resolved('compileClasspath', ['acme:money:1.2', 'acme:tax:2.0', 'project :lib']), resolved('runtimeClasspath', ['acme:money:1.2'])] },
      {
        dependencies: [
          resolved('compileClasspath', ['acme:money:1.3', 'acme:ledger:1.0', 'project :lib'], { unresolved: ['acme:tax:2.1'] }),
          resolved('testCompileClasspath', ['junit:junit:4.13.2']),
        ],
      },
    );
    expect(section(c, 'dependencies')).toEqual([
      { kind: 'list', group: 'configurations', name: 'resolved', added: ['testCompileClasspath'], removed: ['runtimeClasspath'] },
      { kind: 'dependency', project: ':', configuration: 'compileClasspath', module: 'acme:ledger', before: null, after: '1.0' },
      { kind: 'dependency', project: ':', configuration: 'compileClasspath', module: 'acme:money', before: '1.2', after: '1.3' },
      { kind: 'dependency', project: ':', configuration: 'compileClasspath', module: 'acme:tax', before: '2.0', after: '2.1 (unresolved)' },
    ]);
    // Four modules of the configuration both resolved, and the two only one resolved.
    expect(c.sections.find((s) => s.id === 'dependencies')!.compared).toBe(6);
    expect(c.summary.filter((e) => e.reason === 'dependency').map((e) => e.difference)).toEqual(section(c, 'dependencies').slice(1));
  });

  it('Maven coordinates with a classifier: the version is the last part', async () => {
    const c = await pair({ ...BASE, dependencies: [resolved('test', ['org.acme:native:linux-x86_64:1.0'])] }, { dependencies: [resolved('test', ['org.acme:native:linux-x86_64:1.1'])] });
    expect(section(c, 'dependencies')).toEqual([{ kind: 'dependency', project: ':', configuration: 'test', module: 'org.acme:native:linux-x86_64', before: '1.0', after: '1.1' }]);
  });

  it('a module the agent may have left unlisted (omitted past its bound) is no difference; one at another version is', async () => {
    const c = await pair(
      { ...BASE, dependencies: [resolved('compileClasspath', ['a:a:1', 'b:b:1', 'c:c:1'])] },
      { dependencies: [resolved('compileClasspath', ['a:a:2'], { omitted: 2 })] },
    );
    expect(section(c, 'dependencies')).toEqual([{ kind: 'dependency', project: ':', configuration: 'compileClasspath', module: 'a:a', before: '1', after: '2' }]);
  });

  it('the same dependencies, sent in another order or twice, are no difference', async () => {
    const c = await pair(
      { ...BASE, dependencies: [resolved('compileClasspath', ['b:b:1', 'a:a:1'])] },
      { dependencies: [resolved('compileClasspath', ['x:x:1']), resolved('compileClasspath', ['a:a:1', 'b:b:1'])] },
    );
    expect(section(c, 'dependencies')).toEqual([]);
    expect(c.identical).toBe(true);
  });
});

describe('the summary', () => {
  it('of a passing and a failing build names the outcome, the failing task and test, the failure, then the rest', async () => {
    const { pass, fail } = passingAndFailing('shop', { pass: 'shoppass00001', fail: 'shopfail00001' }, T0);
    await store.ingestNdjson([pass, fail].join('\n'));
    const c = await compareBuilds(store, 'shoppass00001', 'shopfail00001', SEE_EVERYTHING);
    expect(c.summary.map((e) => e.reason)).toEqual(['outcome', 'failing-task', 'failing-test', 'failure', 'requested', 'git', 'dependency', 'cache-miss', 'duration', 'tasks', 'slower-task', 'environment']);
    const [outcome, task, test, , requested, git, dependency, miss, duration, tasks, slower, environment] = c.summary.map((e) => e.difference);
    expect(dependency).toEqual({ kind: 'dependency', project: ':', configuration: 'compileClasspath', module: 'acme:money', before: '1.2', after: '1.3' });
    expect(miss).toMatchObject({ kind: 'task-inputs', path: ':compileJava', missed: true, cause: 'inputs', inputs: [{ name: 'source', files: [{ path: 'src/main/java/acme/Price.java', change: 'changed' }] }] });
    expect(outcome).toMatchObject({ name: 'outcome', before: 'succeeded', after: 'failed' });
    expect(task).toEqual({ kind: 'task-outcome', path: ':test', occurrence: 1, before: 'executed', after: 'failed' });
    expect(test).toEqual({ kind: 'test-outcome', suite: 'acme.PriceTest', name: 'roundsHalfCents', before: 'passed', after: 'failed' });
    expect(requested).toEqual({ kind: 'list', group: 'requested', name: 'requested', added: ['publish'], removed: [] });
    expect(git).toMatchObject({ name: 'commit', before: 'a1b2c3d4e5f6', after: 'f6e5d4c3b2a1' });
    expect(duration).toMatchObject({ name: 'duration' });
    expect(tasks).toMatchObject({ name: 'tasks avoided', before: 3, after: 2 });
    expect(slower).toMatchObject({ kind: 'task-duration', path: ':compileJava' });
    expect(environment).toMatchObject({ name: 'jvmVersion', before: '17.0.9', after: '21.0.2' });
    expect(c.a).toMatchObject({ id: 'shoppass00001', gitBranch: 'main', gitCommit: 'a1b2c3d4e5f6', tasks: 4, tests: 3 });
  });

  it('leaves out what explains a duration when the durations are close', async () => {
    const c = await pair(BASE, { tasks: [{ ...BASE.tasks![0]!, duration: 150 }, BASE.tasks![1]!] });
    expect(section(c, 'tasks')).toHaveLength(1);
    expect(c.summary).toEqual([]);
  });
});

describe('builds that cannot be compared', () => {
  it('an unknown ID and a build the caller may not see answer alike: not found', async () => {
    const { pass, fail } = passingAndFailing('secret', { pass: 'secretpass001', fail: 'secretfail001' }, T0);
    await store.ingestNdjson([pass, fail].join('\n'));
    const onlyShop = { projects: ['shop'], withoutProject: false };
    const refusal = async (a: string, b: string) => {
      const e = await compareBuilds(store, a, b, onlyShop).catch((err: unknown) => err);
      expect(e).toBeInstanceOf(NotFoundError);
      return (e as Error).message.replace(/"[^"]*"/, '"ID"');
    };
    expect(await refusal('secretpass001', 'secretfail001')).toBe(await refusal('nosuchbuild01', 'secretfail001'));
    expect(await refusal('shoppass00001', 'secretfail001')).toBe(await refusal('shoppass00001', 'nosuchbuild01'));
    await expect(compareBuilds(store, 'secretpass001', 'secretfail001', SEE_EVERYTHING)).resolves.toMatchObject({ identical: false });
  });

  it('a build still being stored answers not ready', async () => {
    await store.ingestNdjson(buildLine({ ...BASE, id: 'unfinished001', start: T0, unfinished: true }));
    await expect(compareBuilds(store, 'shoppass00001', 'unfinished001', SEE_EVERYTHING)).rejects.toBeInstanceOf(BuildNotReadyError);
  });
});

it('names CI and git values as the capture agents send them', () => {
  const contract = JSON.parse(readFileSync(new URL('../../agents/agent-contract.json', import.meta.url), 'utf8')) as { values: Record<string, string>; tags: { dirty: string } };
  expect(contract.values).toMatchObject({
    ciProvider: CONTRACT_NAMES.ciProvider,
    ciBuild: CONTRACT_NAMES.ciBuild,
    gitRepository: CONTRACT_NAMES.gitRepository,
    gitCommitId: CONTRACT_NAMES.gitCommitId,
    gitBranch: CONTRACT_NAMES.gitBranch,
    gitStatus: CONTRACT_NAMES.gitStatus,
  });
  expect(contract.tags.dirty).toBe(CONTRACT_NAMES.dirtyTag);
});
