// How the comparison page words a difference (pure, tested in Node): what it is about, its value
// in build A and in build B, and for the summary a label saying which way it went.

import type { Difference, FieldGroup, InputChange, Scalar, SummaryEntry } from '../../src/services/web-api.js';
import { formatDuration, plural } from './logic.js';

export interface Worded {
  /** What differs: "Task :test", "Environment: jvmVersion". */
  readonly subject: string;
  /** In build A, in build B ('' when it has none). */
  readonly before: string;
  readonly after: string;
  /** For numbers of milliseconds: B minus A, as "+1.2s" or "−40ms"; else ''. */
  readonly change: string;
}

const GROUP_LABELS: Readonly<Record<FieldGroup, string>> = {
  build: '',
  counts: '',
  git: 'Git',
  environment: 'Environment',
  options: 'Build option',
  cache: 'Build cache',
  settings: 'Server setting',
  values: 'Custom value',
};

export function scalar(v: Scalar): string {
  if (v === null) return '';
  return typeof v === 'string' ? v : String(v);
}

/** B minus A as a signed duration. */
export function durationChange(before: number, after: number): string {
  const d = after - before;
  if (d === 0) return '±0ms';
  return `${d > 0 ? '+' : '−'}${formatDuration(Math.abs(d))}`;
}

const ms = (before: number, after: number) => ({ before: formatDuration(before), after: formatDuration(after), change: durationChange(before, after) });

export function word(d: Difference): Worded {
  switch (d.kind) {
    case 'field': {
      const label = GROUP_LABELS[d.group];
      const subject = label === '' ? d.name.charAt(0).toUpperCase() + d.name.slice(1) : `${label}: ${d.name}`;
      if (d.group === 'build' && d.name === 'duration' && typeof d.before === 'number' && typeof d.after === 'number') return { subject, ...ms(d.before, d.after) };
      return { subject, before: scalar(d.before), after: scalar(d.after), change: '' };
    }
    case 'list': {
      const subject = d.group === 'configurations' ? 'Resolved configurations' : d.name === 'requested' ? 'Requested tasks' : d.name === 'excluded' ? 'Excluded tasks' : 'Tags';
      // Each side shows what only it has.
      return { subject, before: d.removed.join(', '), after: d.added.join(', '), change: '' };
    }
    case 'task-added':
      return { subject: `Task ${taskName(d.task.path, d.task.occurrence)}`, before: '', after: `${d.task.outcome}, ${formatDuration(d.task.duration)}`, change: '' };
    case 'task-removed':
      return { subject: `Task ${taskName(d.task.path, d.task.occurrence)}`, before: `${d.task.outcome}, ${formatDuration(d.task.duration)}`, after: '', change: '' };
    case 'task-outcome':
      return { subject: `Task ${taskName(d.path, d.occurrence)}`, before: d.before, after: d.after, change: '' };
    case 'task-duration':
      return { subject: `Task ${taskName(d.path, d.occurrence)}`, ...ms(d.before, d.after) };
    case 'task-cacheable':
      return { subject: `Task ${taskName(d.path, d.occurrence)} cacheable`, before: cacheable(d.before), after: cacheable(d.after), change: '' };
    case 'task-inputs':
      return { subject: `Task ${taskName(d.path, d.occurrence)} cache key`, before: d.before ?? 'none', after: d.after ?? 'none', change: '' };
    case 'test-added':
      return { subject: `Test ${testName(d.test)}`, before: '', after: d.test.outcome ?? 'no outcome', change: '' };
    case 'test-removed':
      return { subject: `Test ${testName(d.test)}`, before: d.test.outcome ?? 'no outcome', after: '', change: '' };
    case 'test-outcome':
      return { subject: `Test ${testName(d)}`, before: d.before ?? 'no outcome', after: d.after ?? 'no outcome', change: '' };
    case 'test-duration':
      return { subject: `Test ${testName(d)}`, ...ms(d.before, d.after) };
    case 'failure-added':
      return { subject: `Failure (${d.failure.classification})`, before: '', after: d.failure.message, change: '' };
    case 'failure-removed':
      return { subject: `Failure (${d.failure.classification})`, before: d.failure.message, after: '', change: '' };
    case 'dependency':
      // A module without a version (a project dependency) is there or not.
      return { subject: `Dependency ${d.module} (${d.configuration}${d.project === ':' ? '' : ` of ${d.project}`})`, before: version(d.before), after: version(d.after), change: '' };
  }
}

const version = (v: string | null): string => (v === null ? '' : v === '' ? 'present' : v);
const cacheable = (v: boolean | null): string => (v === null ? 'not said' : v ? 'yes' : 'no');
export const taskName = (path: string, occurrence: number): string => (occurrence > 1 ? `${path} (run ${occurrence})` : path);
/** As the build page writes it (failures-view.ts): suite.name, a parametrized case's parameters in brackets. */
export const testName = (t: { readonly suite: string; readonly name: string; readonly parameters?: string }): string =>
  `${t.suite === '' ? t.name : `${t.suite}.${t.name}`}${t.parameters !== undefined ? `[${t.parameters}]` : ''}`;

/** The summary's label for an entry: which way it went ("newly failing", "fixed", "slower"). */
export function summaryLabel(e: SummaryEntry): string {
  const d = e.difference;
  switch (e.reason) {
    case 'failing-task':
    case 'failing-test': {
      const after = d.kind === 'task-outcome' || d.kind === 'test-outcome' ? d.after : d.kind === 'task-added' || d.kind === 'test-added' ? 'failed' : null;
      const what = e.reason === 'failing-task' ? 'task' : 'test';
      return after === 'failed' ? `newly failing ${what}` : `fixed ${what}`;
    }
    case 'slower-task':
      return d.kind === 'task-duration' && d.after < d.before ? 'faster task' : 'slower task';
    case 'duration':
      return d.kind === 'field' && typeof d.before === 'number' && typeof d.after === 'number' && d.after < d.before ? 'faster' : 'slower';
    case 'outcome':
      return 'outcome';
    case 'failure':
      return d.kind === 'failure-added' ? 'new failure' : 'failure gone';
    case 'requested':
      return 'requested';
    case 'tool':
      return 'tool';
    case 'git':
      return 'git';
    case 'tasks':
      return 'tasks';
    case 'environment':
      return 'environment';
    case 'options':
      return 'options';
    case 'cache-miss':
      return 'cache miss';
    case 'dependency':
      return 'dependency';
  }
}

const FILES_NAMED = 5;

/** One input change in words: "input source: src/main/java/App.java changed", "input classpath changed (outputs of :compileJava)". */
export function inputChangeLine(i: InputChange): string {
  const verb = i.change === 'changed' ? 'changed' : i.change === 'added' ? 'added (only in B)' : 'removed (only in A)';
  const files = i.files.slice(0, FILES_NAMED).map((f) => `${f.path} ${f.change}`);
  if (i.files.length > FILES_NAMED) files.push(plural(i.files.length - FILES_NAMED, 'more file'));
  const where = i.producedBy.length > 0 ? ` (outputs of ${i.producedBy.join(', ')})` : '';
  return files.length > 0 && i.change === 'changed' ? `input ${i.name}${where}: ${files.join(', ')}` : `input ${i.name} ${verb}${where}`;
}

/** Why a task's cache key differs, a line each; with `rootOnly`, the inputs no other task's outputs changed. */
export function inputsReasons(d: Extract<Difference, { kind: 'task-inputs' }>, rootOnly = false): string[] {
  const lines = d.inputs.filter((i) => !rootOnly || i.producedBy.length === 0).map(inputChangeLine);
  if (d.implementation) lines.push("the task's implementation (its class loader or actions)");
  if (lines.length === 0) lines.push(d.cause === 'upstream' ? 'only inputs that other tasks produced' : 'no recorded input differs');
  return lines;
}

/** One line of the summary: "Test acme.PriceTest.roundsHalfCents: passed → failed". */
export function summaryLine(e: SummaryEntry): string {
  const d = e.difference;
  if (d.kind === 'task-inputs') return `Task ${taskName(d.path, d.occurrence)}: ${inputsReasons(d, true).join('; ')}`;
  const w = word(d);
  if (d.kind === 'list') return `${w.subject}: ${[...d.added.map((x) => `+${x}`), ...d.removed.map((x) => `−${x}`)].join(' ')}`;
  // Something only one build has is named with what it is there, not as "nothing → it".
  if (w.before === '' && w.after !== '') return `${w.subject}, only in B: ${w.after}`;
  if (w.after === '' && w.before !== '') return `${w.subject}, only in A: ${w.before}`;
  return `${w.subject}: ${w.before} → ${w.after}${w.change === '' ? '' : ` (${w.change})`}`;
}
