// The summary of a comparison: the few differences most likely to explain why the two builds
// ended differently or took different times, before the full lists. Rules, in this order, each
// with its own cap, at most MAX_SUMMARY entries in all:
//
//   outcome        the build's outcome changed
//   failing-task   a task failed in one build and not in the other (or exists only there, failed)
//   failing-test   the same for tests
//   failure        a failure message present in one build only
//   requested      other requested or excluded tasks
//   tool           another tool or agent version
//   git            another commit, branch or dirty state
//   dependency     a module of a configuration both builds resolved, at another version or in
//                  one build only
//   cache-miss     a task avoided in one build (up to date, from the cache) and run in the other
//                  whose recorded inputs differ, unless only other tasks' outputs changed them
//                  (the task that produced them is the cause, and is listed itself)
//   duration       the build's duration changed by at least 1 s and 10% of the longer build;
//                  then, only then, what explains it:
//   tasks            another number of tasks, or of tasks avoided (up-to-date or from the cache)
//   slower-task      the tasks whose duration changed most (each at least 10% of the build's change)
//   environment    environment values (CPU cores, JVM, OS, ...)
//   options        build options, cache and server settings
//
// Every rule is the same whichever build is A, and each keeps the order of its section (which is
// symmetric too), so swapping the builds swaps each entry and keeps the summary's order.

import type { Difference, Section, SummaryEntry, SummaryReason } from './comparison.js';

export const MAX_SUMMARY = 12;

type Rule = readonly [reason: SummaryReason, cap: number, section: Section['id'], test: (d: Difference) => boolean];

const failedOnOneSide = (before: string | null, after: string | null): boolean => (before === 'failed') !== (after === 'failed');

const RULES: readonly Rule[] = [
  ['outcome', 1, 'header', (d) => d.kind === 'field' && d.group === 'build' && d.name === 'outcome'],
  [
    'failing-task',
    3,
    'tasks',
    (d) => (d.kind === 'task-outcome' && failedOnOneSide(d.before, d.after)) || ((d.kind === 'task-added' || d.kind === 'task-removed') && d.task.outcome === 'failed'),
  ],
  [
    'failing-test',
    3,
    'tests',
    (d) => (d.kind === 'test-outcome' && failedOnOneSide(d.before, d.after)) || ((d.kind === 'test-added' || d.kind === 'test-removed') && d.test.outcome === 'failed'),
  ],
  ['failure', 2, 'failures', (d) => d.kind === 'failure-added' || d.kind === 'failure-removed'],
  ['requested', 2, 'asked', (d) => d.kind === 'list' && d.group === 'requested'],
  ['tool', 2, 'header', (d) => d.kind === 'field' && d.group === 'build' && (d.name === 'tool' || d.name === 'tool version' || d.name === 'agent version')],
  ['git', 3, 'asked', (d) => d.kind === 'field' && d.group === 'git' && d.name !== 'repository'],
  ['dependency', 3, 'dependencies', (d) => d.kind === 'dependency'],
  ['cache-miss', 3, 'tasks', (d) => d.kind === 'task-inputs' && d.missed && d.cause !== 'upstream'],
];

const ENVIRONMENT_RULES: readonly Rule[] = [
  ['environment', 3, 'asked', (d) => d.kind === 'field' && d.group === 'environment'],
  ['options', 3, 'asked', (d) => d.kind === 'field' && (d.group === 'options' || d.group === 'cache' || d.group === 'settings')],
];

/** A change of duration worth explaining: at least 1 s and 10% of the longer build. */
export function significantChange(a: number | null, b: number | null): boolean {
  if (a === null || b === null) return false;
  const change = Math.abs(a - b);
  return change >= 1000 && change >= 0.1 * Math.max(a, b);
}

export function summaryOf(sections: readonly Section[], durationA: number | null, durationB: number | null): SummaryEntry[] {
  const of = (id: Section['id']) => sections.find((s) => s.id === id)?.differences ?? [];
  const out: SummaryEntry[] = [];
  const apply = (rules: readonly Rule[]) => {
    for (const [reason, cap, section, test] of rules) {
      for (const d of of(section).filter(test).slice(0, cap)) out.push({ reason, difference: d });
    }
  };
  apply(RULES);
  if (significantChange(durationA, durationB)) {
    const change = Math.abs(durationA! - durationB!);
    apply([
      ['duration', 1, 'header', (d) => d.kind === 'field' && d.group === 'build' && d.name === 'duration'],
      ['tasks', 2, 'header', (d) => d.kind === 'field' && d.group === 'counts' && (d.name === 'tasks' || d.name === 'tasks avoided')],
      ['slower-task', 3, 'tasks', (d) => d.kind === 'task-duration' && Math.abs(d.after - d.before) >= Math.max(100, 0.1 * change)],
    ]);
  }
  apply(ENVIRONMENT_RULES);
  return out.slice(0, MAX_SUMMARY);
}
