// The shape of a comparison of two builds (compare.ts makes it): the kinds of difference, the
// sections, the summary, each build's header. Types and the one function every reader of a
// difference needs (swapping the builds); the web page imports the types from here.

import type { BuildFacts, FailureFacts, Scalar, TaskFacts, TaskOutcome, TestFacts, TestOutcome } from './build-facts.js';
import { swapInputs, type InputsDifference } from './task-inputs.js';

export type { FailureFacts, Scalar, TaskFacts, TaskOutcome, TestFacts, TestOutcome } from './build-facts.js';
export type { Change, FileChange, InputChange, InputsDifference, MissCause } from './task-inputs.js';

/** Groups of single values: the header's, and those of what was asked. */
export type FieldGroup = 'build' | 'counts' | 'git' | 'environment' | 'options' | 'cache' | 'settings' | 'values';
/** Groups of lists compared as sets. */
export type ListGroup = 'requested' | 'tags' | 'configurations';

/**
 * One difference. Every kind is handled by an exhaustive switch (swapDifference here, the page's
 * rendering), so a new kind fails to compile until each place knows it. `task-inputs` is a task
 * whose recorded cache key differs (task-inputs.ts): the inputs whose values or file hashes differ
 * and why; `missed` when it came from the cache or was up to date in one build and ran in the other.
 * `dependency` is a module of a configuration both builds resolved (dependencies.ts) at another
 * version, or in one build only (null on the other side).
 */
export type Difference =
  | { readonly kind: 'field'; readonly group: FieldGroup; readonly name: string; readonly before: Scalar; readonly after: Scalar }
  | { readonly kind: 'list'; readonly group: ListGroup; readonly name: string; readonly added: readonly string[]; readonly removed: readonly string[] }
  | { readonly kind: 'task-added'; readonly task: TaskFacts }
  | { readonly kind: 'task-removed'; readonly task: TaskFacts }
  | { readonly kind: 'task-outcome'; readonly path: string; readonly occurrence: number; readonly before: TaskOutcome; readonly after: TaskOutcome }
  | { readonly kind: 'task-duration'; readonly path: string; readonly occurrence: number; readonly before: number; readonly after: number }
  | { readonly kind: 'task-cacheable'; readonly path: string; readonly occurrence: number; readonly before: boolean | null; readonly after: boolean | null }
  | ({ readonly kind: 'task-inputs'; readonly path: string; readonly occurrence: number; readonly missed: boolean } & InputsDifference)
  | { readonly kind: 'test-added'; readonly test: TestFacts }
  | { readonly kind: 'test-removed'; readonly test: TestFacts }
  | { readonly kind: 'test-outcome'; readonly suite: string; readonly name: string; readonly parameters?: string; readonly before: TestOutcome | null; readonly after: TestOutcome | null }
  | { readonly kind: 'test-duration'; readonly suite: string; readonly name: string; readonly parameters?: string; readonly before: number; readonly after: number }
  | { readonly kind: 'failure-added'; readonly failure: FailureFacts }
  | { readonly kind: 'failure-removed'; readonly failure: FailureFacts }
  | { readonly kind: 'dependency'; readonly project: string; readonly configuration: string; readonly module: string; readonly before: string | null; readonly after: string | null };

export type DifferenceKind = Difference['kind'];

export const SECTION_IDS = ['header', 'asked', 'tasks', 'dependencies', 'tests', 'failures'] as const;
export type SectionId = (typeof SECTION_IDS)[number];

export interface Section {
  readonly id: SectionId;
  /** How many things were compared: fields, tasks, modules or tests present in either build, failures. */
  readonly compared: number;
  readonly differences: readonly Difference[];
}

/** Why a difference is in the summary (compare-summary.ts says how each is chosen). */
export const SUMMARY_REASONS = ['outcome', 'failing-task', 'failing-test', 'failure', 'requested', 'tool', 'git', 'dependency', 'cache-miss', 'duration', 'tasks', 'slower-task', 'environment', 'options'] as const;
export type SummaryReason = (typeof SUMMARY_REASONS)[number];

export interface SummaryEntry {
  readonly reason: SummaryReason;
  readonly difference: Difference;
}

/** A build's header as the comparison shows it above the differences: its facts' header, CI and git, and counts. */
export type BuildSide = Pick<BuildFacts, 'id' | 'project' | 'tool' | 'toolVersion' | 'agentVersion' | 'outcome' | 'start' | 'duration' | 'user' | 'host'> & {
  readonly ciProvider: string | null;
  readonly ciBuild: string | null;
  readonly gitBranch: string | null;
  readonly gitCommit: string | null;
  readonly tasks: number;
  readonly tests: number;
};

export interface Comparison {
  readonly a: BuildSide;
  readonly b: BuildSide;
  /** No section has a difference. */
  readonly identical: boolean;
  /** The few differences most likely to explain the difference in outcome or duration, first. */
  readonly summary: readonly SummaryEntry[];
  /** Every difference, in SECTION_IDS order; a section without differences is identical. */
  readonly sections: readonly Section[];
}

/** The same difference seen from the other build: before and after, added and removed exchanged. */
export function swapDifference(d: Difference): Difference {
  switch (d.kind) {
    case 'field':
      return { ...d, before: d.after, after: d.before };
    case 'list':
      return { ...d, added: d.removed, removed: d.added };
    case 'task-added':
      return { kind: 'task-removed', task: d.task };
    case 'task-removed':
      return { kind: 'task-added', task: d.task };
    case 'task-outcome':
      return { ...d, before: d.after, after: d.before };
    case 'task-duration':
      return { ...d, before: d.after, after: d.before };
    case 'task-cacheable':
      return { ...d, before: d.after, after: d.before };
    case 'task-inputs':
      return { ...d, ...swapInputs(d) };
    case 'test-added':
      return { kind: 'test-removed', test: d.test };
    case 'test-removed':
      return { kind: 'test-added', test: d.test };
    case 'test-outcome':
      return { ...d, before: d.after, after: d.before };
    case 'test-duration':
      return { ...d, before: d.after, after: d.before };
    case 'failure-added':
      return { kind: 'failure-removed', failure: d.failure };
    case 'failure-removed':
      return { kind: 'failure-added', failure: d.failure };
    case 'dependency':
      return { ...d, before: d.after, after: d.before };
  }
}
