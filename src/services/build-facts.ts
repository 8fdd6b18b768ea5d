// What a comparison of two builds compares, read from one build: its header, what was asked
// (requested tasks, options, environment, tags, custom values, git), and what happened (tasks,
// tests, failures). Read once per build from its attributes and events through the store, with
// the caller's visibility; compare.ts then works on two of these without touching the store.

import { BuildDeletedError, BuildNotReadyError } from '../errors/build.js';
import { lastDataOf } from './last-data.js';
import { NotFoundError } from '../errors/domain.js';
import { identityOf, testIdOf, testOutcome, type TestOutcome } from '../store/events/test-events.js';
import { tasksOf, type TaskOutcome } from '../store/events/tasks.js';
import type { BuildEvent, BuildStore, BuildWithAttributes, Visibility } from '../store/types.js';
import { taskInputFactsOf, type TaskInputFacts } from './task-inputs.js';
import { resolvedConfigurationsOf, type ResolvedConfiguration } from './dependencies.js';
import { compareText } from './text-order.js';
import { listRow } from './web.js';

export type { TaskOutcome } from '../store/events/tasks.js';
export type { TestOutcome } from '../store/events/test-events.js';

/** A compared value: what an event or attribute says, or null when it says nothing. */
export type Scalar = string | number | boolean | null;

/**
 * The custom value and tag names the capture agents use for CI and git (agents/agent-contract.json,
 * "values" and "tags"; test/services/compare.test.ts holds them to the contract). They get rows of
 * their own in the comparison, not lines among the other custom values.
 */
export const CONTRACT_NAMES = {
  ciProvider: 'CI provider',
  ciBuild: 'CI build',
  gitRepository: 'Git repository',
  gitCommitId: 'Git commit id',
  gitBranch: 'Git branch',
  gitStatus: 'Git status',
  dirtyTag: 'Dirty',
} as const;

/** One finished task. `occurrence` tells apart tasks of the same path in one build (1, 2, ...). */
export interface TaskFacts {
  readonly path: string;
  readonly occurrence: number;
  readonly outcome: TaskOutcome;
  readonly duration: number;
  readonly cacheable: boolean | null;
}

/**
 * One test (suite, name and parameters), its attempts taken together: the outcome of the last.
 * The cases of a parametrized test are tests of their own, as in the store and on the build page
 * (docs/send-your-builds.md: attempts of one test share suite, name and parameters).
 */
export interface TestFacts {
  readonly suite: string;
  readonly name: string;
  /** A parametrized test's parameters (`1-2` for pytest's `test_x[1-2]`); absent for a test without. */
  readonly parameters?: string;
  /** null when the tool's word for it is not one Buildscope reads. */
  readonly outcome: TestOutcome | null;
  /** Every attempt's time, added up. */
  readonly duration: number;
  readonly attempts: number;
}

export interface FailureFacts {
  readonly classification: string;
  readonly message: string;
}

export interface BuildFacts {
  readonly id: string;
  readonly project: string | null;
  readonly tool: string;
  readonly toolVersion: string;
  readonly agentVersion: string;
  readonly outcome: string | null;
  readonly start: number | null;
  readonly duration: number | null;
  readonly user: string | null;
  readonly host: string | null;
  readonly requested: readonly string[];
  readonly excluded: readonly string[];
  /** Flat name -> value maps (nested data as `local.enabled`). */
  readonly environment: Readonly<Record<string, Scalar>>;
  readonly options: Readonly<Record<string, Scalar>>;
  readonly cache: Readonly<Record<string, Scalar>>;
  readonly serverSettings: Readonly<Record<string, Scalar>>;
  readonly tags: readonly string[];
  /** Custom values by name (a name may be sent more than once), without the CI and git ones. */
  readonly values: Readonly<Record<string, readonly string[]>>;
  readonly ci: { readonly provider: string | null; readonly build: string | null };
  readonly git: { readonly repository: string | null; readonly commit: string | null; readonly branch: string | null; readonly status: string | null };
  readonly tasks: readonly TaskFacts[];
  /** What the tool made each task's cache key of, where the agent recorded it (TaskInputs events). */
  readonly taskInputs: readonly TaskInputFacts[];
  readonly tests: readonly TestFacts[];
  readonly failures: readonly FailureFacts[];
  /** What each configuration resolved to, where the agent recorded it (ResolvedDependencies events). */
  readonly dependencies: readonly ResolvedConfiguration[];
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** Nested event data as flat `a.b` names with scalar values (arrays and objects as JSON text). */
function flatten(data: Readonly<Record<string, unknown>> | undefined, prefix = '', out: Record<string, Scalar> = {}): Record<string, Scalar> {
  if (data === undefined) return out;
  for (const [k, v] of Object.entries(data)) {
    const name = prefix + k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) flatten(v as Record<string, unknown>, `${name}.`, out);
    else if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[name] = v;
    else out[name] = JSON.stringify(v) ?? null;
  }
  return out;
}

/** Tasks with their occurrence number per path, in the order they finished. */
export function taskFactsOf(events: readonly BuildEvent[]): TaskFacts[] {
  const seen = new Map<string, number>();
  return tasksOf(events).map((t) => {
    const occurrence = (seen.get(t.path) ?? 0) + 1;
    seen.set(t.path, occurrence);
    return { path: t.path, occurrence, outcome: t.outcome, duration: t.duration, cacheable: t.cacheable };
  });
}

/**
 * Tests from TestStarted/TestFinished, paired by `id` as the search fields pair them
 * (src/store/events/test-events.ts); a test run more than once (retries) is one test whose outcome is
 * its last attempt's, the cases of a parametrized test apart. Ordered by suite, name and parameters.
 */
export function testFactsOf(events: readonly BuildEvent[]): TestFacts[] {
  const startedData = new Map<string, Readonly<Record<string, unknown>>>();
  const startedAt = new Map<string, number>();
  const tests = new Map<string, { suite: string; name: string; parameters?: string; outcome: TestOutcome | null; duration: number; attempts: number }>();
  for (const e of events) {
    const type = e.type.eventType;
    if (type === 'TestStarted') {
      const id = testIdOf(e.data);
      if (id === undefined) continue;
      startedData.set(id, e.data);
      startedAt.set(id, e.timestamp);
    } else if (type === 'TestFinished') {
      const who = identityOf(e.data, startedData);
      if (who === undefined) continue;
      const id = testIdOf(e.data);
      const began = id === undefined ? undefined : startedAt.get(id);
      // Read as the store reads them (failedTestsOf, build-report.ts): from the TestStarted.
      const given = id === undefined ? undefined : startedData.get(id)?.['parameters'];
      const parameters = typeof given === 'string' && given !== '' ? given : undefined;
      const key = testKey({ suite: who.suite, name: who.name, ...(parameters !== undefined ? { parameters } : {}) });
      const t = tests.get(key) ?? { suite: who.suite, name: who.name, ...(parameters !== undefined ? { parameters } : {}), outcome: null, duration: 0, attempts: 0 };
      t.outcome = testOutcome(e.data['outcome']) ?? null;
      t.duration += began === undefined ? 0 : Math.max(0, e.timestamp - began);
      t.attempts++;
      tests.set(key, t);
    }
  }
  return [...tests.values()].sort(byTestIdentity);
}


/** A test's identity as one string: suite, name and parameters (a parametrized test's cases apart). */
export const testKey = (t: { suite: string; name: string; parameters?: string }): string => `${t.suite}\u0000${t.name}\u0000${t.parameters ?? ''}`;

/** Tests by suite, name and parameters (a test without parameters before its parametrized cases). */
export const byTestIdentity = (x: { suite: string; name: string; parameters?: string }, y: { suite: string; name: string; parameters?: string }): number =>
  compareText(x.suite, y.suite) || compareText(x.name, y.name) || compareText(x.parameters ?? '', y.parameters ?? '');

/** The facts of a build from its attributes and events (pure: tests build them without a store). */
export function factsOf(build: BuildWithAttributes, events: readonly BuildEvent[]): BuildFacts {
  const row = listRow(build);
  const lastData = lastDataOf(events);
  const named = new Map<string, string[]>();
  const rawValues = Array.isArray(build.attributes['value']) ? (build.attributes['value'] as { name: unknown; value: unknown }[]) : [];
  for (const v of rawValues) {
    if (typeof v?.name !== 'string' || typeof v.value !== 'string') continue;
    const list = named.get(v.name) ?? [];
    list.push(v.value);
    named.set(v.name, list);
  }
  const take = (name: string): string | null => {
    const list = named.get(name);
    named.delete(name);
    return list === undefined ? null : list[list.length - 1]!;
  };
  const ci = { provider: take(CONTRACT_NAMES.ciProvider), build: take(CONTRACT_NAMES.ciBuild) };
  const tags = row.tags;
  const dirtyTag = tags.some((t) => t.toLowerCase() === CONTRACT_NAMES.dirtyTag.toLowerCase());
  const status = take(CONTRACT_NAMES.gitStatus);
  const git = {
    repository: take(CONTRACT_NAMES.gitRepository),
    commit: take(CONTRACT_NAMES.gitCommitId),
    branch: take(CONTRACT_NAMES.gitBranch),
    // The agents send the status as a value, older ones only the Dirty tag.
    status: status ?? (dirtyTag ? 'dirty' : null),
  };
  const values: Record<string, readonly string[]> = {};
  for (const name of [...named.keys()].sort()) values[name] = [...named.get(name)!].sort();
  const cache = flatten(lastData('BuildCache'));
  const configurationCache = str(lastData('ConfigurationCache')?.['outcome']);
  if (configurationCache !== null) cache['configurationCache'] = configurationCache;
  const finished = lastData('BuildFinished');
  const failures = Array.isArray(finished?.['failures'])
    ? (finished['failures'] as unknown[]).flatMap((f) => {
        if (typeof f !== 'object' || f === null) return [];
        const r = f as Record<string, unknown>;
        return [{ classification: str(r['classification']) ?? 'unknown', message: str(r['message']) ?? '' }];
      })
    : [];
  return {
    id: build.id,
    project: row.project,
    tool: row.tool,
    toolVersion: row.toolVersion,
    agentVersion: build.agentVersion,
    outcome: row.outcome,
    start: row.start,
    duration: row.duration,
    user: row.user,
    host: row.host,
    requested: row.requested,
    excluded: strs(lastData('BuildRequestedTasks')?.['excluded']),
    environment: flatten(lastData('Environment')),
    options: flatten(lastData('BuildOptions')),
    cache,
    serverSettings: flatten(lastData('ServerSettings')),
    tags,
    values,
    ci,
    git,
    tasks: taskFactsOf(events),
    taskInputs: taskInputFactsOf(events),
    tests: testFactsOf(events),
    failures,
    dependencies: resolvedConfigurationsOf(events),
  };
}

/**
 * Reads one build for a comparison, as the caller may see it: a build she may not see is
 * answered exactly as one that does not exist (404); one still being stored 503, one deleted
 * by retention its own 404, as GET /api/builds/{id} answers.
 */
export async function readBuildFacts(store: BuildStore, id: string, visibility: Visibility, retryAfterSeconds = 5): Promise<BuildFacts> {
  const build = await store.getBuild(id, visibility, { withAttributes: true });
  if (build === undefined) {
    if ((await store.buildState(id, visibility)) === 'incomplete') throw new BuildNotReadyError(id, retryAfterSeconds);
    const deleted = await store.deletedBuild(id, visibility);
    if (deleted !== undefined) throw new BuildDeletedError(id, deleted.deletedAt);
    throw new NotFoundError(`No available build ${JSON.stringify(id)} is visible to you`);
  }
  return factsOf(build, await store.readEvents(id));
}
