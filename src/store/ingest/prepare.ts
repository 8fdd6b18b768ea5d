// The part of ingesting a line that needs no database: parse and validate it, encode its events
// for storage, hash its content and, when the line finishes its build, derive the build's
// attributes. A pure function of the line's text, so it can run in a worker thread
// (prepare-worker.ts) while the ingest writes the previous batch; what it returns is plain data
// (strings, numbers, arrays) that crosses threads cheaply.

import type { ToolType } from '../../query/catalog.js';
import { contentHash } from '../events/canonical.js';
import { deriveAttributes, type DerivedBuild } from '../events/derive.js';
import { encodeEvents, packAttributes, packEvents, unpackEvents } from '../events/event-codec.js';
import { textOf, type NumberedLine } from './lines.js';
import type { BuildEvent } from '../types.js';
import { redactIngestEvents } from './redact.js';
import { boundOutput, DEFAULT_OUTPUT_BOUNDS, type OutputBounds } from './output-bounds.js';
import { parseLine } from './validate.js';
import { tasksOf, type TaskOutcome } from '../events/tasks.js';
import { buildFailuresOf, testRunsOf, type FailureTuple, type TestRunTuple } from '../events/test-runs.js';

/** A build's derived attributes as the store writes them (the attributes as JSON text). */
export interface StoredDerivation {
  readonly columns: DerivedBuild['columns'];
  readonly values: DerivedBuild['values'];
  readonly customValues: DerivedBuild['customValues'];
  readonly project: string | null;
  readonly attributesJson: string;
  /**
   * The same, compressed as build_attributes stores it (event-codec.ts packAttributes): done where
   * the attributes are derived, which for a build of one line is the worker thread of a long
   * input, not the writer's thread (where it was ~9% of that thread's time at 1M builds).
   */
  readonly attributesPacked: Uint8Array;
  /** Rows of build_tasks without the seq: [path, outcome, start offset ms, duration ms, cacheable 0/1/null]. */
  readonly tasks: readonly TaskTuple[];
  /** Rows of test_runs without the seq and test id (store migration 0020, test-runs.ts). */
  readonly tests: readonly TestRunTuple[];
  /** The failure groups of the build's own failures (build_failures). */
  readonly failures: readonly FailureTuple[];
}

export type TaskTuple = readonly [path: string, outcome: TaskOutcome, start: number, duration: number, cacheable: number | null];

export interface PreparedRecord {
  readonly ok: true;
  readonly buildId: string | undefined;
  readonly toolType: ToolType;
  readonly toolVersion: string;
  readonly agentVersion: string;
  /**
   * The line's events in stored form (event-codec.ts). Absent in a record from the worker thread
   * (prepare-worker.ts), which sends the packed form only: the same text crossing back to the
   * ingest's thread was the largest of its allocations (docs/store.md, "Ingest performance"), and
   * the writer needs it only for a build sent in several lines, a line sent again with its JSON
   * in another order, or a store that does not compress (eventsJsonOf unpacks it then).
   */
  readonly eventsJson?: string;
  /**
   * The same, compressed as a chunk is stored (event-codec.ts packEvents): done here, in the
   * worker thread for long inputs, and not by the writer's thread, for which compressing was ~70 µs
   * of every build's ~450 µs (docs/store.md, "Checkpoints of a bulk load").
   */
  readonly eventsPacked: Uint8Array;
  readonly hash: string;
  readonly eventCount: number;
  /** Whether the line holds a BuildFinished event. */
  readonly finished: boolean;
  /** rootProjectName of the line's last ProjectStructure event (null if not a string); undefined without one. */
  readonly project: string | null | undefined;
  /** The attributes of a build made of this line alone; present when the line finishes it. */
  readonly derived: StoredDerivation | undefined;
}

export interface RejectedLine {
  readonly ok: false;
  readonly path: string;
  readonly error: string;
  readonly buildId?: string;
}

export type Prepared = PreparedRecord | RejectedLine;

export interface PreparedLine {
  readonly line: number;
  readonly prepared: Prepared;
}

/** A record's events in stored form, as prepared or unpacked (see PreparedRecord.eventsJson). */
export function eventsJsonOf(r: PreparedRecord): string {
  return r.eventsJson ?? chunkText(r.eventsPacked);
}

/** A chunk's events in stored form, from their text or their packed form. */
export function chunkText(events: string | Uint8Array): string {
  return typeof events === 'string' ? events : unpackEvents(events)!;
}

export function storedDerivation(header: { readonly toolType: ToolType; readonly toolVersion: string; readonly agentVersion: string }, events: readonly BuildEvent[]): StoredDerivation {
  const d = deriveAttributes(header, events);
  const tasks = tasksOf(events).map((t): TaskTuple => [t.path, t.outcome, t.start, t.duration, t.cacheable === null ? null : t.cacheable ? 1 : 0]);
  const attributesJson = JSON.stringify(d.attributes);
  return {
    columns: d.columns,
    values: d.values,
    customValues: d.customValues,
    project: d.project,
    attributesJson,
    attributesPacked: packAttributes(attributesJson),
    tasks,
    tests: testRunsOf(events),
    failures: buildFailuresOf(events),
  };
}

/** The last ProjectStructure event's rootProjectName: the rule of the `project` field. */
export function projectOf(events: readonly BuildEvent[]): string | null | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type.eventType !== 'ProjectStructure') continue;
    const p = e.data['rootProjectName'];
    return typeof p === 'string' ? p : null;
  }
  return undefined;
}

/**
 * `derive: false` leaves out the derivation (`derived` stays undefined), the one step that only
 * indexing needs; bench/ingest.ts measures what storing a line costs without it. `bounds` limit
 * the console log, test output and stack traces the line may carry (output-bounds.ts).
 */
export function prepareLine(text: string, { derive = true, bounds = DEFAULT_OUTPUT_BOUNDS }: { readonly derive?: boolean; readonly bounds?: OutputBounds } = {}): Prepared {
  const v = parseLine(text);
  if (!v.ok) return v;
  // Secrets are taken out of the free text before anything is stored, hashed or derived from it;
  // then the output is bounded (after, so that no secret is cut in half and so left unmatched).
  const events = boundOutput(redactIngestEvents(v.record.events), bounds);
  const r = events === v.record.events ? v.record : { ...v.record, events };
  const eventsJson = encodeEvents(r.events);
  const finished = r.events.some((e) => e.type.eventType === 'BuildFinished');
  return {
    ok: true,
    buildId: r.buildId,
    toolType: r.toolType,
    toolVersion: r.toolVersion,
    agentVersion: r.agentVersion,
    eventsJson,
    eventsPacked: packEvents(eventsJson),
    hash: contentHash(r, eventsJson),
    eventCount: r.events.length,
    finished,
    project: projectOf(r.events),
    derived: finished && derive ? storedDerivation(r, r.events) : undefined,
  };
}

export function prepareLines(lines: readonly NumberedLine[], bounds: OutputBounds = DEFAULT_OUTPUT_BOUNDS): PreparedLine[] {
  return lines.map((l) => ({ line: l.line, prepared: prepareLine(textOf(l), { bounds }) }));
}
