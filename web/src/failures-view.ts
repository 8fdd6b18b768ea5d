// The build page's first section: why the build failed. The failed tests with their message (the
// stack trace and the test's output expandable), each build failure with its cause (the
// exception, a compiler's diagnostics with file and line, a failed command's output tail), the
// failed tasks, and a link to the first error line of the console log, so that whoever opens a
// failed build sees what failed and why without scrolling.

import { h } from '../../ui/dom.js';
import type { BuildDetails } from './api.js';
import type { TestRow } from './report-api.js';
import { plural, testUrl } from './logic.js';
import { VERDICT_LABELS } from './test-text.js';

type Failure = BuildDetails['failures'][number];
type Cause = NonNullable<Failure['cause']>;

/** The first line of a message (the rest goes with the stack trace). */
const firstLine = (s: string): string => s.split('\n', 1)[0]!;

function expandable(summary: string, text: string, cls: string): HTMLElement {
  return h('details', { class: cls }, h('summary', {}, summary), h('pre', { class: 'trace' }, text));
}

/** Verdicts worth a mark on the build page: the test is not to be trusted, or broke lately. */
const MARKED: readonly string[] = ['flaky', 'broken', 'regressed'];

/** The test's name, a link to its page when the store knows it, marked when it is flaky or newly failing. */
export function testName(t: Pick<TestRow, 'suite' | 'name' | 'parameters' | 'displayName'> & Partial<Pick<TestRow, 'testId' | 'verdict'>>): HTMLElement {
  const parts = [h('span', { class: 'test-suite' }, t.suite === '' ? '' : `${t.suite}.`), h('strong', {}, t.name), t.parameters ? h('span', { class: 'muted' }, `[${t.parameters}]`) : ''];
  const name = t.testId == null ? h('span', { class: 'test-name' }, ...parts) : h('a', { class: 'test-name test-page-link', href: testUrl(t.testId), title: 'This test over time' }, ...parts);
  if (t.verdict == null || !MARKED.includes(t.verdict)) return name;
  return h('span', {}, name, ' ', h('span', { class: `verdict ${t.verdict}`, title: "The test's verdict over its latest runs" }, VERDICT_LABELS[t.verdict]));
}

/** Why the server has no copy of a test's file (TestFinished `unreadOutputs`, docs/send-your-builds.md). */
const UNREAD: Readonly<Record<string, string>> = {
  otherCache: 'it is in a cache the server is not set to read (bes.cacheNodes)',
  clientFile: 'it stayed on the build machine (Bazel ran without a gRPC remote cache)',
  notFound: 'the cache no longer has it (evicted, or never uploaded)',
  denied: "the cache refused the server's credentials",
  timeout: 'the cache did not answer in time',
  tooLarge: 'it is larger than the server reads',
  limit: 'it is beyond the files or bytes the server reads per build',
  failed: 'the cache could not be reached, or sent other bytes',
  unsupported: 'its address is of a kind the server does not read',
};

/** The files of a test the server could not read, and why: so that a missing log is explained. */
function unreadOutputs(t: TestRow): HTMLElement | string {
  if (t.unreadOutputs.length === 0) return '';
  return h(
    'ul',
    { class: 'unread-outputs muted' },
    ...t.unreadOutputs.map((u) => h('li', {}, 'Not read: ', h('code', {}, u.name), ` (${UNREAD[u.reason] ?? u.reason})`)),
  );
}

/** Characters of a failure message's first line shown in the list: a longer one would push the other failures off the first screen. */
const MESSAGE_CHARS = 400;

/** Lines of a test's output shown when they are all there is to say why it failed. */
const OUTPUT_TAIL_LINES = 10;

/** The last lines of a test's output (blank ones at its end left out). */
function tailOf(output: string): string {
  return output.replace(/\s+$/, '').split('\n').slice(-OUTPUT_TAIL_LINES).join('\n');
}

/** A failed test: its name, the failure's type and message, and what can be expanded. */
export function failedTest(t: TestRow): HTMLElement {
  const f = t.failure;
  const message = f === null || f.message === '' ? 'failed (no message)' : f.message;
  // Without a stack trace the message says only that the test failed (a test that exited with a
  // status, as Bazel's shell tests do): what it printed last says why, so it is shown at once.
  const tail = !f?.stackTrace && t.output.trim() !== '' ? tailOf(t.output) : null;
  const line = firstLine(message);
  const cut = line.length > MESSAGE_CHARS;
  return h(
    'li',
    { class: 'failed-test' },
    testName(t),
    t.attempts > 1 ? h('span', { class: 'muted' }, ` (${t.attempts} attempts)`) : '',
    t.task ? h('span', { class: 'muted' }, ' in ', h('code', {}, t.task)) : '',
    h('div', { class: 'failure-message' }, f?.type ? h('span', { class: 'exception-type' }, `${f.type}: `) : '', cut ? `${line.slice(0, MESSAGE_CHARS)}…` : line),
    cut || (!f?.stackTrace && message.includes('\n')) ? expandable('Whole message', message, 'whole-message') : '',
    f?.stackTrace ? expandable('Stack trace', f.stackTrace, 'stack-trace') : '',
    tail !== null ? h('div', { class: 'output-tail-label muted' }, 'End of its output:') : '',
    tail !== null ? h('pre', { class: 'output-tail test-output-tail' }, tail) : '',
    t.output !== '' ? expandable(tail !== null ? 'Whole output of the test' : 'Output of the test', t.output, 'test-output') : '',
    unreadOutputs(t),
  );
}

function causeOf(c: Cause, message: string): (HTMLElement | string)[] {
  const out: (HTMLElement | string)[] = [];
  const said = c.message !== null && c.message !== message ? c.message : null;
  if (c.type !== null || said !== null) {
    out.push(h('div', { class: 'cause' }, 'Cause: ', c.type ? h('span', { class: 'exception-type' }, c.type) : '', c.type && said ? ': ' : '', said ? firstLine(said) : ''));
  }
  if (c.diagnostics.length > 0) {
    out.push(
      h(
        'ul',
        { class: 'diagnostics' },
        ...c.diagnostics.map((d) =>
          h(
            'li',
            { class: `diagnostic ${d.severity ?? 'error'}` },
            h('code', { class: 'diagnostic-location' }, `${d.file}${d.line !== null ? `:${d.line}` : ''}${d.column !== null ? `:${d.column}` : ''}`),
            ' ',
            h('span', { class: 'severity' }, d.severity ?? 'error'),
            ' ',
            d.message,
          ),
        ),
      ),
    );
  }
  if (c.outputTail !== null) out.push(h('div', { class: 'output-tail-label muted' }, 'End of its error output:'), h('pre', { class: 'output-tail' }, c.outputTail));
  if (c.stackTrace !== null) out.push(expandable('Stack trace', c.stackTrace, 'stack-trace'));
  return out;
}

/** The failures section's content (the section itself is the page's). */
export function failuresContent(b: BuildDetails, consoleLink: (line: number) => string): (HTMLElement | string)[] {
  const out: (HTMLElement | string)[] = [];
  const failedTests = b.tests.failed;
  if (failedTests.length > 0) {
    const more = b.tests.counts.failed - failedTests.length;
    out.push(
      h('h3', {}, `Failed tests (${b.tests.counts.failed.toLocaleString('en-US')})`),
      h('ul', { class: 'failed-tests' }, ...failedTests.map(failedTest)),
      more > 0 ? h('p', {}, h('a', { href: '#tests', class: 'all-failed-tests' }, `${plural(more, 'more failed test')} in Tests below`)) : '',
    );
  }
  if (b.failures.length === 0 && failedTests.length === 0) out.push(h('p', { class: 'muted' }, 'No failures.'));
  if (b.failures.length > 0) {
    if (failedTests.length > 0) out.push(h('h3', {}, 'Build failures'));
    out.push(
      h(
        'ul',
        { class: 'failures' },
        ...b.failures.map((f) => h('li', { class: `failure ${f.classification}` }, h('span', { class: 'classification' }, f.classification), ' ', h('span', { class: 'failure-text' }, f.message), ...(f.cause ? causeOf(f.cause, f.message) : []))),
      ),
    );
  }
  const failedTasks = b.tasks.filter((t) => t.outcome === 'failed');
  if (failedTasks.length > 0) out.push(h('p', {}, 'Failed tasks: ', ...failedTasks.map((t) => h('code', { class: 'task-name failed' }, t.path))));
  const e = b.console.firstError;
  if (e !== null && (b.failures.length > 0 || failedTests.length > 0)) {
    out.push(h('p', { class: 'first-error' }, 'First error in the console log: ', h('a', { href: consoleLink(e.line), id: 'first-error-link' }, `line ${(e.line + 1).toLocaleString('en-US')}`), ' ', h('code', {}, e.text)));
  }
  return out;
}
