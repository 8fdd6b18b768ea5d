// The tasks of a build, read from its TaskStarted/TaskFinished events: one row per finished task
// (path, outcome, start offset and duration). The ingest writes them to build_tasks so that
// trends (task avoidance, slowest and failing tasks) are computed in the database; the build page
// reads the same rows from the events themselves.

import type { BuildEvent, CountedTaskOutcome, TaskOutcome } from '../types.js';

// Declared with the store's API, whose trends count tasks by it.
export type { CountedTaskOutcome, TaskOutcome } from '../types.js';

export const TASK_OUTCOMES: readonly TaskOutcome[] = ['executed', 'up-to-date', 'from-cache', 'skipped', 'no-source', 'failed'];

/**
 * The outcomes trends count tasks by, one column each (build_task_counts, the rollups): every
 * outcome but `no-source`, which is counted as `skipped` (countedOutcome).
 */
export const COUNTED_TASK_OUTCOMES: readonly CountedTaskOutcome[] = ['executed', 'up-to-date', 'from-cache', 'skipped', 'failed'];

/** The trend count an outcome adds to. */
export function countedOutcome(outcome: TaskOutcome): CountedTaskOutcome {
  return outcome === 'no-source' ? 'skipped' : outcome;
}

/**
 * The code build_tasks.outcome stores for each outcome (store migration 0012). Frozen: stored rows
 * carry these numbers, so a code is never changed or reused; a new outcome takes a new code.
 */
export const TASK_OUTCOME_CODES: Readonly<Record<TaskOutcome, number>> = Object.freeze({
  executed: 0,
  'up-to-date': 1,
  'from-cache': 2,
  skipped: 3,
  failed: 4,
  'no-source': 5,
});

/** The outcomes whose tasks ran (trends count their runs and durations): their codes, as an SQL list. */
export const RAN_OUTCOME_CODES = `(${TASK_OUTCOME_CODES.executed}, ${TASK_OUTCOME_CODES.failed})`;

/** Columns of build_task_counts, one per outcome in COUNTED_TASK_OUTCOMES order. */
export const TASK_COUNT_COLUMNS: readonly string[] = COUNTED_TASK_OUTCOMES.map((o) => o.replace(/-/g, '_'));

/** Outcomes in which the task's work was avoided (not run, its outputs reused). */
export const AVOIDED_OUTCOMES: readonly CountedTaskOutcome[] = ['up-to-date', 'from-cache'];

/**
 * The tools say the same things in other words (Gradle `SUCCESS`, `NO-SOURCE`; Maven's mojo
 * `Succeeded`); anything unknown counts as executed, because the task ran as far as we can tell.
 * A build stored before `no-source` was an outcome of its own has its NO-SOURCE tasks stored as
 * `skipped` in build_tasks; pages read the events, so they show `no-source` for it too.
 */
export function taskOutcome(raw: unknown): TaskOutcome {
  const s = typeof raw === 'string' ? raw.trim().toLowerCase().replace(/[_\s]+/g, '-') : '';
  switch (s) {
    case 'up-to-date':
    case 'uptodate':
      return 'up-to-date';
    case 'from-cache':
    case 'fromcache':
    case 'cached':
      return 'from-cache';
    case 'skipped':
      return 'skipped';
    case 'no-source':
    case 'nosource':
      return 'no-source';
    case 'failed':
    case 'failure':
      return 'failed';
    default:
      return 'executed';
  }
}

export interface TaskRow {
  readonly path: string;
  readonly outcome: TaskOutcome;
  /** Milliseconds after the build's first event (its start). */
  readonly start: number;
  readonly duration: number;
  /** null when the event does not say. */
  readonly cacheable: boolean | null;
}

/**
 * Pairs TaskStarted and TaskFinished by `id` (by `path` when an event has no id). A finished task
 * without a start event starts when it finishes; a started task that never finishes is left out.
 */
export function tasksOf(events: readonly BuildEvent[]): TaskRow[] {
  const origin = events.length > 0 ? events[0]!.timestamp : 0;
  const started = new Map<string, number>();
  const out: TaskRow[] = [];
  const keyOf = (d: Readonly<Record<string, unknown>>): string | undefined => {
    const id = d['id'];
    if (typeof id === 'string' || typeof id === 'number') return `#${id}`;
    return typeof d['path'] === 'string' ? `p${d['path']}` : undefined;
  };
  for (const e of events) {
    const t = e.type.eventType;
    if (t !== 'TaskStarted' && t !== 'TaskFinished') continue;
    const key = keyOf(e.data);
    if (key === undefined) continue;
    if (t === 'TaskStarted') {
      started.set(key, e.timestamp);
      continue;
    }
    const path = typeof e.data['path'] === 'string' ? e.data['path'] : key.slice(1);
    const begin = started.get(key) ?? e.timestamp;
    started.delete(key);
    const cacheable = e.data['cacheable'];
    out.push({
      path,
      outcome: taskOutcome(e.data['outcome']),
      start: begin - origin,
      duration: Math.max(0, e.timestamp - begin),
      cacheable: typeof cacheable === 'boolean' ? cacheable : null,
    });
  }
  return out;
}
