// Demo builds with many tests each, for the benchmarks of the test dimension: the demo's NDJSON
// build with `count` tests inserted before its BuildFinished, from a population of 50 suites of 8
// names (the same in every project, so each project has its own history of each test). Whether an
// attempt fails is the caller's rule; a failed attempt is retried once when `retry` says so.

interface DemoBuild {
  events: { timestamp: number; type: { eventType: string }; data: Record<string, unknown> }[];
}

/** The test's index in the population (0..count-1), the build's index and its finish time. */
export interface Attempt {
  readonly test: number;
  readonly build: number;
  readonly attempt: number;
  readonly at: number;
}

export interface TestRule {
  /** A failure message when the attempt fails, otherwise undefined. */
  fails(a: Attempt): string | undefined;
  /** Whether a failed first attempt is retried. */
  retry(a: Attempt): boolean;
}

/** A deterministic number in [0, 1000) for a build, test and attempt. */
export function draw(build: number, test: number, attempt = 1): number {
  return (Math.imul(build * 7919 + test * 31 + attempt, 2654435761) >>> 0) % 1000;
}

/** The suite and name of test `i` of the population. */
export function testName(i: number): { suite: string; name: string } {
  return { suite: `acme.module${i % 50}.Feature${Math.floor(i / 50)}Test`, name: `case${i % 8}` };
}

export function withTests(text: string, build: number, count: number, rule: TestRule): string {
  const parsed = JSON.parse(text) as DemoBuild;
  const fin = parsed.events.findIndex((e) => e.type.eventType === 'BuildFinished');
  const at = parsed.events[fin]!.timestamp;
  const tests: DemoBuild['events'] = [];
  let id = 0;
  const push = (eventType: string, data: Record<string, unknown>, ts: number) => tests.push({ timestamp: ts, type: { majorVersion: 1, minorVersion: 0, eventType } as never, data });
  for (let i = 0; i < count; i++) {
    const { suite, name } = testName(i);
    const first: Attempt = { test: i, build, attempt: 1, at };
    const message = rule.fails(first);
    const h = draw(build, i);
    id++;
    push('TestStarted', { id, suite, name, task: ':test' }, at - 1000 + i);
    push('TestFinished', message !== undefined ? { id, outcome: 'failed', attempt: 1, failure: { type: 'AssertionError', message } } : { id, outcome: 'passed', attempt: 1 }, at - 1000 + i + (h % 50));
    if (message !== undefined && rule.retry(first)) {
      const second: Attempt = { ...first, attempt: 2 };
      const again = rule.fails(second);
      id++;
      push('TestStarted', { id, suite, name, task: ':test' }, at - 500 + i);
      push('TestFinished', again !== undefined ? { id, outcome: 'failed', attempt: 2, failure: { type: 'AssertionError', message: again } } : { id, outcome: 'passed', attempt: 2 }, at - 490 + i);
    }
  }
  parsed.events.splice(fin, 0, ...tests);
  return JSON.stringify(parsed);
}
