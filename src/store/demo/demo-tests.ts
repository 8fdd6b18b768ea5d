// The tests, console output and failure causes of the demo builds (demo-data.ts), so that a fresh
// `npm start` shows failed tests with their stack traces, compile errors with file and line, and
// console logs on the build pages, and the Tests pages a history of tests: stable, slow, flaky,
// broken and failing on one OS or branch (demo-test-population.ts). They come from a random stream
// of their own, seeded per build, so the draws of every other demo field stay what they were; and
// they stay few (six to eight tests, on the half of the builds whose tests ran), so the demo keeps
// its generation and ingest speed (bench/ingest.ts).

import type { ToolType } from '../../query/catalog.js';
import { DEMO_TESTS, type DemoBehaviour, type DemoFailure, type DemoTest } from './demo-test-population.js';

/** A compile error of each tool, for the demo's non-verification failures. */
const DIAGNOSTICS: Readonly<Record<ToolType, { readonly file: string; readonly line: number; readonly column: number; readonly message: string }>> = {
  native: { file: 'src/main/java/acme/Price.java', line: 57, column: 21, message: "cannot find symbol: method roundHalfEven(java.math.BigDecimal)" },
  jvmbuild: { file: 'src/main/java/acme/inventory/Stock.java', line: 12, column: 8, message: "class StockLevel is public, should be declared in a file named StockLevel.java" },
  scalabuild: { file: 'src/main/scala/acme/Pipeline.scala', line: 33, column: 5, message: 'type mismatch; found: Option[Int] required: Int' },
  targetbuild: { file: 'lib/core/Core.java', line: 88, column: 14, message: "incompatible types: String cannot be converted to int" },
  jsbuild: { file: 'src/cart.ts', line: 14, column: 3, message: "TS2322: Type 'string' is not assignable to type 'number'." },
  pybuild: { file: 'src/pipeline/load.py', line: 9, column: 1, message: 'SyntaxError: invalid syntax' },
};

/** What a demo build's tests depend on: all of it drawn by demo-data.ts from its own stream. */
export interface DemoTestContext {
  readonly tool: ToolType;
  /** The build failed a verification (tests, lint or style checks): a test may fail in it. */
  readonly verification: boolean;
  /** The build failed its tests: at least one test fails in it. */
  readonly failedTests: boolean;
  /** The tests ran: the build's last task ran (executed or failed) and nothing broke before it. */
  readonly ran: boolean;
  readonly lastTask: string;
  /** The last task's start and end (epoch ms): the tests run within it. */
  readonly from: number;
  readonly to: number;
  /** Where the build starts in the demo's time window, 0 (first) to 1 (last). */
  readonly progress: number;
  /** The build's operating system, or null when its tool reports none. */
  readonly os: string | null;
  readonly branch: string;
}

export interface DemoTestEvent {
  readonly at: number;
  readonly eventType: 'TestStarted' | 'TestFinished';
  readonly data: Record<string, unknown>;
}

export interface DemoExtras {
  /** TestStarted/TestFinished pairs (one per attempt) within the last task, in time order. */
  readonly tests: readonly DemoTestEvent[];
  /** One ConsoleOutput chunk sent before BuildFinished, or null. */
  readonly console: string | null;
  /** The first test that failed (all its attempts), for the build failure's cause. */
  readonly failed: { readonly test: string; readonly type: string; readonly message: string } | null;
}

/** Whether the test's own rule makes it fail in this build (a flaky test draws per attempt instead). */
function failsHere(b: DemoBehaviour, c: DemoTestContext): boolean {
  switch (b.kind) {
    case 'broken':
      return c.progress >= b.from;
    case 'os':
      return c.os !== null && c.os.startsWith(b.os);
    case 'branch':
      return c.branch === b.branch;
    case 'stable':
    case 'flaky':
    case 'fragile':
      return false;
  }
}

/** The attempts' outcomes of each test (true: failed), or null for a test the build does not run. */
function outcomes(rnd: () => number, tests: readonly DemoTest[], c: DemoTestContext): (boolean[] | null)[] {
  const out = tests.map((t): boolean[] | null => {
    const b = t.behaviour;
    if (b.kind === 'flaky') {
      // A failed attempt is retried once (Gradle's test retry, Surefire's rerunFailingTestsCount);
      // in a build that passed, the retry passed.
      if (rnd() >= b.p) return [false];
      return [true, c.verification && rnd() < b.p];
    }
    if (!failsHere(b, c)) return [false];
    // The build's outcome is fixed beforehand (demo-data.ts): a test that must fail runs only in
    // builds that failed a verification; the others did not run it.
    return c.verification ? [true, true] : null;
  });
  if (c.failedTests && !out.some((a) => a !== null && a.every((f) => f))) {
    // The build failed its tests: a flaky test that failed its first attempt failed its retry too,
    // else the fragile test failed.
    const flaky = out.findIndex((a) => a !== null && a[0] === true);
    const fragile = tests.findIndex((t) => t.behaviour.kind === 'fragile');
    out[flaky >= 0 ? flaky : Math.max(0, fragile)] = [true, true];
  }
  return out;
}

const number = (rnd: () => number, lo: number, hi: number): number => lo + Math.floor(rnd() * (hi - lo + 1));

function failureOf(rnd: () => number, f: DemoFailure): { type: string; message: string; stackTrace: string } {
  const message = f.message.replace('{ms}', String(number(rnd, 1001, 1250))).replace('{port}', String(number(rnd, 30000, 60999)));
  return { type: f.type, message, stackTrace: [`${f.type}: ${message}`, ...f.frames.map((l) => `\tat ${l}`)].join('\n') };
}

/**
 * The tests, console output and first failed test of one demo build, from `rnd` (its own stream).
 * A build whose tests ran runs its tool's demo tests (demo-test-population.ts), side by side within
 * its last task: two events a test and two more a retried one, so a build stays under 60 events.
 */
export function demoExtras(rnd: () => number, c: DemoTestContext): DemoExtras {
  const tests: DemoTestEvent[] = [];
  const failedNames: { name: string; message: string }[] = [];
  let failed: DemoExtras['failed'] = null;
  if (c.ran) {
    const population = DEMO_TESTS[c.tool];
    const attemptsOf = outcomes(rnd, population, c);
    const span = Math.max(2, c.to - c.from - 2);
    let id = 0;
    population.forEach((t, k) => {
      const attempts = attemptsOf[k];
      if (attempts == null) return;
      const typical = t.ms * (1 + (t.drift ?? 0) * c.progress);
      // Parallel forks: each test (its attempts one after another) somewhere within the task.
      const took = Math.max(1, Math.min(Math.round(typical * (0.7 + 0.6 * rnd())), Math.floor(span / attempts.length) - 1));
      let at = c.from + 1 + Math.floor(rnd() * Math.max(1, span - took * attempts.length));
      attempts.forEach((fails, a) => {
        id++;
        tests.push({ at, eventType: 'TestStarted', data: { id, suite: t.suite, name: t.name, task: c.lastTask } });
        at += took;
        if (fails) {
          const failure = failureOf(rnd, t.failure);
          tests.push({ at, eventType: 'TestFinished', data: { id, outcome: 'failed', attempt: a + 1, failure } });
          if (a === attempts.length - 1) {
            failedNames.push({ name: `${t.suite}.${t.name}`, message: failure.message });
            failed ??= { test: `${t.suite}.${t.name}`, type: failure.type, message: failure.message };
          }
        } else {
          tests.push({ at, eventType: 'TestFinished', data: { id, outcome: 'passed', attempt: a + 1 } });
        }
      });
    });
    tests.sort((x, y) => x.at - y.at);
  }
  const console = c.verification || rnd() < 0.3 ? consoleText(rnd, c.lastTask, failedNames) : null;
  return { tests, console, failed };
}

const GREEN = '\u001b[32m';
const RED = '\u001b[31m';
const BOLD = '\u001b[1m';
const RESET = '\u001b[0m';

function consoleText(rnd: () => number, lastTask: string, failed: readonly { name: string; message: string }[]): string {
  const lines: string[] = [`${BOLD}> Starting ${lastTask}${RESET}`, 'Resolving dependencies...', `Downloaded ${3 + Math.floor(rnd() * 40)} artifacts`];
  for (let i = 0; i < 2 + Math.floor(rnd() * 4); i++) lines.push(`  ${GREEN}✓${RESET} step ${i + 1} done in ${10 + Math.floor(rnd() * 900)} ms`);
  for (const t of failed) lines.push(`${RED}FAILED${RESET} ${t.name}`, `    ${t.message}`);
  if (failed.length > 0) lines.push(`${RED}${BOLD}ERROR: ${failed.length} test${failed.length === 1 ? '' : 's'} failed${RESET}`);
  return lines.join('\n') + '\n';
}

/**
 * A demo build failure with its cause: a verification failure has the first failed test's
 * exception; half the non-verification failures become compile errors with the compiler's
 * diagnostic and output tail, the others keep their message with an exception type.
 */
export function demoFailure(rnd: () => number, tool: ToolType, classification: 'verification' | 'non-verification', message: string, failed: DemoExtras['failed']): { message: string; cause?: Record<string, unknown> } {
  if (classification === 'verification') {
    if (failed === null) return { message };
    // The test's own failure, so that the build failure joins the test's failure group.
    return { message, cause: { type: failed.type, message: failed.message } };
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
