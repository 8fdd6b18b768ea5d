// The pure parts of `buildscope run`'s test reports: the `junit` setting's globs, and JUnit XML
// reports made into test events (only the ones written while the command ran).

import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsBuild, reportsOfRecordedTests, type RecordEntry } from '../../src/agents/npm/js-build.js';
import { globMatches, reportFiles, testEventsFromReports } from '../../src/agents/npm/test-reports.js';

const dir = mkdtempSync(join(tmpdir(), 'bs-junit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the junit setting and its reports', () => {
  it('matches globs segment by segment, ** for any depth', () => {
    const m = (p: string, path: string) => globMatches(p.split('/'), path.split('/'));
    expect(m('**/*.xml', 'a.xml')).toBe(true);
    expect(m('**/*.xml', 'a/b/c.xml')).toBe(true);
    expect(m('reports/*.xml', 'reports/a.xml')).toBe(true);
    expect(m('reports/*.xml', 'reports/x/a.xml')).toBe(false);
    expect(m('TEST-?.xml', 'TEST-a.xml')).toBe(true);
    expect(m('*.xml', 'a.xml.bak')).toBe(false);
    expect(m('a.b', 'axb')).toBe(false);
  });

  it('finds the named files and the globs\' matches, leaving node_modules out', () => {
    for (const f of ['reports/a.xml', 'reports/deep/b.xml', 'reports/c.txt', 'node_modules/x/reports/d.xml', 'e.xml']) {
      mkdirSync(join(dir, f, '..'), { recursive: true });
      writeFileSync(join(dir, f), '<testsuite/>');
    }
    expect(reportFiles('reports/**/*.xml, e.xml', dir)).toEqual([join(dir, 'e.xml'), join(dir, 'reports/a.xml'), join(dir, 'reports/deep/b.xml')]);
    expect(reportFiles('**/*.xml', join(dir, 'reports'))).toEqual([join(dir, 'reports/a.xml'), join(dir, 'reports/deep/b.xml')]);
  });

  it('makes each test case of the reports written since the command started into TestStarted, TestOutput and TestFinished', () => {
    const fresh = join(dir, 'fresh.xml');
    writeFileSync(
      fresh,
      `<testsuite name="s"><testcase classname="calc" name="adds" time="0.5"><system-out>hi</system-out></testcase>
<testcase classname="calc" name="divides" time="0.25"><error message="division by zero" type="ZeroDivisionError">Traceback: ${'x'.repeat(20_000)}</error></testcase>
<testcase classname="calc" name="later"><skipped message="not yet"/></testcase></testsuite>`,
    );
    const old = join(dir, 'old.xml');
    writeFileSync(old, '<testsuite name="old"><testcase classname="old" name="stale"/></testsuite>');
    utimesSync(old, new Date(2020, 0, 1), new Date(2020, 0, 1));
    const broken = join(dir, 'broken.xml');
    writeFileSync(broken, 'not xml <<<');
    const since = Date.now() - 10_000;
    const events = testEventsFromReports([fresh, old, broken, join(dir, 'missing.xml')], since, { task: 'npm test', testOutput: true, now: since + 5000 });
    const summary = events.map((e) => [e.type.eventType, e.timestamp - since, e.data]);
    expect(summary.slice(0, 4)).toEqual([
      ['TestStarted', 0, { id: 1, suite: 'calc', name: 'adds', task: 'npm test' }],
      ['TestOutput', 500, { id: 1, stream: 'stdout', text: 'hi' }],
      ['TestFinished', 500, { id: 1, outcome: 'passed' }],
      ['TestStarted', 500, { id: 2, suite: 'calc', name: 'divides', task: 'npm test' }],
    ]);
    const failed = events[4]!;
    expect(failed.timestamp - since).toBe(750);
    expect(failed.data).toMatchObject({ id: 2, outcome: 'failed', failure: { type: 'ZeroDivisionError', message: 'division by zero' } });
    // Bounded: the stack trace keeps its start.
    const trace = (failed.data['failure'] as { stackTrace: string }).stackTrace;
    expect(trace.startsWith('Traceback: xxx')).toBe(true);
    expect(trace.length).toBeLessThan(16_500);
    expect(summary.slice(5)).toEqual([
      ['TestStarted', 750, { id: 3, suite: 'calc', name: 'later', task: 'npm test' }],
      ['TestFinished', 750, { id: 3, outcome: 'skipped', skipReason: 'not yet' }],
    ]);
    // Output left out when test output capture is off.
    expect(testEventsFromReports([fresh], since, { task: 't', testOutput: false }).some((e) => e.type.eventType === 'TestOutput')).toBe(false);
  });

  it('numbers the JUnit reports\' tests after node\'s, keeps node\'s within the command\'s time, and leaves out the reports node --test wrote of recorded tests', () => {
    const record: RecordEntry[] = [
      { kind: 'node-test-reports', files: ['/w/reports/node.xml'] },
      { kind: 'test', suite: 'a.test.js > outer', name: 'inner', outcome: 'failed', start: 900, end: 1200, failure: { type: 'AssertionError', message: '1 !== 2', stackTrace: 'AssertionError: 1 !== 2\n    at a.test.js:3:5' } },
      { kind: 'test', suite: 'a.test.js', name: 'later', outcome: 'skipped', start: 1200, end: 1200, skipReason: 'todo' },
    ];
    const report = testEventsFromReports([], 1000, { task: 't', testOutput: true });
    report.push({ timestamp: 1500, type: { majorVersion: 1, minorVersion: 0, eventType: 'TestStarted' }, data: { id: 1, suite: 'j', name: 'from junit', task: 't' } });
    const command = { argv: ['npm', 'test'], cwd: dir, startedAt: 1000, finishedAt: 2000, exitCode: 1, env: {} };
    const tests = jsBuild('b', command, record, { tests: report }).events.filter((e) => e.type.eventType.startsWith('Test'));
    expect(tests.map((e) => [e.type.eventType, e.timestamp, e.data])).toEqual([
      ['TestStarted', 1000, { id: 1, suite: 'a.test.js > outer', name: 'inner', task: 'npm test' }],
      ['TestFinished', 1200, { id: 1, outcome: 'failed', failure: { type: 'AssertionError', message: '1 !== 2', stackTrace: 'AssertionError: 1 !== 2\n    at a.test.js:3:5' } }],
      ['TestStarted', 1200, { id: 2, suite: 'a.test.js', name: 'later', task: 'npm test' }],
      ['TestFinished', 1200, { id: 2, outcome: 'skipped', skipReason: 'todo' }],
      ['TestStarted', 1500, { id: 3, suite: 'j', name: 'from junit', task: 't' }],
    ]);
    expect([...reportsOfRecordedTests(record)]).toEqual(['/w/reports/node.xml']);
    // Without node's tests in the record (the runner was not seen), its report is read.
    expect([...reportsOfRecordedTests(record.slice(0, 1))]).toEqual([]);
  });
});
