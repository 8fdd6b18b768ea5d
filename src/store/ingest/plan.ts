// Plans the writes of one batch of ingest lines, independently of the database: each line is
// validated, matched against the stored state of its build (loaded by the caller) and turned into
// row writes. The caller executes the writes of the batch in ONE transaction, so a build is never
// half-stored, and reports the lines' results only after the commit.

import type { ToolType } from '../../query/catalog.js';
import { valueFieldCode } from '../../sql/value-fields.js';
import { contentHash, joinEventArrays } from '../events/canonical.js';
import { hashBytes } from '../schema/hash-bytes.js';
import { ATTRIBUTE_COLUMNS, BOOKKEEPING_COLUMNS } from '../schema/columns.js';
import { canonicalEvents, decodeEvents } from '../events/event-codec.js';
import { chunkText, eventsJsonOf, storedDerivation, type PreparedLine, type PreparedRecord, type StoredDerivation } from './prepare.js';
import type { BuildEvent, IngestLineResult, Visibility } from '../types.js';
import { COUNTED_TASK_OUTCOMES, countedOutcome, TASK_OUTCOME_CODES } from '../events/tasks.js';
import type { FailureTuple, TestRunTuple } from '../events/test-runs.js';
import { projectVisible, seesEverything } from '../search/visibility.js';
import { MAX_BUILD_PARTS } from '../schema/events-rowid.js';

/** What the database knows of a build before the batch. */
export interface StoredBuild {
  readonly id: string;
  readonly toolType: ToolType;
  readonly toolVersion: string;
  readonly agentVersion: string;
  readonly seq: number | null;
  /** The key of its events (store migration 0014); kept by every later part of the build. */
  readonly eventsKey: number;
  readonly contentHash: string;
  readonly chunkHashes: readonly string[];
  /** The encoded events of each chunk (event-codec.ts). */
  readonly chunkEvents: readonly string[];
  readonly receivedAt: number;
  /** Project of the build as far as its events tell (original case), or null. */
  readonly project: string | null;
}

/**
 * A builds row: values in BUILD_ROW_COLUMNS order (an array: ingest builds many of them); the
 * content hash as its bytes (store migration 0017).
 */
export type BuildRow = (string | number | Uint8Array | null)[];

export interface ChunkRow {
  readonly events_key: number;
  readonly chunk: number;
  /** The content hash's bytes (store migration 0017). */
  readonly hash: Uint8Array;
  readonly event_count: number;
  /** The events' text, when the line was prepared in this thread (PreparedRecord.eventsJson); chunkRowText. */
  readonly events: string | undefined;
  /** The events compressed (prepare.ts). */
  readonly packed: Uint8Array;
}

/**
 * A task row to write: [seq, ord (the task's position in its build), path, outcome code
 * (TASK_OUTCOME_CODES), start offset ms, duration ms, cacheable 0/1/null].
 */
export type TaskWrite = readonly [seq: number, ord: number, path: string, outcome: number, start: number, duration: number, cacheable: number | null];

/**
 * A test run to write (store migration 0020): [seq, ord, test identity (tool, project, suite,
 * name, parameters; test-runs.ts testKeyOf makes its key), outcome code, attempt, start ms,
 * duration ms, failure group or null]. The writer stores the test's and the group's dictionary ids.
 */
export type TestRunWrite = readonly [
  seq: number,
  ord: number,
  identity: readonly [tool: string, project: string | null, suite: string, name: string, parameters: string],
  outcome: number,
  attempt: number,
  start: number,
  duration: number,
  failure: FailureTuple | null,
];

export interface BatchWrites {
  readonly insertBuilds: BuildRow[];
  readonly updateBuilds: BuildRow[];
  readonly chunks: ChunkRow[];
  /** Rows of build_values: [seq, field code (sql/value-fields.ts), value]. */
  readonly values: (readonly [number, number, string])[];
  /** Rows of build_custom_values: [seq, name, value]. */
  readonly customValues: (readonly [number, string, string])[];
  /** Rows of build_attributes: [seq, attributes JSON, the same compressed]; the builds row keeps '{}' (migration 0002). */
  readonly attributes: (readonly [number, string, Uint8Array])[];
  /** Rows of build_tasks (store migrations 0005, 0012), the path as text: the writer stores its dictionary id. */
  readonly tasks: TaskWrite[];
  /** Rows of build_task_counts: [seq, then the number of tasks of each COUNTED_TASK_OUTCOMES outcome] (0005). */
  readonly taskCounts: (readonly number[])[];
  /** Rows of test_runs (store migration 0020). */
  readonly testRuns: TestRunWrite[];
  /** Rows of build_failures: [seq, ord, failure group] (0020). */
  readonly buildFailures: (readonly [number, number, FailureTuple])[];
  /** The builds with test runs or failures, with their start (or null): each one's row of test_packs (0024). */
  readonly testBuilds: (readonly [seq: number, start: number | null])[];
  /** Highest seq assigned in the batch, or 0. */
  maxSeq: number;
  /** Highest events_key assigned in the batch, or the context's `lastEventsKey` when none was. */
  lastEventsKey: number;
}

interface WorkingBuild {
  readonly id: string;
  readonly toolType: ToolType;
  readonly toolVersion: string;
  readonly agentVersion: string;
  readonly inDatabase: boolean;
  readonly eventsKey: number;
  seq: number | null;
  availableAt: number | null;
  contentHash: string;
  readonly chunkHashes: string[];
  /** The encoded events of each chunk, as text or packed (chunkText): packed as the worker thread sends them. */
  readonly chunkEvents: (string | Uint8Array)[];
  /** Parsed events of this batch's chunks (older chunks are parsed from chunkEvents on finish). */
  readonly receivedAt: number;
  /** Known before the build is complete too, so visibility applies to incomplete builds. */
  project: string | null;
  derived?: StoredDerivation;
  dirty: boolean;
}

export interface PlanContext {
  /** The stored state of a build, or undefined when it does not exist. */
  readonly load: (id: string) => StoredBuild | undefined;
  readonly now: () => number;
  readonly newId: () => string;
  /** Highest seq stored before this batch. */
  readonly maxSeq: number;
  /**
   * The last events_key handed out before this batch (events_key_counter, store migration 0014):
   * a new build gets the next one, so its chunks are appended in arrival order.
   */
  readonly lastEventsKey: number;
  /**
   * What the publisher may see; absent: everything. A publisher restricted to projects appends
   * only to builds she may see, names no new build's ID, and never moves a build into or out of
   * a project she may not see (docs/store.md, "Publishers restricted to projects").
   */
  readonly visibility?: Visibility;
}

/**
 * The one answer to a restricted publisher whose line names a build ID she may not use: the same
 * words whether the build does not exist or exists out of her sight, and nothing of the stored
 * build (state, header, content, project).
 */
export function unusableBuildId(id: string): string {
  return `Build ${id} is not a build you may append to; leave buildId out to start a new build (the server assigns its ID)`;
}

function projectRefusal(project: string | null, v: Visibility): string {
  const allowed = v.projects === 'all' ? 'any project' : v.projects.length === 0 ? 'no project' : `projects ${v.projects.map((p) => JSON.stringify(p)).join(', ')}`;
  const which = project === null ? 'no project' : `project ${JSON.stringify(project)}`;
  return `This line would leave the build with ${which}; you may publish builds of ${allowed}${v.withoutProject ? ' or without a project' : ''}`;
}

/** Where a build's start is among its derived columns. */
const START_COLUMN = ATTRIBUTE_COLUMNS.findIndex((c) => c.column === 'buildstarttime');

const numberOrNull = (v: string | number | null | undefined): number | null => (v === null || v === undefined ? null : Number(v));

/** The test dimension's rows of the build: TestRunWrite and build_failures rows, each numbered `ord` in the build. */
export type TestWrites = Pick<BatchWrites, 'testRuns' | 'buildFailures' | 'testBuilds'>;

/**
 * Adds a build's test runs and own failures (test-runs.ts) to `writes`, its tests named by identity
 * (the build's tool and project): the one mapping of the ingest and of migration 0021's backfill.
 */
export function addTestWrites(writes: TestWrites, seq: number, start: number | null, toolType: string, project: string | null, tests: readonly TestRunTuple[], failures: readonly FailureTuple[]): void {
  if (tests.length > 0 || failures.length > 0) writes.testBuilds.push([seq, start]);
  tests.forEach(([suite, name, parameters, outcome, attempt, start, duration, failure], ord) => {
    writes.testRuns.push([seq, ord, [toolType, project, suite, name, parameters], outcome, attempt, start, duration, failure]);
  });
  failures.forEach((f, ord) => writes.buildFailures.push([seq, ord, f]));
}

/** The answer to a part beyond the most a build may be stored in (MAX_BUILD_PARTS). */
export function tooManyParts(id: string): string {
  return `Build ${id} is stored in ${MAX_BUILD_PARTS} parts already, the most a build may have; send the rest of its events in fewer, larger lines`;
}

const HEADER_KEYS = ['toolType', 'toolVersion', 'agentVersion'] as const;

export function planBatch(lines: readonly PreparedLine[], ctx: PlanContext): { results: IngestLineResult[]; writes: BatchWrites } {
  const planner = new BatchPlanner(ctx);
  const results = lines.map((l) => planner.plan(l));
  return { results, writes: planner.finished() };
}

/**
 * The state of one batch's plan: the builds it touched (loaded once each) and the writes so far.
 * Each line is answered in turn (`plan`), against the builds as the lines before it left them.
 */
class BatchPlanner {
  readonly #working = new Map<string, WorkingBuild>();
  readonly #writes: BatchWrites;
  #nextSeq: number;
  /** The publisher's sight when restricted to projects. */
  readonly #restricted: Visibility | undefined;

  constructor(private readonly ctx: PlanContext) {
    this.#writes = { insertBuilds: [], updateBuilds: [], chunks: [], values: [], customValues: [], attributes: [], tasks: [], taskCounts: [], testRuns: [], buildFailures: [], testBuilds: [], maxSeq: 0, lastEventsKey: ctx.lastEventsKey };
    this.#nextSeq = ctx.maxSeq + 1;
    const v = ctx.visibility;
    this.#restricted = v !== undefined && !seesEverything(v) ? v : undefined;
  }

  /** The result of one line, its writes added to the batch's. */
  plan({ line, prepared: r }: PreparedLine): IngestLineResult {
    if (!r.ok) {
      return r.buildId === undefined ? { line, status: 'rejected', error: r.error, path: r.path } : { line, status: 'rejected', error: r.error, path: r.path, buildId: r.buildId };
    }
    const id = r.buildId ?? this.ctx.newId();
    const b = this.#build(id, r);
    const restricted = this.#restricted;
    if (restricted !== undefined && r.buildId !== undefined && (b === undefined || !projectVisible(restricted, b.project))) {
      // Before anything else of the stored build is looked at: a build out of her sight gets the
      // answer an unknown ID gets, and a restricted publisher never picks a new build's ID (else
      // "stored" against "refused" would tell whether the ID exists).
      return { line, status: 'rejected', buildId: id, path: '$.buildId', error: unusableBuildId(id) };
    }
    if (b === undefined) return this.#newBuild(line, id, r);
    const refusal = this.#refusal(b, r);
    if (refusal !== undefined) return { line, status: 'rejected', buildId: id, ...refusal };
    if (r.hash === b.contentHash || b.chunkHashes.includes(r.hash)) return { line, status: 'unchanged', buildId: id, complete: b.seq !== null };
    // Unpacked once (a record from the worker thread holds its events packed only).
    const text = eventsJsonOf(r);
    if (sameContent(b, text)) return { line, status: 'unchanged', buildId: id, complete: b.seq !== null };
    if (b.seq !== null) {
      return { line, status: 'rejected', buildId: id, path: '$.events', error: `Build ${id} is already stored and finished with other content; a finished build cannot be changed` };
    }
    if (restricted !== undefined && r.project !== undefined && !projectVisible(restricted, r.project)) {
      // The build is hers to see (checked above); this line would move it out of her sight.
      return { line, status: 'rejected', buildId: id, path: '$.events', error: projectRefusal(r.project, restricted) };
    }
    if (b.chunkHashes.length >= MAX_BUILD_PARTS) {
      // The part's number would not fit the key of its row (events-rowid.ts); same on both databases.
      return { line, status: 'rejected', buildId: id, path: '$.events', error: tooManyParts(id) };
    }
    // Append to an incomplete build.
    this.#addChunk(b, r, text);
    b.contentHash = contentHash(b, joinEventArrays(chunkTexts(b)));
    if (r.finished) {
      const all: BuildEvent[] = [];
      for (const c of chunkTexts(b)) for (const e of decodeEvents(c)) all.push(e);
      this.#finish(b, storedDerivation(b, all));
    }
    return { line, status: 'stored', buildId: id, complete: b.seq !== null };
  }

  /** The build as this batch knows it: from an earlier line, else as stored (loaded once), else none. */
  #build(id: string, r: PreparedRecord): WorkingBuild | undefined {
    const known = this.#working.get(id);
    if (known !== undefined || r.buildId === undefined) return known;
    const stored = this.ctx.load(id);
    if (stored === undefined) return undefined;
    const b: WorkingBuild = { ...stored, inDatabase: true, availableAt: null, chunkHashes: [...stored.chunkHashes], chunkEvents: [...stored.chunkEvents], dirty: false };
    this.#working.set(id, b);
    return b;
  }

  /** A line whose header differs from the stored build's: the first differing key and why. */
  #refusal(b: WorkingBuild, r: PreparedRecord): { path: string; error: string } | undefined {
    const mismatch = HEADER_KEYS.find((k) => b[k] !== r[k]);
    if (mismatch === undefined) return undefined;
    return { path: `$.${mismatch}`, error: `Build ${b.id} was stored with ${mismatch} ${JSON.stringify(b[mismatch])}; this line says ${JSON.stringify(r[mismatch])}` };
  }

  #newBuild(line: number, id: string, r: PreparedRecord): IngestLineResult {
    const restricted = this.#restricted;
    if (restricted !== undefined) {
      const project = r.derived !== undefined ? r.derived.project : (r.project ?? null);
      if (!projectVisible(restricted, project)) return { line, status: 'rejected', path: '$.events', error: projectRefusal(project, restricted) };
    }
    const b: WorkingBuild = {
      id,
      toolType: r.toolType,
      toolVersion: r.toolVersion,
      agentVersion: r.agentVersion,
      inDatabase: false,
      eventsKey: ++this.#writes.lastEventsKey,
      seq: null,
      availableAt: null,
      contentHash: r.hash,
      chunkHashes: [],
      chunkEvents: [],
      receivedAt: this.ctx.now(),
      project: null,
      dirty: true,
    };
    this.#working.set(id, b);
    this.#addChunk(b, r);
    // A new build: the line's own events are all of it, derived already (prepare.ts).
    if (r.derived !== undefined) this.#finish(b, r.derived);
    return { line, status: 'stored', buildId: id, complete: b.seq !== null };
  }

  /** `text`: the record's events as text, where the caller has unpacked them already. */
  #addChunk(b: WorkingBuild, r: PreparedRecord, text?: string): void {
    // Same rule as the `project` field: the last ProjectStructure event decides.
    if (r.project !== undefined) b.project = r.project;
    this.#writes.chunks.push({ events_key: b.eventsKey, chunk: b.chunkHashes.length, hash: hashBytes(r.hash), event_count: r.eventCount, events: r.eventsJson, packed: r.eventsPacked });
    b.chunkHashes.push(r.hash);
    b.chunkEvents.push(text ?? r.eventsJson ?? r.eventsPacked);
    b.dirty = true;
  }

  /** A complete build: available now, with the rows derived from all its events. */
  #finish(b: WorkingBuild, derived: StoredDerivation): void {
    const writes = this.#writes;
    b.derived = derived;
    const seq = (b.seq = this.#nextSeq++);
    b.availableAt = this.ctx.now();
    writes.maxSeq = seq;
    for (const [field, value] of derived.values) writes.values.push([seq, valueFieldCode(field), value]);
    for (const [name, value] of derived.customValues) writes.customValues.push([seq, name, value]);
    writes.attributes.push([seq, derived.attributesJson, derived.attributesPacked]);
    const counts = COUNTED_TASK_OUTCOMES.map(() => 0);
    derived.tasks.forEach(([path, outcome, start, duration, cacheable], ord) => {
      writes.tasks.push([seq, ord, path, TASK_OUTCOME_CODES[outcome], start, duration, cacheable]);
      counts[COUNTED_TASK_OUTCOMES.indexOf(countedOutcome(outcome))]! += 1;
    });
    writes.taskCounts.push([seq, ...counts]);
    addTestWrites(writes, seq, numberOrNull(derived.columns[START_COLUMN]), b.toolType, derived.project, derived.tests, derived.failures);
  }

  /** The batch's writes, with a builds row for every build a line changed. */
  finished(): BatchWrites {
    for (const b of this.#working.values()) if (b.dirty) (b.inDatabase ? this.#writes.updateBuilds : this.#writes.insertBuilds).push(buildRow(b));
    return this.#writes;
  }
}

function buildRow(b: WorkingBuild): BuildRow {
  const row: BuildRow = [
    b.id,
    b.seq,
    b.availableAt,
    b.toolType,
    b.toolVersion,
    b.agentVersion,
    b.derived ? b.derived.project : b.project,
    hashBytes(b.contentHash),
    // The attributes JSON lives in build_attributes (keyed by seq): searches that read a builds
    // row (to check a column) then touch far fewer pages.
    '{}',
    b.receivedAt,
    b.eventsKey,
  ];
  const cols = b.derived?.columns;
  for (let i = 0; i < ATTRIBUTE_COLUMNS.length; i++) row.push(cols ? cols[i]! : null);
  return row;
}

/**
 * Whether the line repeats the build or one of its parts with the same meaning but other JSON
 * (key order): the hashes are over the JSON as sent, so this slower check runs only when they differ.
 */
function sameContent(b: WorkingBuild, eventsJson: string): boolean {
  const line = canonicalEvents(eventsJson);
  const texts = chunkTexts(b);
  if (texts.some((c) => canonicalEvents(c) === line)) return true;
  return texts.length > 1 && canonicalEvents(joinEventArrays(texts)) === line;
}

/**
 * The texts of a build's chunks, each packed one unpacked once and kept as text from then on: a
 * build sent in several lines is read whole again at each of its lines (sameContent, its content
 * hash, its events when it finishes).
 */
function chunkTexts(b: WorkingBuild): string[] {
  const chunks = b.chunkEvents;
  for (let i = 0; i < chunks.length; i++) chunks[i] = chunkText(chunks[i]!);
  return chunks as string[];
}

/** A chunk row's events as text: as prepared in this thread, else unpacked (the writers of a store that does not compress). */
export function chunkRowText(c: ChunkRow): string {
  return c.events ?? chunkText(c.packed);
}

/** Names of the builds columns, in the order rows are written. */
export const BUILD_ROW_COLUMNS: readonly string[] = [...BOOKKEEPING_COLUMNS, ...ATTRIBUTE_COLUMNS.map((c) => c.column)];
