// The test executions of a build as the test dimension stores them (store migration 0020,
// test-migration.ts): one row per finished test attempt, its test named by identity (the tool and
// project of the build, the suite, name and parameters of the test), and the failure group of each
// failed attempt and of each build failure (failure-groups.ts). Pure: it runs where the build's
// attributes are derived (prepare.ts), so in the worker thread of a long input.

import type { BuildEvent } from '../types.js';
import { identityOf, testIdOf, testOutcome, type TestOutcome } from './test-events.js';
import { failureGroupKey } from './failure-groups.js';

/**
 * The code test_runs.outcome stores for each outcome. Frozen: stored rows carry these numbers, so a
 * code is never changed or reused.
 */
export const TEST_OUTCOME_CODES: Readonly<Record<TestOutcome, number>> = Object.freeze({ passed: 0, failed: 1, skipped: 2 });
export const TEST_OUTCOME_OF_CODE: readonly TestOutcome[] = ['passed', 'failed', 'skipped'];

/** The longest sample message a failure group keeps (the first one seen). */
const MAX_SAMPLE_CHARS = 500;

/** A failure's group: its key and, to show, one message of it. */
export type FailureTuple = readonly [key: string, sample: string];

/**
 * One test attempt: [suite, name, parameters ('' for none), outcome code, attempt (1-based),
 * start offset ms (after the build's first event), duration ms, its failure's group or null].
 */
export type TestRunTuple = readonly [suite: string, name: string, parameters: string, outcome: number, attempt: number, start: number, duration: number, failure: FailureTuple | null];

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function failureOf(f: unknown): FailureTuple | null {
  if (typeof f !== 'object' || f === null) return null;
  const r = f as Record<string, unknown>;
  const key = failureGroupKey(r['type'], r['message']);
  if (key === undefined) return null;
  const message = str(r['message']) ?? str(r['type']) ?? '';
  return [key, message.slice(0, MAX_SAMPLE_CHARS)];
}

/**
 * Pairs each TestFinished with its TestStarted by `id` (identityOf, as the search fields and the
 * build page do). A finished test without a start starts when it finishes; one whose outcome is none
 * of the three, or whose identity is unknown, has no row (it feeds no field either).
 */
export function testRunsOf(events: readonly BuildEvent[]): TestRunTuple[] {
  const origin = events.length > 0 ? events[0]!.timestamp : 0;
  const started = new Map<string, Readonly<Record<string, unknown>>>();
  const startedAt = new Map<string, number>();
  const out: TestRunTuple[] = [];
  for (const e of events) {
    const t = e.type.eventType;
    if (t === 'TestStarted') {
      const id = testIdOf(e.data);
      if (id !== undefined) {
        started.set(id, e.data);
        startedAt.set(id, e.timestamp);
      }
      continue;
    }
    if (t !== 'TestFinished') continue;
    const outcome = testOutcome(e.data['outcome']);
    const who = identityOf(e.data, started);
    if (outcome === undefined || who === undefined) continue;
    const id = testIdOf(e.data);
    const s = id === undefined ? undefined : started.get(id);
    const params = s?.['parameters'] ?? e.data['parameters'];
    const parameters = typeof params === 'string' ? params : params === undefined || params === null ? '' : JSON.stringify(params);
    const rawAttempt = e.data['attempt'];
    const attempt = typeof rawAttempt === 'number' && Number.isInteger(rawAttempt) && rawAttempt >= 1 ? Math.min(rawAttempt, 32_767) : 1;
    const begin = (id === undefined ? undefined : startedAt.get(id)) ?? e.timestamp;
    out.push([who.suite, who.name, parameters, TEST_OUTCOME_CODES[outcome], attempt, begin - origin, Math.max(0, e.timestamp - begin), outcome === 'failed' ? failureOf(e.data['failure']) : null]);
  }
  return out;
}

/** The failure groups of the build's own failures (BuildFinished `failures`: each one's cause, else its message). */
export function buildFailuresOf(events: readonly BuildEvent[]): FailureTuple[] {
  let finished: BuildEvent | undefined;
  for (const e of events) if (e.type.eventType === 'BuildFinished') finished = e;
  const failures = finished?.data['failures'];
  if (!Array.isArray(failures)) return [];
  const out: FailureTuple[] = [];
  for (const f of failures) {
    if (typeof f !== 'object' || f === null) continue;
    const r = f as Record<string, unknown>;
    const cause = r['cause'];
    const c = typeof cause === 'object' && cause !== null ? failureOf(cause) : null;
    const g = c ?? failureOf({ message: r['message'] });
    if (g !== null) out.push(g);
  }
  return out;
}

/** The identity key of a test: the tool and project of its build, its suite, name and parameters. */
export const testKeyOf = (tool: string, project: string | null, suite: string, name: string, parameters: string): string => JSON.stringify([tool, project, suite, name, parameters]);
