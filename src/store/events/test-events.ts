// The tests of a build, read from its TestStarted / TestFinished / TestOutput events (the names of
// Gradle's public test listener model; docs/send-your-builds.md, "Tests, console output and
// failure causes"). Two readers: the ingest derives the `failedTest`, `flakyTest` and `hasFailedTest` search
// fields from them (derive.ts), the build page lists them (src/services/build-report.ts). Both
// pair a finished test with its start by `id`, so that a field and the page never disagree.

import type { BuildEvent } from '../types.js';

export const TEST_OUTCOMES = ['passed', 'failed', 'skipped'] as const;
export type TestOutcome = (typeof TEST_OUTCOMES)[number];

/** The event types of tests and console output, which the build page reads. */
export const TEST_EVENT_TYPES = ['TestStarted', 'TestFinished', 'TestOutput'] as const;
export const CONSOLE_EVENT_TYPE = 'ConsoleOutput';

/**
 * The tools say the same things in other words (JUnit's `SUCCESS`/`FAILURE`, pytest's `error`,
 * Surefire's `ignored`); an outcome it cannot read is undefined, and such a test counts as none of
 * the three (it is listed, without an outcome).
 */
export function testOutcome(raw: unknown): TestOutcome | undefined {
  const s = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  switch (s) {
    case 'passed':
    case 'success':
    case 'succeeded':
      return 'passed';
    case 'failed':
    case 'failure':
    case 'error':
      return 'failed';
    case 'skipped':
    case 'ignored':
    case 'disabled':
      return 'skipped';
    default:
      return undefined;
  }
}

/** What a TestStarted says of a test. */
export interface TestIdentity {
  readonly suite: string;
  readonly name: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const idOf = (d: Readonly<Record<string, unknown>>): string | undefined => {
  const id = d['id'];
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
};

/**
 * The identity of the test a TestFinished ends: its TestStarted of the same `id`, else the
 * `suite` and `name` the TestFinished carries itself (a tool that reports a test only once it
 * ended), else none.
 */
export function identityOf(finished: Readonly<Record<string, unknown>>, started: ReadonlyMap<string, Readonly<Record<string, unknown>>>): TestIdentity | undefined {
  const id = idOf(finished);
  const s = id === undefined ? undefined : started.get(id);
  const suite = str(s?.['suite']) ?? str(finished['suite']);
  const name = str(s?.['name']) ?? str(finished['name']);
  return suite !== undefined && name !== undefined ? { suite, name } : undefined;
}

/** `suite.name`: the value of the `failedTest` field (`acme.PriceTest.roundsHalfCents`). */
export const testKey = (t: TestIdentity): string => (t.suite === '' ? t.name : `${t.suite}.${t.name}`);

/**
 * What the search fields take from a build's tests: `suite.name` of every test that failed (any
 * attempt, in the order they finished, each once), of every test that was flaky in the build (its
 * last attempt passed after a failed one: a retry, as the build page says; attempts of a test are
 * those of the same suite, name and parameters), and whether it has finished tests at all (a build
 * whose agent sends no test events has an unknown `hasFailedTest`, not false).
 */
export function failedTestsOf(
  started: readonly BuildEvent[],
  finished: readonly BuildEvent[],
): { readonly failed: readonly string[]; readonly flaky: readonly string[]; readonly anyTests: boolean } {
  const byId = new Map<string, Readonly<Record<string, unknown>>>();
  for (const e of started) {
    const id = idOf(e.data);
    if (id !== undefined) byId.set(id, e.data);
  }
  const failed = new Set<string>();
  // Per test (suite, name, parameters): its key, whether an attempt failed, the last outcome.
  const attempts = new Map<string, { key: string; failed: boolean; last: TestOutcome | undefined }>();
  for (const e of finished) {
    const who = identityOf(e.data, byId);
    if (who === undefined) continue;
    const outcome = testOutcome(e.data['outcome']);
    const key = testKey(who);
    if (outcome === 'failed') failed.add(key);
    const id = idOf(e.data);
    const parameters = str((id === undefined ? undefined : byId.get(id))?.['parameters']) ?? '';
    const k = `${who.suite}\u0000${who.name}\u0000${parameters}`;
    const a = attempts.get(k) ?? { key, failed: false, last: undefined };
    a.failed ||= outcome === 'failed';
    a.last = outcome;
    attempts.set(k, a);
  }
  const flaky = new Set([...attempts.values()].filter((a) => a.failed && a.last === 'passed').map((a) => a.key));
  return { failed: [...failed], flaky: [...flaky], anyTests: finished.length > 0 };
}

export { idOf as testIdOf };
