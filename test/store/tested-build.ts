// A build with tests for the test dimension's property tests: its project, start and tags, tests
// that pass or fail with a message (a failed attempt retried and passed, when asked), and the
// build's own failures; failed when a test failed for good or it has failures of its own.

import { ev, id, line } from './support.js';

export interface TestedBuildSpec {
  readonly project: string;
  readonly start: number;
  readonly tags?: readonly string[];
  readonly tests: readonly { readonly name: string; readonly message: string | undefined; readonly retried: boolean }[];
  readonly own: readonly string[];
}

/** The build's NDJSON line. */
export function testedBuild(spec: TestedBuildSpec): string {
  const events = [ev('BuildStarted', {}, spec.start), ev('ProjectStructure', { rootProjectName: spec.project }), ...(spec.tags ?? []).map((tag) => ev('UserTag', { tag }))];
  let n = 0;
  const attempt = (name: string, attempt: number, message: string | undefined) => {
    n++;
    events.push(ev('TestStarted', { id: n, suite: 'acme.T', name }));
    events.push(ev('TestFinished', { id: n, attempt, outcome: message === undefined ? 'passed' : 'failed', ...(message === undefined ? {} : { failure: { type: 'AssertionError', message } }) }));
  };
  for (const t of spec.tests) {
    attempt(t.name, 1, t.message);
    if (t.message !== undefined && t.retried) attempt(t.name, 2, undefined);
  }
  const failed = spec.own.length > 0 || spec.tests.some((t) => t.message !== undefined && !t.retried);
  events.push(ev('BuildFinished', { outcome: failed ? 'failed' : 'succeeded', failures: spec.own.map((message) => ({ classification: 'non-verification', message })) }));
  return line({ buildId: id(), events });
}
