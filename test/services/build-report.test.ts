// The build page's report of a build's tests and console (src/services/build-report.ts): attempts
// grouped into one test (flaky when a failure was followed by a pass), parametrized tests apart,
// the order (failed, flaky, then slowest), the filters and pages; console lines across chunks,
// the first error line, search without colour codes.

import { describe, expect, it } from 'vitest';
import { consolePage, isErrorLine, reportOf, testsPage } from '../../src/services/build-report.js';
import type { BuildEvent } from '../../src/store/types.js';

let t = 1000;
const ev = (eventType: string, data: Record<string, unknown>, gap = 10): BuildEvent => ({ timestamp: (t += gap), type: { majorVersion: 1, minorVersion: 0, eventType }, data });

describe('the report of a build', () => {
  t = 1000;
  const events = [
    ev('TestStarted', { id: 'a1', suite: 's.A', name: 'retried', task: ':test' }),
    ev('TestOutput', { id: 'a1', stream: 'stdout', text: 'first try\n' }),
    ev('TestFinished', { id: 'a1', outcome: 'failed', attempt: 1, failure: { type: 'E', message: 'flake', stackTrace: 'at x' } }),
    ev('TestStarted', { id: 'a2', suite: 's.A', name: 'retried' }),
    ev('TestFinished', { id: 'a2', outcome: 'passed', attempt: 2 }, 50),
    ev('TestStarted', { id: 'b', suite: 's.B', name: 'param', parameters: '1' }),
    ev('TestFinished', { id: 'b', outcome: 'passed' }, 500),
    ev('TestStarted', { id: 'c', suite: 's.B', name: 'param', parameters: '2' }),
    ev('TestFinished', { id: 'c', outcome: 'failed', failure: { message: 'no' } }, 5),
    ev('TestStarted', { id: 'd', suite: 's.C', name: 'skipped' }),
    ev('TestFinished', { id: 'd', outcome: 'skipped', skipReason: 'later' }),
    ev('TestFinished', { id: 'e', suite: 's.D', name: 'noStart', outcome: 'passed' }),
    ev('TestStarted', { id: 'f', suite: 's.E', name: 'odd' }),
    ev('TestFinished', { id: 'f', outcome: 'exploded' }),
    ev('ConsoleOutput', { stream: 'stdout', text: '\u001b[1mCompiling\u001b[0m 3 files, 0 errors\nhalf a ' }),
    ev('ConsoleOutput', { stream: 'stderr', text: 'line\r\n\u001b[31mERROR\u001b[0m: it broke\nmore\n', truncated: true }),
  ];
  const r = reportOf(events, 1000);

  it('groups attempts, tells flaky tests, keeps parameters apart and counts by outcome', () => {
    expect(r.counts).toEqual({ total: 6, passed: 3, failed: 1, skipped: 1, flaky: 1 });
    expect(r.tests.map((x) => [x.key, x.parameters, x.outcome, x.flaky, x.attempts])).toEqual([
      ['s.B.param', '2', 'failed', false, 1],
      ['s.A.retried', null, 'passed', true, 2],
      ['s.B.param', '1', 'passed', false, 1],
      ['s.C.skipped', null, 'skipped', false, 1],
      // Without a TestStarted, a test starts when it ends: 0 ms, the shortest.
      ['s.E.odd', null, null, false, 1],
      ['s.D.noStart', null, 'passed', false, 1],
    ]);
    const flaky = r.tests[1]!;
    expect(flaky).toMatchObject({ task: ':test', failure: { type: 'E', message: 'flake', stackTrace: 'at x' }, output: 'first try\n', start: 10, duration: 50 });
    expect(r.tests[3]!.skipReason).toBe('later');
  });

  it('filters by name and outcome and pages', () => {
    expect(testsPage(r, { name: 'PARAM', offset: 0, limit: 10 }).tests.map((x) => x.parameters)).toEqual(['2', '1']);
    expect(testsPage(r, { filter: 'flaky', offset: 0, limit: 10 }).total).toBe(1);
    expect(testsPage(r, { filter: 'passed', offset: 1, limit: 1 })).toMatchObject({ total: 3, offset: 1, tests: [{ key: 's.B.param' }] });
  });

  it('reads the console as lines across chunks, finds the first error and searches without colours', () => {
    expect(r.consoleLines).toEqual(['\u001b[1mCompiling\u001b[0m 3 files, 0 errors', 'half a line', '\u001b[31mERROR\u001b[0m: it broke', 'more']);
    expect(r.console).toEqual({ lines: 4, truncated: true, firstError: { line: 2, text: 'ERROR: it broke' } });
    expect(consolePage(r, { offset: 1, limit: 2, search: 'error: IT' })).toEqual({
      lines: ['half a line', '\u001b[31mERROR\u001b[0m: it broke'],
      offset: 1,
      total: 4,
      truncated: true,
      firstError: { line: 2, text: 'ERROR: it broke' },
      matches: { lines: [2], count: 1 },
    });
  });

  it('takes error words and exception types as errors, not inside other words or as a count of none', () => {
    for (const l of ['error: x', 'BUILD FAILED', 'FAILURE: Build failed', 'npm ERR! fatal: no', 'java.lang.IllegalStateException: x', 'E   AssertionError']) expect(isErrorLine(l), l).toBe(true);
    for (const l of ['0 errors', 'no failures', 'terror', 'mirrored', 'Tests: 12 passed']) expect(isErrorLine(l), l).toBe(false);
    // Section headings announce errors; the lines under them say which (pytest's report).
    for (const l of ['==================================== ERRORS ====================================', '_________________ ERROR collecting test_broken.py _________________', '=== FAILURES ===', '--- Failed tests ---']) expect(isErrorLine(l), l).toBe(false);
    for (const l of ['E   SyntaxError: invalid syntax', 'ERROR collecting test_broken.py']) expect(isErrorLine(l), l).toBe(true);
  });
});
