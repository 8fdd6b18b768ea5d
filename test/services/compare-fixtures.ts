import { event, ingestLine, type BuildEvent } from '../support/lines.js';
// Builds to compare, as ingest lines: a passing and a failing build of one project that differ
// the way real pairs do (a failing test and task, a slower task, another commit and JVM, one
// more requested task), and large builds of N tasks and N tests for the benchmark.

export interface TaskSpec {
  readonly path: string;
  readonly outcome: string;
  readonly duration: number;
  readonly cacheable?: boolean;
  /** What its cache key was made of: a TaskInputs event as the Gradle agent sends it. */
  readonly inputs?: { readonly cacheKey: string; readonly inputs: Record<string, string>; readonly files?: Record<string, Record<string, string>>; readonly outputs?: readonly string[]; readonly implementation?: Record<string, unknown> };
}

export interface TestSpec {
  readonly suite: string;
  readonly name: string;
  readonly outcome: 'passed' | 'failed' | 'skipped';
  readonly duration: number;
}

export interface BuildSpec {
  readonly id: string;
  readonly start: number;
  readonly project?: string;
  readonly tool?: string;
  readonly toolVersion?: string;
  readonly outcome: 'succeeded' | 'failed';
  readonly user?: string;
  readonly requested?: readonly string[];
  readonly environment?: Record<string, unknown>;
  readonly options?: Record<string, unknown>;
  readonly tags?: readonly string[];
  readonly values?: Readonly<Record<string, string>>;
  readonly tasks?: readonly TaskSpec[];
  readonly tests?: readonly TestSpec[];
  readonly failures?: readonly { classification: string; message: string }[];
  /** ResolvedDependencies events (the data as the agents send it), after the tasks. */
  readonly dependencies?: readonly Record<string, unknown>[];
  /** Leave BuildFinished out: the build stays incomplete. */
  readonly unfinished?: boolean;
}

/** One ingest line. Tasks run one after another; each task's tests run inside it, in turn. */
export function buildLine(s: BuildSpec): string {
  const events: BuildEvent[] = [];
  let t = s.start;
  const ev = (eventType: string, data: Record<string, unknown>, at = t) => events.push(event(at, eventType, data));
  ev('BuildStarted', {});
  ev('BuildAgent', { username: s.user ?? 'ci', publicHostname: 'build-1.ci.example.com' });
  ev('ProjectStructure', { rootProjectName: s.project ?? 'app' });
  ev('BuildRequestedTasks', { requested: [...(s.requested ?? ['build'])], excluded: [] });
  if (s.environment) ev('Environment', s.environment);
  if (s.options) ev('BuildOptions', s.options);
  for (const tag of s.tags ?? []) ev('UserTag', { tag });
  for (const [key, value] of Object.entries(s.values ?? {})) ev('UserNamedValue', { key, value });
  const tests = [...(s.tests ?? [])];
  let testId = 0;
  (s.tasks ?? []).forEach((task, i) => {
    t += 1;
    ev('TaskStarted', { id: i + 1, path: task.path });
    const begin = t;
    // The build's tests run in its last task.
    if (i === (s.tasks ?? []).length - 1) {
      for (const test of tests.splice(0)) {
        testId++;
        ev('TestStarted', { id: testId, suite: test.suite, name: test.name });
        t += test.duration;
        ev('TestFinished', { id: testId, outcome: test.outcome, attempt: 1 });
      }
    }
    t = Math.max(t, begin + task.duration);
    ev('TaskFinished', { id: i + 1, path: task.path, outcome: task.outcome, cacheable: task.cacheable ?? true });
    if (task.inputs) ev('TaskInputs', { id: i + 1, path: task.path, implementation: { classLoader: 'c1', actions: ['Task_Decorated'] }, files: {}, outputs: [], ...task.inputs });
  });
  for (const d of s.dependencies ?? []) ev('ResolvedDependencies', d);
  if (!s.unfinished) {
    t += 10;
    ev('BuildFinished', { outcome: s.outcome, failures: [...(s.failures ?? [])] });
  }
  return ingestLine(s.id, events, { toolType: s.tool ?? 'native', toolVersion: s.toolVersion ?? '8.10.2' });
}

/** What :compileJava's cache key was made of, Price.java's content as `price` says. */
const compileInputs = (price: 'p1' | 'p2', key: string): TaskSpec['inputs'] => ({
  cacheKey: key,
  inputs: { source: price === 'p1' ? 's1' : 's2', classpath: 'c1', 'options.compilerArgs': 'a1' },
  files: { source: { 'src/main/java/acme/Price.java': price, 'src/main/java/acme/Stock.java': 'k1' }, classpath: { 'money-1.2.jar': 'm1' } },
  outputs: ['build/classes/java/main'],
});

const PASS_TASKS: readonly TaskSpec[] = [
  { path: ':compileJava', outcome: 'from-cache', duration: 40, inputs: compileInputs('p1', '5f1c0e9a') },
  { path: ':processResources', outcome: 'up-to-date', duration: 3 },
  { path: ':compileTestJava', outcome: 'from-cache', duration: 35 },
  { path: ':test', outcome: 'success', duration: 4_000 },
];

const PASS_TESTS: readonly TestSpec[] = [
  { suite: 'acme.PriceTest', name: 'roundsHalfCents', outcome: 'passed', duration: 30 },
  { suite: 'acme.PriceTest', name: 'addsTax', outcome: 'passed', duration: 20 },
  { suite: 'acme.StockTest', name: 'reserves', outcome: 'passed', duration: 50 },
];

/** The root project's compile classpath, money at `money`. */
const classpath = (money: string) => ({ project: ':', configuration: 'compileClasspath', dependencies: [`acme:money:${money}`, 'org.slf4j:slf4j-api:2.0.9'] });

/** A passing build of `project` and, later, a failing one: what changed is known exactly. */
export function passingAndFailing(project: string, ids: { pass: string; fail: string }, start: number): { pass: string; fail: string } {
  const pass = buildLine({
    id: ids.pass,
    start,
    project,
    outcome: 'succeeded',
    environment: { jvmVersion: '17.0.9', numberOfCpuCores: 8 },
    values: { 'Git branch': 'main', 'Git commit id': 'a1b2c3d4e5f6', 'Git status': 'clean' },
    tags: ['CI'],
    tasks: PASS_TASKS,
    tests: PASS_TESTS,
    dependencies: [classpath('1.2')],
  });
  const fail = buildLine({
    id: ids.fail,
    start: start + 3_600_000,
    project,
    outcome: 'failed',
    requested: ['build', 'publish'],
    environment: { jvmVersion: '21.0.2', numberOfCpuCores: 8 },
    values: { 'Git branch': 'main', 'Git commit id': 'f6e5d4c3b2a1', 'Git status': 'clean' },
    tags: ['CI'],
    tasks: [
      // The sources changed: compiled again instead of coming from the cache.
      { path: ':compileJava', outcome: 'success', duration: 9_000, inputs: compileInputs('p2', 'b03d77e2') },
      { path: ':processResources', outcome: 'up-to-date', duration: 3 },
      { path: ':compileTestJava', outcome: 'from-cache', duration: 35 },
      { path: ':test', outcome: 'failed', duration: 4_100 },
    ],
    tests: [
      { suite: 'acme.PriceTest', name: 'roundsHalfCents', outcome: 'failed', duration: 45 },
      PASS_TESTS[1]!,
      PASS_TESTS[2]!,
      { suite: 'acme.PriceTest', name: 'formatsCurrency', outcome: 'passed', duration: 10 },
    ],
    failures: [{ classification: 'verification', message: "Execution failed for task ':test'." }],
    // A newer money; and the tests' classpath, which the passing build's agent did not send.
    dependencies: [classpath('1.3'), { project: ':', configuration: 'testCompileClasspath', dependencies: ['junit:junit:4.13.2'] }],
  });
  return { pass, fail };
}

/** A build of n tasks and n tests; `variant` changes some outcomes and durations. */
export function largeBuildLine(id: string, n: number, variant: 0 | 1, start: number): string {
  const tasks: TaskSpec[] = [];
  for (let i = 0; i < n; i++) {
    const avoided = (i + variant) % 5 === 0;
    tasks.push({ path: `:module${Math.floor(i / 20)}:task${i % 20}`, outcome: avoided ? 'from-cache' : 'success', duration: avoided ? 2 : 20 + ((i * 7919 + variant * 31) % 900) });
  }
  const tests: TestSpec[] = [];
  for (let i = 0; i < n; i++) {
    tests.push({ suite: `acme.module${Math.floor(i / 50)}.Suite${i % 7}`, name: `test${i}`, outcome: variant === 1 && i % 997 === 0 ? 'failed' : 'passed', duration: 1 + ((i * 31 + variant * 7) % 40) });
  }
  return buildLine({ id, start, project: 'monorepo', outcome: variant === 1 ? 'failed' : 'succeeded', tasks, tests });
}
