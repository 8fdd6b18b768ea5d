// Bazel's tests as the build's tests (TestStarted, TestFinished, TestOutput): every attempt of every
// test target that the Build Event Protocol reports (`testResult`: run, shard, attempt, status,
// times, cached). Where the test's files can be read (`ingest-bep` on the build machine: the
// `file://` URIs of `test.xml` and `test.log`; the live endpoint: the `bytestream://` URIs of a
// cache node the server reads, src/bes/test-outputs.ts), the JUnit XML report gives the test cases
// with their failures, and a failed attempt carries the tail of its log. Where a file the build
// needs cannot be read (the client's disk, another cache, too large), each target is one test and
// its TestFinished says which files were not read and why (`unreadOutputs`,
// docs/send-your-builds.md).

import type { BuildEvent } from '../store/types.js';
import { event } from '../agents/common-build.js';
import { parseJUnitXml } from '../agents/junit.js';

/** One attempt of a test target (a `testResult` event). */
export interface TestAttempt {
  readonly label: string;
  readonly run: number;
  readonly shard: number;
  readonly attempt: number;
  readonly status: string | undefined;
  readonly start: number | undefined;
  readonly duration: number | undefined;
  readonly cached: boolean;
  /** The attempt's files by name (`test.xml`, `test.log`), as URIs. */
  readonly outputs: ReadonlyMap<string, string>;
}

/**
 * Reads a file a URI names: its text, or why it was not read (`{ unread }`, recorded in the
 * test's `unreadOutputs`), or undefined when the reader has nothing to say of it.
 */
export type ReadUri = (uri: string) => string | { readonly unread: string } | undefined;

/** A test output that was named but not read, as TestFinished's `unreadOutputs` lists it. */
export interface UnreadOutput {
  readonly name: string;
  readonly uri: string;
  readonly reason: string;
}

/** Test statuses that fail a test; PASSED passes, NO_STATUS says nothing ran. */
const FAILED = new Set(['FAILED', 'TIMEOUT', 'INCOMPLETE', 'REMOTE_FAILURE', 'FAILED_TO_BUILD', 'TOOL_HALTED_BEFORE_TESTING']);
/** Lines of a failed attempt's log sent with it. */
const LOG_TAIL_LINES = 60;
const LOG_TAIL_BYTES = 16 * 1024;

/** The events of the attempts, in label, run, shard and attempt order; `end` places attempts without times. */
export function testEvents(attempts: readonly TestAttempt[], end: number, readUri: ReadUri | undefined): BuildEvent[] {
  const out: BuildEvent[] = [];
  const shardsOf = new Map<string, number>();
  for (const a of attempts) shardsOf.set(a.label, Math.max(shardsOf.get(a.label) ?? 1, a.shard));
  const sorted = [...attempts].sort((a, b) => a.label.localeCompare(b.label) || a.run - b.run || a.shard - b.shard || a.attempt - b.attempt);
  for (const a of sorted) {
    // A cached result took no time in this build: it is placed at the build's end, without its old times.
    const start = !a.cached && a.start !== undefined ? a.start : end;
    const duration = !a.cached && a.duration !== undefined ? a.duration : 0;
    const shard = (shardsOf.get(a.label) ?? 1) > 1 ? ` (shard ${a.shard})` : '';
    const run = a.run > 1 ? ` (run ${a.run})` : '';
    const key = `${a.label}#${a.run}.${a.shard}.${a.attempt}`;
    const failed = a.status !== undefined && FAILED.has(a.status);
    const unread: UnreadOutput[] = [];
    const log = failed ? tail(readOutput(a, 'test.log', readUri, unread)) : undefined;
    const cases = casesOf(a, readUri, unread);
    const unreadOutputs = unread.length > 0 ? { unreadOutputs: unread } : {};
    if (cases === undefined || cases.length === 0) {
      const [suite, name] = splitLabel(a.label);
      out.push(event('TestStarted', { id: key, suite, name: `${name}${shard}${run}`, task: a.label }, start));
      out.push(
        event(
          'TestFinished',
          {
            id: key,
            outcome: failed ? 'failed' : a.status === 'NO_STATUS' ? 'skipped' : 'passed',
            attempt: a.attempt,
            ...(failed ? { failure: { message: `${a.label} ${a.status}${a.status === 'TIMEOUT' ? ' (the test ran out of time)' : ''}` } } : {}),
            ...(a.cached ? { cached: true } : {}),
            ...unreadOutputs,
          },
          start + duration,
        ),
      );
      if (log !== undefined) out.push(event('TestOutput', { id: key, stream: 'stdout', text: log }, start + duration));
      continue;
    }
    // The report's cases, one after another within the attempt (a report gives durations, not starts).
    let at = start;
    cases.forEach((c, i) => {
      const id = `${key}:${i}`;
      const ms = Math.round(c.seconds * 1000);
      out.push(event('TestStarted', { id, suite: c.suite, name: `${c.name}${shard}${run}`, task: a.label }, at));
      out.push(
        event(
          'TestFinished',
          {
            id,
            outcome: c.outcome,
            attempt: a.attempt,
            ...(c.failure !== undefined ? { failure: c.failure } : {}),
            ...(c.skipReason !== undefined ? { skipReason: c.skipReason } : {}),
            ...(a.cached ? { cached: true } : {}),
            ...unreadOutputs,
          },
          at + ms,
        ),
      );
      const output = c.output ?? (c.outcome === 'failed' ? log : undefined);
      if (output !== undefined) out.push(event('TestOutput', { id, stream: 'stdout', text: output }, at + ms));
      at += ms;
    });
  }
  return out;
}

function readOutput(a: TestAttempt, name: string, readUri: ReadUri | undefined, unread: UnreadOutput[]): string | undefined {
  const uri = a.outputs.get(name);
  if (uri === undefined || readUri === undefined) return undefined;
  const read = readUri(uri);
  if (typeof read === 'object') {
    unread.push({ name, uri, reason: read.unread });
    return undefined;
  }
  return read;
}

function casesOf(a: TestAttempt, readUri: ReadUri | undefined, unread: UnreadOutput[]): ReturnType<typeof parseJUnitXml> | undefined {
  const xml = readOutput(a, 'test.xml', readUri, unread);
  if (xml === undefined) return undefined;
  try {
    return parseJUnitXml(xml);
  } catch {
    // A report that is not XML (a test runner that wrote something else): the target is the test.
    return undefined;
  }
}

/** Whether a test status fails the test. */
export function isFailedStatus(status: string | undefined): boolean {
  return status !== undefined && FAILED.has(status);
}

/**
 * The files of one `testResult` event that `testEvents` reads, most wanted first: a failed
 * attempt's report and log, else its report only (a passing attempt's log is never read). For
 * readers that must fetch them before the (synchronous) conversion.
 */
export function wantedTestOutputs(e: { readonly [payload: string]: unknown }): { readonly name: string; readonly uri: string; readonly failed: boolean }[] {
  const r = e['testResult'];
  if (r === null || typeof r !== 'object') return [];
  const result = r as { status?: unknown; testActionOutput?: unknown };
  const failed = typeof result.status === 'string' && FAILED.has(result.status);
  const wanted = failed ? ['test.xml', 'test.log'] : ['test.xml'];
  const out: { name: string; uri: string; failed: boolean }[] = [];
  for (const f of Array.isArray(result.testActionOutput) ? result.testActionOutput : []) {
    const { name, uri } = (f ?? {}) as { name?: unknown; uri?: unknown };
    if (typeof name === 'string' && typeof uri === 'string' && wanted.includes(name)) out.push({ name, uri, failed });
  }
  return out;
}

/** The last lines of a log, bounded. */
function tail(log: string | undefined): string | undefined {
  if (log === undefined) return undefined;
  const lines = log.trimEnd().split('\n');
  const kept = lines.slice(-LOG_TAIL_LINES).join('\n');
  const bounded = kept.length > LOG_TAIL_BYTES ? kept.slice(-LOG_TAIL_BYTES) : kept;
  return lines.length > LOG_TAIL_LINES || bounded.length < kept.length ? `… (the log's last ${LOG_TAIL_LINES} lines)\n${bounded}` : bounded;
}

/** `//pkg:name` as its package and its name (`//pkg`, `name`); a label without a colon is its own name. */
function splitLabel(label: string): [string, string] {
  const colon = label.lastIndexOf(':');
  if (colon < 0) return [label, label.slice(label.lastIndexOf('/') + 1)];
  return [label.slice(0, colon) || '//', label.slice(colon + 1)];
}
