// Why a build failed, as the build page shows it: its tests (grouped by attempt, failed and
// retried first, then the slowest; filtered and paged) and its console log (lines, the first
// error line, search; paged). Read from the build's test and console events
// (docs/send-your-builds.md, "Tests, console output and failure causes").
//
// A finished build never changes, so the report of a build is made once and kept in a bounded
// LRU (by the text and rows it holds): paging through a 10 MB log or 10,000 tests decodes the
// events once, not on every page. The caller checks the build's visibility before each use.

import { LRUCache } from 'lru-cache';
import { CONSOLE_EVENT_TYPE, identityOf, TEST_EVENT_TYPES, testIdOf, testKey, testOutcome, type TestOutcome } from '../store/events/test-events.js';
import type { BuildEvent, BuildStore } from '../store/types.js';

export interface TestFailure {
  readonly type: string | null;
  readonly message: string;
  readonly stackTrace: string | null;
}

/** One test of the build: its attempts together, as the last one ended. */
export interface TestRow {
  /** `suite.name`, as the `failedTest` field has it. */
  readonly key: string;
  readonly suite: string;
  readonly name: string;
  readonly displayName: string | null;
  readonly parameters: string | null;
  readonly task: string | null;
  /** The last attempt's outcome; null when the tool said something else. */
  readonly outcome: TestOutcome | null;
  readonly attempts: number;
  /** Failed, then passed in a later attempt. */
  readonly flaky: boolean;
  /** Milliseconds after the build's start, of the first attempt. */
  readonly start: number;
  /** Milliseconds, of the last attempt; null when it never finished. */
  readonly duration: number | null;
  readonly skipReason: string | null;
  /** The last failed attempt's failure. */
  readonly failure: TestFailure | null;
  /** The test's own output (stdout and stderr in order), bounded at ingest; '' when none. */
  readonly output: string;
  /**
   * Files of the last attempt the server could not read, and why (the Bazel endpoint's test logs:
   * TestFinished `unreadOutputs`, docs/send-your-builds.md): the page says why a log is missing.
   */
  readonly unreadOutputs: readonly UnreadOutput[];
}

/** A test output named but not read: its name (`test.log`) and the reason (`otherCache`, `notFound`, ...). */
export interface UnreadOutput {
  readonly name: string;
  readonly reason: string;
}

function unreadOutputsOf(finished: Readonly<Record<string, unknown>> | undefined): UnreadOutput[] {
  const list = finished?.['unreadOutputs'];
  if (!Array.isArray(list)) return [];
  return list.flatMap((u: unknown) => {
    const o = u as Record<string, unknown> | null;
    return o !== null && typeof o === 'object' && typeof o['name'] === 'string' && typeof o['reason'] === 'string' ? [{ name: o['name'], reason: o['reason'] }] : [];
  });
}

export interface TestCounts {
  readonly total: number;
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
  readonly flaky: number;
}

export interface ConsoleSummary {
  readonly lines: number;
  /** The agent or the ingest cut the log (limits.consoleBytesPerBuild). */
  readonly truncated: boolean;
  /** The first line that reads as an error (0-based), or null. */
  readonly firstError: { readonly line: number; readonly text: string } | null;
}

export interface BuildReport {
  /** Failed first, then flaky, then by duration, longest first. */
  readonly tests: readonly TestRow[];
  readonly counts: TestCounts;
  readonly consoleLines: readonly string[];
  readonly console: ConsoleSummary;
}

// ANSI escape sequences (colours, cursor moves): left out where lines are searched and matched.
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b[@-Z\\-_]/g;
export const plainText = (line: string): string => (line.includes('\u001b') ? line.replace(ANSI, '') : line);

// An error word on its own (`error:`, `BUILD FAILED`, `FAILURE`, `fatal`), or a Java-style type
// name ending in one (`IllegalStateException`, `AssertionError`); not a count of none.
const ERROR_WORD = /(^|[^a-z])(error|errors|failed|failure|fatal|exception)([^a-z]|$)/i;
const ERROR_TYPE = /[a-z](Exception|Error)\b/;
const NOT_AN_ERROR = /\b(0|no) (errors?|failures?|failed)\b/i;
/**
 * A section heading between rules of 3 or more `=`, `_`, `-` or `*` (pytest's `==== ERRORS ====`
 * and `____ ERROR collecting x.py ____`): it announces errors, the lines under it say which.
 */
const HEADING = /^\s*([=_*-])\1{2,}.*[^=_*-\s].*([=_*-])\2{2,}\s*$/;

/** Whether a console line reads as an error: the page links the first one. */
export function isErrorLine(line: string): boolean {
  const t = plainText(line);
  return (ERROR_WORD.test(t) || ERROR_TYPE.test(t)) && !NOT_AN_ERROR.test(t) && !HEADING.test(t);
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function failureOf(v: unknown): TestFailure | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const f = v as Record<string, unknown>;
  return { type: str(f['type']), message: str(f['message']) ?? '', stackTrace: str(f['stackTrace']) };
}

interface Attempt {
  readonly started: Readonly<Record<string, unknown>> | undefined;
  readonly startAt: number;
  finished: Readonly<Record<string, unknown>> | undefined;
  endAt: number | undefined;
  output: string;
}

const rank = (t: TestRow): number => (t.outcome === 'failed' ? 0 : t.flaky ? 1 : 2);

/** The report of a build from its test and console events (in order). */
export function reportOf(events: readonly BuildEvent[], origin: number): BuildReport {
  const attempts = new Map<string, Attempt>();
  const order: Attempt[] = [];
  const chunks: string[] = [];
  let truncated = false;
  const startedById = new Map<string, Readonly<Record<string, unknown>>>();
  for (const e of events) {
    const d = e.data;
    switch (e.type.eventType) {
      case 'TestStarted': {
        const id = testIdOf(d);
        if (id === undefined) break;
        startedById.set(id, d);
        const a: Attempt = { started: d, startAt: e.timestamp, finished: undefined, endAt: undefined, output: '' };
        attempts.set(id, a);
        order.push(a);
        break;
      }
      case 'TestFinished': {
        const id = testIdOf(d) ?? `#${order.length}`;
        let a = attempts.get(id);
        if (a === undefined || a.finished !== undefined) {
          a = { started: undefined, startAt: e.timestamp, finished: undefined, endAt: undefined, output: '' };
          attempts.set(id, a);
          order.push(a);
        }
        a.finished = d;
        a.endAt = e.timestamp;
        break;
      }
      case 'TestOutput': {
        const a = attempts.get(testIdOf(d) ?? '');
        const text = str(d['text']);
        if (a !== undefined && text !== null) a.output += text;
        break;
      }
      case CONSOLE_EVENT_TYPE: {
        const text = str(d['text']);
        if (text !== null) chunks.push(text);
        if (d['truncated'] === true) truncated = true;
        break;
      }
      default:
        break;
    }
  }
  // Attempts of one test share suite, name and parameters.
  const groups = new Map<string, Attempt[]>();
  for (const a of order) {
    const who = identityOf(a.finished ?? a.started ?? {}, startedById);
    const suite = who?.suite ?? str(a.started?.['suite']) ?? '';
    const name = who?.name ?? str(a.started?.['name']) ?? '(unnamed test)';
    const k = `${suite}\u0000${name}\u0000${str(a.started?.['parameters']) ?? ''}`;
    const g = groups.get(k);
    if (g === undefined) groups.set(k, [a]);
    else g.push(a);
  }
  const tests: TestRow[] = [];
  const counts = { total: 0, passed: 0, failed: 0, skipped: 0, flaky: 0 };
  for (const [k, group] of groups) {
    const [suite, name] = k.split('\u0000') as [string, string];
    const first = group[0]!;
    const last = group[group.length - 1]!;
    const outcomes = group.map((a) => (a.finished ? testOutcome(a.finished['outcome']) : undefined));
    const outcome = outcomes[outcomes.length - 1] ?? null;
    const lastFailed = [...group].reverse().find((a) => a.finished && testOutcome(a.finished['outcome']) === 'failed');
    const flaky = outcome === 'passed' && outcomes.includes('failed');
    const started = group.find((a) => a.started)?.started;
    tests.push({
      key: testKey({ suite, name }),
      suite,
      name,
      displayName: str(started?.['displayName']),
      parameters: str(started?.['parameters']),
      task: str(started?.['task']),
      outcome,
      attempts: group.length,
      flaky,
      start: first.startAt - origin,
      duration: last.endAt === undefined ? null : last.endAt - last.startAt,
      skipReason: str(last.finished?.['skipReason']),
      failure: lastFailed ? (failureOf(lastFailed.finished!['failure']) ?? { type: null, message: '', stackTrace: null }) : null,
      output: group.map((a) => a.output).join(''),
      unreadOutputs: unreadOutputsOf(last.finished),
    });
    counts.total++;
    if (outcome !== null) counts[outcome]++;
    if (flaky) counts.flaky++;
  }
  tests.sort((a, b) => rank(a) - rank(b) || (b.duration ?? -1) - (a.duration ?? -1) || a.key.localeCompare(b.key));
  const text = chunks.join('');
  const consoleLines = text === '' ? [] : (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  const errorAt = consoleLines.findIndex(isErrorLine);
  return {
    tests,
    counts,
    consoleLines,
    console: { lines: consoleLines.length, truncated, firstError: errorAt < 0 ? null : { line: errorAt, text: plainText(consoleLines[errorAt]!) } },
  };
}

/** The event types the report reads. */
export const REPORT_EVENT_TYPES: readonly string[] = [...TEST_EVENT_TYPES, CONSOLE_EVENT_TYPE];

/** Reports kept per store: about 64 MB of text and rows. */
const caches = new WeakMap<BuildStore, LRUCache<string, BuildReport>>();

function cacheOf(store: BuildStore): LRUCache<string, BuildReport> {
  let c = caches.get(store);
  if (c === undefined) {
    c = new LRUCache<string, BuildReport>({
      maxSize: 64 * 1024 * 1024,
      sizeCalculation: (r) => 1024 + r.consoleLines.reduce((n, l) => n + 2 * l.length + 40, 0) + r.tests.reduce((n, t) => n + 300 + 2 * (t.output.length + (t.failure?.stackTrace?.length ?? 0)), 0),
    });
    caches.set(store, c);
  }
  return c;
}

/**
 * The report of an available build; `events`, when the caller has read them already (the build
 * details), saves reading them again. The caller has checked that the build is visible.
 */
export async function buildReport(store: BuildStore, build: { readonly id: string; readonly availableAt: number }, origin: number | null, events?: readonly BuildEvent[]): Promise<BuildReport> {
  const { id } = build;
  const cache = cacheOf(store);
  // With the moment it became available: a build deleted and sent again is another report.
  const key = `${id}@${build.availableAt}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  let read = events;
  if (read === undefined) {
    const list: BuildEvent[] = [];
    for await (const e of store.streamEvents(id, { eventTypes: REPORT_EVENT_TYPES })) list.push(e);
    read = list;
  }
  const report = reportOf(read, origin ?? read[0]?.timestamp ?? 0);
  cache.set(key, report);
  return report;
}

export const MAX_TESTS_PAGE = 500;
export const MAX_CONSOLE_PAGE = 5000;
/** Line numbers of matches a console search answers at most (the count is exact). */
export const MAX_CONSOLE_MATCHES = 1000;

export type TestFilter = 'all' | 'failed' | 'flaky' | 'passed' | 'skipped';
export const TEST_FILTERS: readonly TestFilter[] = ['all', 'failed', 'flaky', 'passed', 'skipped'];

function keeps(filter: TestFilter, t: TestRow): boolean {
  switch (filter) {
    case 'all':
      return true;
    case 'flaky':
      return t.flaky;
    case 'failed':
    case 'passed':
    case 'skipped':
      return t.outcome === filter;
  }
}

export interface TestsPage {
  readonly tests: readonly TestRow[];
  readonly offset: number;
  /** Tests that match the filter and the name. */
  readonly total: number;
  readonly counts: TestCounts;
}

/** Tests `offset` .. `offset + limit` in the report's order, of those whose name holds `name` (any case) and that pass `filter`. */
export function testsPage(report: BuildReport, options: { name?: string; filter?: TestFilter; offset: number; limit: number }): TestsPage {
  const needle = (options.name ?? '').trim().toLowerCase();
  const filter = options.filter ?? 'all';
  const matching = report.tests.filter(
    (t) => keeps(filter, t) && (needle === '' || t.key.toLowerCase().includes(needle) || (t.displayName?.toLowerCase().includes(needle) ?? false)),
  );
  const limit = Math.max(1, Math.min(MAX_TESTS_PAGE, options.limit));
  return { tests: matching.slice(options.offset, options.offset + limit), offset: options.offset, total: matching.length, counts: report.counts };
}

export interface ConsolePage {
  /** Lines `offset` ..., as stored (with their ANSI colour codes). */
  readonly lines: readonly string[];
  readonly offset: number;
  /** Lines of the whole log. */
  readonly total: number;
  readonly truncated: boolean;
  readonly firstError: ConsoleSummary['firstError'];
  /** With `search`: the numbers of the first MAX_CONSOLE_MATCHES lines that hold it (any case, colours left out), and how many do. */
  readonly matches?: { readonly lines: readonly number[]; readonly count: number };
}

export function consolePage(report: BuildReport, options: { offset: number; limit: number; search?: string }): ConsolePage {
  const limit = Math.max(1, Math.min(MAX_CONSOLE_PAGE, options.limit));
  const page: ConsolePage = {
    lines: report.consoleLines.slice(options.offset, options.offset + limit),
    offset: options.offset,
    total: report.consoleLines.length,
    truncated: report.console.truncated,
    firstError: report.console.firstError,
  };
  const needle = (options.search ?? '').toLowerCase();
  if (needle === '') return page;
  const lines: number[] = [];
  let count = 0;
  report.consoleLines.forEach((l, i) => {
    if (!plainText(l).toLowerCase().includes(needle)) return;
    count++;
    if (lines.length < MAX_CONSOLE_MATCHES) lines.push(i);
  });
  return { ...page, matches: { lines, count } };
}
