// Two builds side by side: what differs in the header, in what was asked and in what happened,
// with a summary of the differences most likely to explain a change of outcome or duration
// (compare-summary.ts). Any two builds of any tools compare; the builds are read once each
// (build-facts.ts) and compared in memory.
//
// Build A is "before", build B "after": comparing B with A gives the same differences with
// before and after (and added and removed) exchanged, in the same order
// (test/services/compare.property.test.ts).

import type { BuildStore, Visibility } from '../store/types.js';
import { byTestIdentity, readBuildFacts, testKey, type BuildFacts, type FailureFacts, type Scalar, type TaskOutcome } from './build-facts.js';
import { summaryOf } from './compare-summary.js';
import { compareText } from './text-order.js';
import { inputsDifference, producersOf, type TaskInputFacts } from './task-inputs.js';
import { configurationKey, configurationName, type ResolvedConfiguration } from './dependencies.js';
import type { BuildSide, Comparison, Difference, FieldGroup, ListGroup, Section } from './comparison.js';

export * from './comparison.js';

// ---- ordering: the same whichever build is A (so that swapping only swaps) ----------------

const sameScalar = (x: Scalar, y: Scalar): boolean => x === y || (typeof x === 'number' && typeof y === 'number' && Number.isNaN(x) && Number.isNaN(y));

/** Differences of two flat maps, by name. */
function fieldDifferences(group: FieldGroup, a: Readonly<Record<string, Scalar>>, b: Readonly<Record<string, Scalar>>): { compared: number; differences: Difference[] } {
  const names = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort(compareText);
  const differences: Difference[] = [];
  for (const name of names) {
    const before = a[name] ?? null;
    const after = b[name] ?? null;
    if (!sameScalar(before, after)) differences.push({ kind: 'field', group, name, before, after });
  }
  return { compared: names.length, differences };
}

/** Sets compared: what B has that A has not (added) and the reverse (removed), sorted. */
function listDifference(group: ListGroup, name: string, a: readonly string[], b: readonly string[]): Difference[] {
  const sa = new Set(a);
  const sb = new Set(b);
  const added = [...sb].filter((x) => !sa.has(x)).sort(compareText);
  const removed = [...sa].filter((x) => !sb.has(x)).sort(compareText);
  return added.length === 0 && removed.length === 0 ? [] : [{ kind: 'list', group, name, added, removed }];
}

const joined = (values: readonly string[] | undefined): Scalar => (values === undefined ? null : values.join(', '));

function countsOf(f: BuildFacts): Record<string, Scalar> {
  const by = (o: TaskOutcome) => f.tasks.filter((t) => t.outcome === o).length;
  return {
    tasks: f.tasks.length,
    'tasks executed': by('executed'),
    'tasks avoided': by('up-to-date') + by('from-cache'),
    'tasks failed': by('failed'),
    tests: f.tests.length,
    'tests failed': f.tests.filter((t) => t.outcome === 'failed').length,
  };
}

function headerSection(a: BuildFacts, b: BuildFacts): Section {
  const fields = (f: BuildFacts): Record<string, Scalar> => ({
    project: f.project,
    tool: f.tool,
    'tool version': f.toolVersion,
    'agent version': f.agentVersion,
    outcome: f.outcome,
    duration: f.duration,
    user: f.user,
    host: f.host,
    'CI provider': f.ci.provider,
  });
  // Start times and CI links differ between any two builds: they are shown, not listed.
  const build = fieldDifferences('build', fields(a), fields(b));
  const counts = fieldDifferences('counts', countsOf(a), countsOf(b));
  return { id: 'header', compared: build.compared + counts.compared, differences: [...build.differences, ...counts.differences] };
}

function askedSection(a: BuildFacts, b: BuildFacts): Section {
  const git = (f: BuildFacts): Record<string, Scalar> => ({ repository: f.git.repository, commit: f.git.commit, branch: f.git.branch, status: f.git.status });
  const valueNames = [...new Set([...Object.keys(a.values), ...Object.keys(b.values)])];
  const values = (f: BuildFacts): Record<string, Scalar> => Object.fromEntries(valueNames.map((n) => [n, joined(f.values[n])]));
  const parts = [
    fieldDifferences('git', git(a), git(b)),
    fieldDifferences('environment', a.environment, b.environment),
    fieldDifferences('options', a.options, b.options),
    fieldDifferences('cache', a.cache, b.cache),
    fieldDifferences('settings', a.serverSettings, b.serverSettings),
    fieldDifferences('values', values(a), values(b)),
  ];
  const lists = [
    ...listDifference('requested', 'requested', a.requested, b.requested),
    ...listDifference('requested', 'excluded', a.excluded, b.excluded),
    ...listDifference('tags', 'tags', a.tags, b.tags),
  ];
  return { id: 'asked', compared: 3 + parts.reduce((s, p) => s + p.compared, 0), differences: [...lists, ...parts.flatMap((p) => p.differences)] };
}

const taskKey = (t: { path: string; occurrence: number }): string => `${t.path}\u0000${t.occurrence}`;
const avoided = (o: TaskOutcome): boolean => o === 'up-to-date' || o === 'from-cache';
const ran = (o: TaskOutcome): boolean => o === 'executed' || o === 'failed';
/** Avoided (up to date or from the cache) in one build and run in the other. */
const missed = (x: TaskOutcome, y: TaskOutcome): boolean => (avoided(x) && ran(y)) || (ran(x) && avoided(y));
const byPath = (x: { path: string; occurrence: number }, y: { path: string; occurrence: number }): number => compareText(x.path, y.path) || x.occurrence - y.occurrence;
/** Largest change first; equal changes by name, so the order does not depend on which build is A. */
const byChange = <T extends { before: number; after: number }>(tie: (x: T, y: T) => number) => (x: T, y: T): number =>
  Math.abs(y.after - y.before) - Math.abs(x.after - x.before) || tie(x, y);

function tasksSection(a: BuildFacts, b: BuildFacts): Section {
  const inB = new Map(b.tasks.map((t) => [taskKey(t), t]));
  const inA = new Set<string>();
  const presence: Extract<Difference, { kind: 'task-added' | 'task-removed' }>[] = [];
  const outcomes: Extract<Difference, { kind: 'task-outcome' }>[] = [];
  const durations: Extract<Difference, { kind: 'task-duration' }>[] = [];
  const cacheable: Extract<Difference, { kind: 'task-cacheable' }>[] = [];
  const inputs: Extract<Difference, { kind: 'task-inputs' }>[] = [];
  const inputsOfB = new Map(b.taskInputs.map((t) => [taskKey(t), t]));
  const inputsOfA = new Map(a.taskInputs.map((t) => [taskKey(t), t]));
  const producers = producersOf(a.taskInputs, b.taskInputs);
  for (const x of a.tasks) {
    const key = taskKey(x);
    inA.add(key);
    const y = inB.get(key);
    if (y === undefined) {
      presence.push({ kind: 'task-removed', task: x });
      continue;
    }
    const at = { path: x.path, occurrence: x.occurrence };
    if (x.outcome !== y.outcome) outcomes.push({ kind: 'task-outcome', ...at, before: x.outcome, after: y.outcome });
    if (x.duration !== y.duration) durations.push({ kind: 'task-duration', ...at, before: x.duration, after: y.duration });
    if (x.cacheable !== y.cacheable) cacheable.push({ kind: 'task-cacheable', ...at, before: x.cacheable, after: y.cacheable });
    const ia: TaskInputFacts | undefined = inputsOfA.get(key);
    const ib: TaskInputFacts | undefined = inputsOfB.get(key);
    const changed = ia !== undefined && ib !== undefined ? inputsDifference(ia, ib, producers) : undefined;
    if (changed !== undefined) inputs.push({ kind: 'task-inputs', ...at, missed: missed(x.outcome, y.outcome), ...changed });
  }
  let added = 0;
  for (const y of b.tasks) {
    if (inA.has(taskKey(y))) continue;
    presence.push({ kind: 'task-added', task: y });
    added++;
  }
  // Records of work that is no task of either build (a Bazel action, keyed by its target, mnemonic
  // and first output) pair by that key alone, and say themselves whether they came from the cache.
  // One that only one build recorded is no difference anyone can tell: Bazel logs no action its
  // local action cache answered.
  const tasks = new Set([...inA, ...inB.keys()]);
  let actions = 0;
  for (const ia of a.taskInputs) {
    const key = taskKey(ia);
    const ib = inputsOfB.get(key);
    if (tasks.has(key) || ib === undefined) continue;
    actions++;
    const changed = inputsDifference(ia, ib, producers);
    const missedAction = ia.avoided !== undefined && ib.avoided !== undefined && ia.avoided !== ib.avoided;
    if (changed !== undefined) inputs.push({ kind: 'task-inputs', path: ia.path, occurrence: ia.occurrence, missed: missedAction, ...changed });
  }
  presence.sort((x, y) => byPath(x.task, y.task));
  outcomes.sort(byPath);
  cacheable.sort(byPath);
  inputs.sort(byPath);
  durations.sort(byChange<(typeof durations)[number]>(byPath));
  return { id: 'tasks', compared: inA.size + added + actions, differences: [...presence, ...outcomes, ...inputs, ...cacheable, ...durations] };
}


function testsSection(a: BuildFacts, b: BuildFacts): Section {
  const inB = new Map(b.tests.map((t) => [testKey(t), t]));
  const inA = new Set<string>();
  const presence: Extract<Difference, { kind: 'test-added' | 'test-removed' }>[] = [];
  const outcomes: Extract<Difference, { kind: 'test-outcome' }>[] = [];
  const durations: Extract<Difference, { kind: 'test-duration' }>[] = [];
  for (const x of a.tests) {
    const key = testKey(x);
    inA.add(key);
    const y = inB.get(key);
    if (y === undefined) {
      presence.push({ kind: 'test-removed', test: x });
      continue;
    }
    const at = { suite: x.suite, name: x.name, ...(x.parameters !== undefined ? { parameters: x.parameters } : {}) };
    if (x.outcome !== y.outcome) outcomes.push({ kind: 'test-outcome', ...at, before: x.outcome, after: y.outcome });
    if (x.duration !== y.duration) durations.push({ kind: 'test-duration', ...at, before: x.duration, after: y.duration });
  }
  let added = 0;
  for (const y of b.tests) {
    if (inA.has(testKey(y))) continue;
    presence.push({ kind: 'test-added', test: y });
    added++;
  }
  presence.sort((x, y) => byTestIdentity(x.test, y.test));
  outcomes.sort(byTestIdentity);
  durations.sort(byChange<(typeof durations)[number]>(byTestIdentity));
  return { id: 'tests', compared: inA.size + added, differences: [...presence, ...outcomes, ...durations] };
}

/**
 * Dependencies: the configurations resolved in one build only (a list), then, for each one both
 * resolved, the modules at another version or in one build only, by project, configuration and
 * module. A configuration only one build resolved (`gradle compileJava` against `gradle build`)
 * is named, not its every module: what was asked explains it. A module one side did not list is
 * no difference when that side's agent left entries unlisted (ResolvedDependencies `omitted`).
 */
function dependenciesSection(a: BuildFacts, b: BuildFacts): Section {
  const inB = new Map(b.dependencies.map((c) => [configurationKey(c.project, c.configuration), c]));
  const both: [ResolvedConfiguration, ResolvedConfiguration][] = [];
  for (const x of a.dependencies) {
    const y = inB.get(configurationKey(x.project, x.configuration));
    if (y !== undefined) both.push([x, y]);
  }
  const differences: Difference[] = listDifference('configurations', 'resolved', a.dependencies.map(configurationName), b.dependencies.map(configurationName));
  let compared = 0;
  for (const [x, y] of both) {
    const modules = [...new Set([...Object.keys(x.modules), ...Object.keys(y.modules)])].sort(compareText);
    compared += modules.length;
    for (const module of modules) {
      const before = x.modules[module] ?? null;
      const after = y.modules[module] ?? null;
      // A module missing from a configuration whose agent left entries unlisted (its bound) may
      // be among them: not a difference anyone can tell.
      if ((before === null && x.omitted > 0) || (after === null && y.omitted > 0)) continue;
      if (before !== after) differences.push({ kind: 'dependency', project: x.project, configuration: x.configuration, module, before, after });
    }
  }
  // Compared: the modules of the configurations both resolved, and each configuration only one did.
  const onlyOne = a.dependencies.length + b.dependencies.length - 2 * both.length;
  return { id: 'dependencies', compared: compared + onlyOne, differences };
}

/** Failures as multisets of (classification, message): what one build has more of than the other. */
function failuresSection(a: BuildFacts, b: BuildFacts): Section {
  const key = (f: FailureFacts) => `${f.classification}\u0000${f.message}`;
  const counts = new Map<string, { failure: FailureFacts; n: number }>();
  for (const f of a.failures) {
    const c = counts.get(key(f)) ?? { failure: f, n: 0 };
    c.n++;
    counts.set(key(f), c);
  }
  for (const f of b.failures) {
    const c = counts.get(key(f)) ?? { failure: f, n: 0 };
    c.n--;
    counts.set(key(f), c);
  }
  const differences: Difference[] = [];
  for (const k of [...counts.keys()].sort(compareText)) {
    const { failure, n } = counts.get(k)!;
    for (let i = 0; i < Math.abs(n); i++) differences.push(n > 0 ? { kind: 'failure-removed', failure } : { kind: 'failure-added', failure });
  }
  return { id: 'failures', compared: counts.size, differences };
}

function sideOf(f: BuildFacts): BuildSide {
  return {
    id: f.id,
    project: f.project,
    tool: f.tool,
    toolVersion: f.toolVersion,
    agentVersion: f.agentVersion,
    outcome: f.outcome,
    start: f.start,
    duration: f.duration,
    user: f.user,
    host: f.host,
    ciProvider: f.ci.provider,
    ciBuild: f.ci.build,
    gitBranch: f.git.branch,
    gitCommit: f.git.commit,
    tasks: f.tasks.length,
    tests: f.tests.length,
  };
}

/** Compares two builds' facts (pure). */
export function compareFacts(a: BuildFacts, b: BuildFacts): Comparison {
  const sections = [headerSection(a, b), askedSection(a, b), tasksSection(a, b), dependenciesSection(a, b), testsSection(a, b), failuresSection(a, b)];
  return {
    a: sideOf(a),
    b: sideOf(b),
    identical: sections.every((s) => s.differences.length === 0),
    summary: summaryOf(sections, a.duration, b.duration),
    sections,
  };
}

/**
 * Compares two builds as the caller may see them: a build she may not see answers exactly as an
 * unknown ID (NotFoundError, 404). Both builds are read at once.
 */
export async function compareBuilds(store: BuildStore, a: string, b: string, visibility: Visibility, options: { retryAfterSeconds?: number } = {}): Promise<Comparison> {
  const [fa, fb] = await Promise.all([readBuildFacts(store, a, visibility, options.retryAfterSeconds), readBuildFacts(store, b, visibility, options.retryAfterSeconds)]);
  return compareFacts(fa, fb);
}
