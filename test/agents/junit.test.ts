// JUnit XML reports as the tools write them (Surefire, pytest --junitxml, Bazel's generated
// test.xml, jest-junit's nested suites), and Bazel's tests from the Build Event Protocol: target
// attempts over the live stream, and the report's cases and the log's tail where the files are read.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { bepToBuild, type TimedBepEvent } from '../../src/bes/bep-build.js';
import { readLocalFile } from '../../src/agents/bazel/ingest-bep.js';
import { JUNIT_LIMITS, parseJUnitXml } from '../../src/agents/junit.js';

const SUREFIRE = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="acme.PriceTest" tests="3" failures="1" errors="0" skipped="1" time="0.052">
  <properties><property name="java.version" value="17"/></properties>
  <testcase name="roundsHalfCents" classname="acme.PriceTest" time="0.031">
    <failure message="expected: &lt;1.01&gt; but was: &lt;1.00&gt;" type="org.opentest4j.AssertionFailedError">org.opentest4j.AssertionFailedError: expected: &lt;1.01&gt; but was: &lt;1.00&gt;
	at acme.PriceTest.roundsHalfCents(PriceTest.java:14)</failure>
    <system-out>rounding 1.005</system-out>
  </testcase>
  <testcase name="addsTax" classname="acme.PriceTest" time="0.002"/>
  <testcase name="slowPath" classname="acme.PriceTest" time="0"><skipped message="needs a database"/></testcase>
</testsuite>`;

describe('parseJUnitXml', () => {
  it('reads cases with outcome, duration, failure type, message and stack trace, skip reasons and output', () => {
    expect(parseJUnitXml(SUREFIRE)).toEqual([
      {
        suite: 'acme.PriceTest',
        name: 'roundsHalfCents',
        outcome: 'failed',
        seconds: 0.031,
        failure: {
          type: 'org.opentest4j.AssertionFailedError',
          message: 'expected: <1.01> but was: <1.00>',
          stackTrace: 'org.opentest4j.AssertionFailedError: expected: <1.01> but was: <1.00>\n\tat acme.PriceTest.roundsHalfCents(PriceTest.java:14)',
        },
        output: 'rounding 1.005',
      },
      { suite: 'acme.PriceTest', name: 'addsTax', outcome: 'passed', seconds: 0.002 },
      { suite: 'acme.PriceTest', name: 'slowPath', outcome: 'skipped', seconds: 0, skipReason: 'needs a database' },
    ]);
  });

  it('reads nested suites (jest-junit, pytest), errors as failures, and a case without classname by its suite', () => {
    const xml = `<testsuites><testsuite name="outer"><testsuite name="inner"><testcase name="a"><error message="boom"/></testcase></testsuite>
      <testcase classname="tests.test_x" name="test_y[1-2]" time="1.5"/>
      <testcase classname="tests.test_x" name="test_z"><failure>assert 1 == 2</failure></testcase>
      <testcase classname="tests.test_x" name="test_w"><skipped/></testcase></testsuite></testsuites>`;
    expect(parseJUnitXml(xml)).toEqual([
      { suite: 'inner', name: 'a', outcome: 'failed', seconds: 0, failure: { message: 'boom' } },
      { suite: 'tests.test_x', name: 'test_y[1-2]', outcome: 'passed', seconds: 1.5 },
      { suite: 'tests.test_x', name: 'test_z', outcome: 'failed', seconds: 0, failure: { message: 'assert 1 == 2', stackTrace: 'assert 1 == 2' } },
      { suite: 'tests.test_x', name: 'test_w', outcome: 'skipped', seconds: 0 },
    ]);
  });

  it('bounds what a report yields', () => {
    const many = `<testsuite name="s">${'<testcase name="t" time="0"/>'.repeat(JUNIT_LIMITS.cases + 5)}</testsuite>`;
    expect(parseJUnitXml(many)).toHaveLength(JUNIT_LIMITS.cases);
    const long = parseJUnitXml(`<testsuite name="s"><testcase name="t"><failure message="${'m'.repeat(10_000)}">${'x'.repeat(100_000)}</failure></testcase></testsuite>`)[0]!;
    expect(long.failure!.message.length).toBeLessThan(JUNIT_LIMITS.message + 100);
    expect(long.failure!.stackTrace!.length).toBeLessThan(JUNIT_LIMITS.stackTrace + 100);
  });
});

describe("Bazel's tests", () => {
  const dir = mkdtempSync(join(tmpdir(), 'bs-junit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: string): string => {
    writeFileSync(join(dir, name), content);
    return pathToFileURL(join(dir, name)).href;
  };
  const started: TimedBepEvent = { event: { id: { started: {} }, started: { uuid: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', startTimeMillis: '1000', command: 'test' } } };
  const finished: TimedBepEvent = { event: { id: { buildFinished: {} }, finished: { finishTimeMillis: '9000', exitCode: { name: 'TESTS_FAILED', code: 3 } } } };
  const result = (label: string, attempt: number, status: string, start: number, outputs: Record<string, string> = {}, extra: Record<string, unknown> = {}): TimedBepEvent => ({
    event: {
      id: { testResult: { label, run: 1, shard: 1, attempt } },
      testResult: { status, testAttemptStartMillisEpoch: String(start), testAttemptDurationMillis: '200', testActionOutput: Object.entries(outputs).map(([name, uri]) => ({ name, uri })), ...extra },
    },
  });
  const tests = (events: TimedBepEvent[], read = true) =>
    bepToBuild([started, ...events, finished], 'abcdefghijklm', read ? { readUri: readLocalFile } : {}).events.filter((e) => e.type.eventType.startsWith('Test'));

  it('over the live stream, each attempt of a target is a test: failed, then passed on a retry', () => {
    const got = tests([result('//app:price_test', 1, 'FAILED', 2000), result('//app:price_test', 2, 'PASSED', 2500)], false);
    expect(got.map((e) => [e.type.eventType, e.timestamp, e.data])).toEqual([
      ['TestStarted', 2000, { id: '//app:price_test#1.1.1', suite: '//app', name: 'price_test', task: '//app:price_test' }],
      ['TestFinished', 2200, { id: '//app:price_test#1.1.1', outcome: 'failed', attempt: 1, failure: { message: '//app:price_test FAILED' } }],
      ['TestStarted', 2500, { id: '//app:price_test#1.1.2', suite: '//app', name: 'price_test', task: '//app:price_test' }],
      ['TestFinished', 2700, { id: '//app:price_test#1.1.2', outcome: 'passed', attempt: 2 }],
    ]);
  });

  it("where the files are readable, the report's cases with their failures, and a failed attempt's log tail", () => {
    const log = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
    const got = tests([result('//app:price_test', 1, 'FAILED', 2000, { 'test.xml': file('test.xml', SUREFIRE), 'test.log': file('test.log', log) })]);
    const finishedTests = got.filter((e) => e.type.eventType === 'TestFinished').map((e) => [e.data['outcome'], (e.data['failure'] as { message?: string } | undefined)?.message]);
    expect(finishedTests).toEqual([
      ['failed', 'expected: <1.01> but was: <1.00>'],
      ['passed', undefined],
      ['skipped', undefined],
    ]);
    const names = got.filter((e) => e.type.eventType === 'TestStarted').map((e) => `${e.data['suite']}.${e.data['name']}`);
    expect(names).toEqual(['acme.PriceTest.roundsHalfCents', 'acme.PriceTest.addsTax', 'acme.PriceTest.slowPath']);
    // The case's own output where the report has it.
    expect(got.find((e) => e.type.eventType === 'TestOutput')!.data['text']).toBe('rounding 1.005');
    // Without a report, the log's last lines go with the failed target.
    const noReport = tests([result('//app:other_test', 1, 'TIMEOUT', 2000, { 'test.log': file('other.log', log) })]);
    const text = noReport.find((e) => e.type.eventType === 'TestOutput')!.data['text'] as string;
    expect(text.split('\n').at(-1)).toBe('line 99');
    expect(text).not.toContain('line 39\n');
    expect(noReport.find((e) => e.type.eventType === 'TestFinished')!.data['failure']).toEqual({ message: '//app:other_test TIMEOUT (the test ran out of time)' });
  });

  it('a cached result is a test that took no time at the build end; a report that is not XML, or not there, leaves the target as the test', () => {
    const cached = tests([result('//app:cached_test', 1, 'PASSED', 10, {}, { cachedLocally: true })], false);
    expect(cached.map((e) => e.timestamp)).toEqual([9000, 9000]);
    expect(cached[1]!.data).toMatchObject({ outcome: 'passed', cached: true });
    const broken = tests([result('//app:x_test', 1, 'PASSED', 2000, { 'test.xml': file('bad.xml', 'not <xml'), 'test.log': 'file:///nowhere/test.log' })]);
    expect(broken.map((e) => e.data['name'])).toEqual(['x_test', undefined]);
    expect(readLocalFile('bytestream://cache/blobs/abc/1')).toBeUndefined();
  });
});
