import { event, ingestLine, type BuildEvent } from '../support/lines.js';
// A failed Gradle build as the capture agents send one with tests, causes and console output: the
// build page must say which test or task failed and why at first sight (test/web/failed-build-e2e.ts).
// 1,204 tests (two failed, one flaky: failed, then passed on its retry; three skipped), a compile
// error with its diagnostic in another module (the build ran with --continue), and 1,500 console
// lines with ANSI colours, whose last chunk the agent marked cut.

export const FAILED_BUILD = 'fail000000001';
export const FAILED_TEST = { suite: 'acme.PriceTest', name: 'roundsHalfCents', message: 'expected: <10.05> but was: <10.04>' };
export const DIAGNOSTIC = { file: 'legacy/src/main/java/acme/legacy/Invoice.java', line: 57, column: 21, message: 'cannot find symbol: method roundHalfEven(java.math.BigDecimal)' };
export const CONSOLE_LINES = 1500;
/** 0-based line of the console's first error. */
export const FIRST_ERROR_LINE = 1203;
export const TEST_COUNT = 1204;

const ESC = '\u001b';

export function failedBuildLine(id: string, now: number): string {
  const start = now - 5_400_000;
  const events: BuildEvent[] = [];
  let t = start;
  const ev = (eventType: string, data: Record<string, unknown>, gap = 1) => {
    t += gap;
    events.push(event(t, eventType, data));
  };
  ev('BuildStarted', {}, 0);
  ev('BuildAgent', { username: 'ci', publicHostname: 'build-03.ci.example.com', localHostname: 'b3', localIpAddresses: ['10.0.0.3'] });
  ev('ProjectStructure', { rootProjectName: 'checkout-service' });
  ev('BuildRequestedTasks', { requested: ['build'], excluded: [] });
  ev('UserTag', { tag: 'CI' });
  ev('TaskStarted', { id: 1, path: ':legacy:compileJava' });
  ev('TaskFinished', { id: 1, path: ':legacy:compileJava', outcome: 'failed', cacheable: true }, 2300);
  ev('TaskStarted', { id: 2, path: ':app:compileJava' });
  ev('TaskFinished', { id: 2, path: ':app:compileJava', outcome: 'success', cacheable: true }, 4100);
  ev('TaskStarted', { id: 3, path: ':app:test' });
  const stack = (frames: string[]) => frames.map((f) => `\tat ${f}`).join('\n');
  let testId = 0;
  const test = (suite: string, name: string, outcome: string, took: number, extra: Record<string, unknown> = {}, output?: string) => {
    const id = ++testId;
    ev('TestStarted', { id, suite, name, task: ':app:test' }, 1);
    if (output !== undefined) ev('TestOutput', { id, stream: 'stdout', text: output });
    ev('TestFinished', { id, outcome, ...extra }, took);
  };
  for (let i = 0; i < 1198; i++) test(`acme.catalog.Catalog${Math.floor(i / 40)}Test`, `case${i % 40}`, 'passed', 1 + ((i * 37) % 400));
  test(FAILED_TEST.suite, FAILED_TEST.name, 'failed', 95, {
    attempt: 1,
    failure: {
      type: 'org.opentest4j.AssertionFailedError',
      message: FAILED_TEST.message,
      stackTrace: `org.opentest4j.AssertionFailedError: ${FAILED_TEST.message}\n${stack(['org.junit.jupiter.api.AssertionUtils.fail(AssertionUtils.java:55)', 'org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:1141)', 'acme.PriceTest.roundsHalfCents(PriceTest.java:42)'])}`,
    },
  }, 'rounding 10.045 with HALF_DOWN\n');
  test('acme.inventory.StockServiceTest', 'reservesStock', 'failed', 1830, {
    attempt: 1,
    failure: { type: 'java.lang.NullPointerException', message: 'Cannot invoke "acme.inventory.Warehouse.find(String)" because "this.warehouse" is null', stackTrace: `java.lang.NullPointerException\n${stack(['acme.inventory.StockService.reserve(StockService.java:88)'])}` },
  });
  // Failed, then passed when Gradle's test retry ran it again: flaky.
  test('acme.auth.LoginIT', 'locksAfterFiveFailures', 'failed', 5000, { attempt: 1, failure: { type: 'java.util.concurrent.TimeoutException', message: 'Login did not complete within 5000 ms' } });
  test('acme.auth.LoginIT', 'locksAfterFiveFailures', 'passed', 3100, { attempt: 2 });
  for (let i = 0; i < 3; i++) test('acme.catalog.SearchTest', `pending${i}`, 'skipped', 0, { skipReason: 'disabled until the search index migration' });
  ev('TaskFinished', { id: 3, path: ':app:test', outcome: 'failed', cacheable: false }, 20);
  // The console, in chunks as an agent sends it; the last one cut by the agent.
  const lines: string[] = [];
  for (let i = 0; i < CONSOLE_LINES; i++) {
    if (i === 0) lines.push(`${ESC}[1m> Task :legacy:compileJava${ESC}[0m`);
    else if (i === FIRST_ERROR_LINE) lines.push(`${DIAGNOSTIC.file}:${DIAGNOSTIC.line}: ${ESC}[31merror:${ESC}[0m ${DIAGNOSTIC.message}`);
    else if (i === 1400) lines.push(`${ESC}[31;1mBUILD FAILED${ESC}[0m in 1m 30s`);
    else lines.push(`${ESC}[32m  PASSED${ESC}[0m acme.catalog.Catalog${Math.floor(i / 40)}Test > case${i % 40} (${(i * 37) % 400} ms)`);
  }
  for (let i = 0; i < lines.length; i += 300) {
    const last = i + 300 >= lines.length;
    ev('ConsoleOutput', { stream: 'stdout', text: lines.slice(i, i + 300).join('\n') + '\n', ...(last ? { truncated: true } : {}) });
  }
  ev('BuildFinished', {
    outcome: 'failed',
    failures: [
      {
        classification: 'non-verification',
        message: "Task :legacy:compileJava failed: Compilation failed; see the compiler error output for details.",
        cause: {
          type: 'org.gradle.api.internal.tasks.compile.CompilationFailedException',
          message: 'Compilation failed; see the compiler error output for details.',
          diagnostics: [{ ...DIAGNOSTIC, severity: 'error' }],
          outputTail: `${DIAGNOSTIC.file}:${DIAGNOSTIC.line}: error: ${DIAGNOSTIC.message}\n        return amount.roundHalfEven(rate);\n                     ^\n1 error\n`,
        },
      },
      {
        classification: 'verification',
        message: 'Task :app:test failed: There were failing tests. See the report at: file:///home/ci/checkout-service/app/build/reports/tests/test/index.html',
        cause: { type: 'org.gradle.api.tasks.VerificationException', message: 'There were failing tests.' },
      },
    ],
  }, 50);
  return ingestLine(id, events);
}
