// The tests, console output and failure causes of the demo builds (demo-data.ts), so that a fresh
// `npm start` shows failed tests with their stack traces, compile errors with file and line, and
// console logs on the build pages. They come from a random stream of their own, seeded per build,
// so the draws of every other demo field stay what they were; and they stay few (at most five
// events a build, on a fraction of the builds), so the demo keeps its ~30 events a build and its
// generation and ingest speed (bench/ingest.ts).

import type { ToolType } from '../query/catalog.js';

interface Suite {
  readonly suite: string;
  readonly tests: readonly string[];
  /** The failure a failing test of this suite shows. */
  readonly failure: { readonly type: string; readonly message: string; readonly frames: readonly string[] };
}

const JVM_SUITES: readonly Suite[] = [
  {
    suite: 'acme.PriceTest',
    tests: ['roundsHalfCents', 'addsTax', 'formatsCurrency'],
    failure: {
      type: 'org.opentest4j.AssertionFailedError',
      message: 'expected: <10.05> but was: <10.04>',
      frames: ['org.junit.jupiter.api.AssertionUtils.fail(AssertionUtils.java:55)', 'org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:1141)', 'acme.PriceTest.roundsHalfCents(PriceTest.java:42)'],
    },
  },
  {
    suite: 'acme.inventory.StockServiceTest',
    tests: ['reservesStock', 'releasesOnTimeout', 'rejectsNegativeQuantity'],
    failure: {
      type: 'java.lang.NullPointerException',
      message: 'Cannot invoke "acme.inventory.Warehouse.find(String)" because "this.warehouse" is null',
      frames: ['acme.inventory.StockService.reserve(StockService.java:88)', 'acme.inventory.StockServiceTest.reservesStock(StockServiceTest.java:31)'],
    },
  },
  {
    suite: 'acme.auth.LoginIT',
    tests: ['signsInWithPassword', 'locksAfterFiveFailures'],
    failure: {
      type: 'java.util.concurrent.TimeoutException',
      message: 'Login did not complete within 5000 ms',
      frames: ['acme.auth.LoginIT.await(LoginIT.java:120)', 'acme.auth.LoginIT.locksAfterFiveFailures(LoginIT.java:77)'],
    },
  },
];

const JS_SUITES: readonly Suite[] = [
  {
    suite: 'src/cart.test.ts',
    tests: ['adds an item', 'applies a coupon', 'empties on checkout'],
    failure: { type: 'AssertionError', message: 'expected 3 to equal 2', frames: ['at src/cart.test.ts:27:18', 'at processTicksAndRejections (node:internal/process/task_queues:95:5)'] },
  },
];

const PY_SUITES: readonly Suite[] = [
  {
    suite: 'tests/test_pipeline.py',
    tests: ['test_loads_csv', 'test_dedupes_rows', 'test_handles_empty_file'],
    failure: { type: 'AssertionError', message: 'assert 41 == 42', frames: ['tests/test_pipeline.py:58: in test_dedupes_rows', '    assert len(rows) == 42'] },
  },
];

const BAZEL_SUITES: readonly Suite[] = [
  {
    suite: '//lib/core:tests',
    tests: ['CoreTest.parsesConfig', 'CoreTest.mergesDefaults'],
    failure: { type: 'AssertionError', message: 'value of: config.timeout() expected: 30 but was: 0', frames: ['at lib.core.CoreTest.parsesConfig(CoreTest.java:19)'] },
  },
];

const SUITES: Readonly<Record<ToolType, readonly Suite[]>> = {
  native: JVM_SUITES,
  jvmbuild: JVM_SUITES,
  scalabuild: JVM_SUITES,
  targetbuild: BAZEL_SUITES,
  jsbuild: JS_SUITES,
  pybuild: PY_SUITES,
};

/** A compile error of each tool, for the demo's non-verification failures. */
const DIAGNOSTICS: Readonly<Record<ToolType, { readonly file: string; readonly line: number; readonly column: number; readonly message: string }>> = {
  native: { file: 'src/main/java/acme/Price.java', line: 57, column: 21, message: "cannot find symbol: method roundHalfEven(java.math.BigDecimal)" },
  jvmbuild: { file: 'src/main/java/acme/inventory/Stock.java', line: 12, column: 8, message: "class StockLevel is public, should be declared in a file named StockLevel.java" },
  scalabuild: { file: 'src/main/scala/acme/Pipeline.scala', line: 33, column: 5, message: 'type mismatch; found: Option[Int] required: Int' },
  targetbuild: { file: 'lib/core/Core.java', line: 88, column: 14, message: "incompatible types: String cannot be converted to int" },
  jsbuild: { file: 'src/cart.ts', line: 14, column: 3, message: "TS2322: Type 'string' is not assignable to type 'number'." },
  pybuild: { file: 'src/pipeline/load.py', line: 9, column: 1, message: 'SyntaxError: invalid syntax' },
};

export interface DemoTestEvent {
  readonly eventType: 'TestStarted' | 'TestFinished';
  readonly data: Record<string, unknown>;
}

export interface DemoExtras {
  /** TestStarted/TestFinished pairs, sent within the build's last task. */
  readonly tests: readonly DemoTestEvent[];
  /** One ConsoleOutput chunk sent before BuildFinished, or null. */
  readonly console: string | null;
}

/**
 * The extras of one demo build, from `rnd` (its own stream): `failed` when the build failed with a
 * verification failure (its tests failed); `lastTaskRan` when its last task, which runs the tests,
 * was executed (not avoided or skipped). At most 2 tests + 1 console chunk: 5 events.
 */
export function demoExtras(rnd: () => number, tool: ToolType, failed: boolean, lastTaskRan: boolean, lastTask: string): DemoExtras {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const suite = pick(SUITES[tool]);
  const tests: DemoTestEvent[] = [];
  // A failed build's tests failed (its verification failure says so); a fifth of the others ran two passing tests.
  const withTests = failed || (lastTaskRan && rnd() < 0.2);
  const failedTests: string[] = [];
  if (withTests) {
    const count = 1 + Math.floor(rnd() * 2);
    for (let k = 0; k < count; k++) {
      const name = suite.tests[k % suite.tests.length]!;
      const id = k + 1;
      const fails = failed && (k === 0 || rnd() < 0.5);
      tests.push({ eventType: 'TestStarted', data: { id, suite: suite.suite, name, task: lastTask } });
      if (fails) {
        failedTests.push(`${suite.suite}.${name}`);
        const f = suite.failure;
        tests.push({ eventType: 'TestFinished', data: { id, outcome: 'failed', attempt: 1, failure: { type: f.type, message: f.message, stackTrace: [`${f.type}: ${f.message}`, ...f.frames.map((l) => `\tat ${l}`)].join('\n') } } });
      } else {
        tests.push({ eventType: 'TestFinished', data: { id, outcome: 'passed', attempt: 1 } });
      }
    }
  }
  const console = failed || rnd() < 0.3 ? consoleText(rnd, tool, lastTask, failedTests) : null;
  return { tests, console };
}

const GREEN = '\u001b[32m';
const RED = '\u001b[31m';
const BOLD = '\u001b[1m';
const RESET = '\u001b[0m';

function consoleText(rnd: () => number, tool: ToolType, lastTask: string, failed: readonly string[]): string {
  const lines: string[] = [`${BOLD}> Starting ${lastTask}${RESET}`, 'Resolving dependencies...', `Downloaded ${3 + Math.floor(rnd() * 40)} artifacts`];
  for (let i = 0; i < 2 + Math.floor(rnd() * 4); i++) lines.push(`  ${GREEN}✓${RESET} step ${i + 1} done in ${10 + Math.floor(rnd() * 900)} ms`);
  for (const t of failed) lines.push(`${RED}FAILED${RESET} ${t}`, `    ${SUITES[tool][0]!.failure.message}`);
  if (failed.length > 0) lines.push(`${RED}${BOLD}ERROR: ${failed.length} test${failed.length === 1 ? '' : 's'} failed${RESET}`);
  return lines.join('\n') + '\n';
}

/**
 * A demo build failure with its cause: a verification failure names the failed test and its
 * exception; half the non-verification failures become compile errors with the compiler's
 * diagnostic and output tail, the others keep their message with an exception type.
 */
export function demoFailure(rnd: () => number, tool: ToolType, classification: 'verification' | 'non-verification', message: string, failedTest: string | undefined): { message: string; cause?: Record<string, unknown> } {
  if (classification === 'verification') {
    if (failedTest === undefined) return { message };
    const f = SUITES[tool][0]!.failure;
    return { message, cause: { type: f.type, message: `${failedTest}: ${f.message}` } };
  }
  if (rnd() < 0.5) return { message, cause: { type: 'BuildException', message } };
  const d = DIAGNOSTICS[tool];
  return {
    message: 'Compilation failed; see the compiler error output for details.',
    cause: {
      type: 'CompilationFailedException',
      message: 'Compilation failed; see the compiler error output for details.',
      diagnostics: [{ file: d.file, line: d.line, column: d.column, severity: 'error', message: d.message }],
      outputTail: `${d.file}:${d.line}: error: ${d.message}\n1 error\n`,
    },
  };
}
