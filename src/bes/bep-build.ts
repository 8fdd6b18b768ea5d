// Turns one Bazel invocation's Build Event Protocol stream into a Buildscope `targetbuild` build.
// Both inputs give the same shape: the JSON event file (`--build_event_json_file`, proto3 JSON
// with camelCase names, 64-bit numbers as strings) and the gRPC stream (decoded with the same
// names, 64-bit numbers as strings, enums by name). See docs/send-your-builds.md for the mapping.
// The server's side of Bazel (the Build Event Service endpoint, ./server.ts) owns the conversion;
// `buildscope ingest-bep` (src/agents/bazel/ingest-bep.ts) runs the same one on the build machine.

import type { BuildEvent } from '../store/types.js';
import { event, packageVersion, type AgentBuild } from '../agents/common-build.js';
import { testEvents, type ReadUri, type TestAttempt } from './bep-tests.js';
import { agentContract, fieldsLeftOut, redactedWords } from '../agents/contract.js';
import { BoundedConsole } from '../agents/bounded-console.js';

/** A `build_event_stream.BuildEvent` as a plain object (only the parts read here are typed). */
export interface BepEvent {
  readonly id?: Record<string, Record<string, unknown> | undefined>;
  readonly lastMessage?: boolean;
  readonly [payload: string]: unknown;
}

/** One event and, when the transport says (gRPC `event_time`), when it happened. */
export interface TimedBepEvent {
  readonly event: BepEvent;
  readonly time?: number;
}

export class BepError extends Error {
  override readonly name = 'BepError';
}

type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown): number | undefined => {
  const n = typeof v === 'string' ? Number(v) : typeof v === 'number' ? v : Number.NaN;
  return Number.isFinite(n) ? n : undefined;
};
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Test statuses (`TestStatus`) that fail a test; the others pass or say nothing. */
const FAILED_TEST_STATUSES = new Set(['FAILED', 'TIMEOUT', 'INCOMPLETE', 'REMOTE_FAILURE', 'FAILED_TO_BUILD', 'TOOL_HALTED_BEFORE_TESTING']);
/** `Aborted` reasons that are not failures: the user asked for no analysis or build, or skipped targets. */
const BENIGN_ABORTS = new Set(['NO_ANALYZE', 'NO_BUILD', 'SKIPPED']);

interface Target {
  label: string;
  kind?: string;
  test: boolean;
  configuredAt?: number;
  completedAt?: number;
  success?: boolean;
  testStatus?: string;
  cachedLocally?: boolean;
  testStart?: number;
  testDuration?: number;
}

/**
 * The build of one invocation. `buildId` is the Buildscope ID to store it under (derived from the
 * invocation ID by the caller, so that a re-sent stream is the same build).
 */
export function bepToBuild(events: readonly TimedBepEvent[], buildId: string, options: { readonly readUri?: ReadUri } = {}): AgentBuild {
  let started: Obj | undefined;
  let startedAt: number | undefined;
  let finished: Obj | undefined;
  let finishedAt: number | undefined;
  const patterns: string[] = [];
  const workspaceStatus = new Map<string, string>();
  const metadata = new Map<string, string>();
  const targets = new Map<string, Target>();
  const attempts: TestAttempt[] = [];
  const aborts: string[] = [];
  // The `progress` events' text, each with its event's time when the stream gave one, bounded as
  // every agent bounds its console.
  const consoleText = new BoundedConsole<number | undefined>();
  let lastTime: number | undefined;

  const target = (label: string): Target => {
    let t = targets.get(label);
    if (t === undefined) {
      t = { label, test: false };
      targets.set(label, t);
    }
    return t;
  };

  for (const { event: e, time } of events) {
    if (time !== undefined) lastTime = time;
    const id = obj(e.id);
    if (e['progress'] !== undefined) {
      const progress = obj(e['progress']);
      // One event holds both streams and not their interleaving: Bazel 4 writes its INFO/ERROR and
      // FAIL lines to stderr and the test summary that follows them to stdout, so stderr comes first.
      for (const stream of ['stderr', 'stdout'] as const) consoleText.add(stream, str(progress[stream]) ?? '', time);
    } else if (e['started'] !== undefined) {
      started = obj(e['started']);
      startedAt = num(started['startTimeMillis']) ?? timestampMillis(started['startTime']) ?? time;
    } else if (id['pattern'] !== undefined && e['expanded'] !== undefined) {
      for (const p of arr(obj(id['pattern'])['pattern'])) if (typeof p === 'string') patterns.push(p);
    } else if (e['workspaceStatus'] !== undefined) {
      for (const item of arr(obj(e['workspaceStatus'])['item'])) {
        const { key, value } = obj(item);
        if (typeof key === 'string' && typeof value === 'string') workspaceStatus.set(key, value);
      }
    } else if (e['buildMetadata'] !== undefined) {
      for (const [k, v] of Object.entries(obj(obj(e['buildMetadata'])['metadata']))) if (typeof v === 'string') metadata.set(k, v);
    } else if (e['configured'] !== undefined) {
      const label = str(obj(id['targetConfigured'])['label']);
      if (label !== undefined) {
        const t = target(label);
        const configured = obj(e['configured']);
        t.kind = str(configured['targetKind']);
        t.test = t.test || (t.kind?.endsWith(' test') ?? false) || /_test rule$/.test(t.kind ?? '') || configured['testSize'] !== undefined;
        t.configuredAt = time;
      }
    } else if (e['completed'] !== undefined) {
      const label = str(obj(id['targetCompleted'])['label']);
      if (label !== undefined) {
        const t = target(label);
        t.success = obj(e['completed'])['success'] === true;
        t.completedAt = time;
      }
    } else if (e['testResult'] !== undefined) {
      const label = str(obj(id['testResult'])['label']);
      if (label !== undefined) {
        const t = target(label);
        const r = obj(e['testResult']);
        t.test = true;
        t.cachedLocally = r['cachedLocally'] === true;
        t.testStart = num(r['testAttemptStartMillisEpoch']);
        t.testDuration = num(r['testAttemptDurationMillis']);
        t.testStatus ??= str(r['status']);
        const at = obj(id['testResult']);
        const outputs = new Map<string, string>();
        for (const f of arr(r['testActionOutput'])) {
          const { name, uri } = obj(f);
          if (typeof name === 'string' && typeof uri === 'string') outputs.set(name, uri);
        }
        attempts.push({
          label,
          run: num(at['run']) ?? 1,
          shard: num(at['shard']) ?? 1,
          attempt: num(at['attempt']) ?? 1,
          status: str(r['status']),
          start: t.testStart,
          duration: t.testDuration,
          cached: t.cachedLocally,
          outputs,
        });
      }
    } else if (e['testSummary'] !== undefined) {
      const label = str(obj(id['testSummary'])['label']);
      if (label !== undefined) {
        const t = target(label);
        t.test = true;
        t.testStatus = str(obj(e['testSummary'])['overallStatus']) ?? t.testStatus;
      }
    } else if (e['aborted'] !== undefined) {
      const a = obj(e['aborted']);
      const reason = str(a['reason']) ?? 'UNKNOWN';
      if (!BENIGN_ABORTS.has(reason)) {
        const about = str(obj(Object.values(id)[0])['label']);
        aborts.push(`${about ?? 'Build'} aborted (${reason})${str(a['description']) ? `: ${str(a['description'])}` : ''}`);
      }
    } else if (e['finished'] !== undefined) {
      finished = obj(e['finished']);
      finishedAt = num(finished['finishTimeMillis']) ?? timestampMillis(finished['finishTime']) ?? time;
    }
  }

  if (started === undefined) throw new BepError('The event stream has no BuildStarted event (started); is it a Bazel build event stream?');
  if (finished === undefined) throw new BepError('The event stream has no BuildFinished event (finished): the invocation did not end, or the stream was cut short');
  const start = startedAt ?? Date.now();
  const end = finishedAt ?? lastTime ?? start;

  const out: BuildEvent[] = [];
  out.push(event('BuildStarted', {}, start));
  const user = metadata.get('USER') ?? workspaceStatus.get('BUILD_USER');
  const host = metadata.get('HOST') ?? workspaceStatus.get('BUILD_HOST');
  // Redaction on request, with every agent's words (agent-contract.json): --build_metadata=BUILDSCOPE_REDACT=user,hostname (or all).
  const leftOut = fieldsLeftOut(redactedWords({ systemProperties: {}, environment: { BUILDSCOPE_REDACT: metadata.get('BUILDSCOPE_REDACT') }, file: {} }));
  const agent: Record<string, unknown> = {};
  if (user && !leftOut.has('username')) agent['username'] = user;
  if (host && !leftOut.has('publicHostname')) {
    agent['publicHostname'] = host;
    agent['localHostname'] = host;
  }
  out.push(event('BuildAgent', agent, start));
  const project = metadata.get('PROJECT') ?? lastPathSegment(str(started['workspaceDirectory']));
  if (project) out.push(event('ProjectStructure', { rootProjectName: project }, start));
  const command = str(started['command']);
  out.push(
    event(
      'BuildRequestedTasks',
      { requested: patterns.filter((p) => !p.startsWith('-')), excluded: patterns.filter((p) => p.startsWith('-')).map((p) => p.slice(1)), ...(command ? { command } : {}) },
      start,
    ),
  );
  const os = workspaceStatus.get('BUILD_OS') ?? metadata.get('OS');
  if (os) out.push(event('Environment', { operatingSystem: os }, start));
  if (consoleText.chunks.length > 0) out.push(event('ServerSettings', { buildOutputCapturingEnabled: true }, start));

  // --build_metadata: every pair is a custom value; TAGS (comma-separated) and ROLE are tags too.
  for (const [key, value] of metadata) {
    out.push(event('UserNamedValue', { key, value }, start));
    if (key === 'TAGS') for (const t of value.split(',').map((s) => s.trim()).filter(Boolean)) out.push(event('UserTag', { tag: t }, start));
    if (key === 'ROLE' && value.trim() !== '') out.push(event('UserTag', { tag: value.trim() }, start));
  }

  const failures: { classification: 'verification' | 'non-verification'; message: string }[] = [];
  let taskId = 0;
  // Bazel 4 analyses every target before it executes any: a target cannot have started executing
  // before the last one was configured, so that moment (known over the live stream, which times
  // every event) bounds each target's start from below. A file of events carries no times: a
  // target without them is shown as an instant at its completion or at the build's end, never
  // with the whole build's span it did not take.
  let analysed: number | undefined;
  for (const t of targets.values()) if (t.configuredAt !== undefined) analysed = Math.max(analysed ?? t.configuredAt, t.configuredAt);
  for (const t of targets.values()) {
    taskId++;
    const testFailed = t.testStatus !== undefined && FAILED_TEST_STATUSES.has(t.testStatus);
    const built = t.success !== false;
    const outcome = !built || testFailed ? 'failed' : t.test && t.cachedLocally ? 'up-to-date' : t.success === undefined && t.testStatus === undefined ? 'skipped' : 'success';
    // A cached test result keeps the times of the run that made it, before this build began.
    const ranHere = t.testStart !== undefined && t.testDuration !== undefined && !t.cachedLocally && t.testStart >= start;
    const taskEnd = ranHere ? t.testStart! + t.testDuration! : (t.completedAt ?? end);
    // A test that did not run here (its result came from the cache) took no time in this build.
    const taskStart = ranHere ? t.testStart! : !t.test && t.completedAt !== undefined && analysed !== undefined ? analysed : taskEnd;
    const common = { id: taskId, path: t.label, ...(t.kind ? { kind: t.kind } : {}) };
    out.push(event('TaskStarted', common, Math.min(taskStart, taskEnd)));
    out.push(event('TaskFinished', { ...common, outcome, cacheable: false, ...(t.testStatus ? { testStatus: t.testStatus } : {}) }, taskEnd));
    if (!built) failures.push({ classification: 'non-verification', message: `Target ${t.label} failed to build` });
    else if (testFailed) failures.push({ classification: 'verification', message: `Test ${t.label} ${t.testStatus}` });
  }
  for (const a of aborts) failures.push({ classification: 'non-verification', message: a });
  out.push(...testEvents(attempts, end, options.readUri));
  // Over the live stream each chunk has its event's time; a file of events has none, and its
  // console is placed at the build's end, as its targets are.
  for (const c of consoleText.chunks) {
    const at = Math.min(Math.max(c.t ?? end, start), Math.max(end, start));
    out.push(event('ConsoleOutput', { stream: c.stream, text: c.text, ...(c.truncated ? { truncated: true } : {}) }, at));
  }

  const exitCode = obj(finished['exitCode']);
  const code = num(exitCode['code']) ?? 0;
  const succeeded = exitCode['code'] === undefined && exitCode['name'] === undefined ? finished['overallSuccess'] === true : code === 0;
  if (!succeeded && failures.length === 0) {
    failures.push({ classification: 'non-verification', message: `Bazel exited with ${str(exitCode['name']) ?? 'an error'} (${code})` });
  }
  out.push(event('BuildFinished', { outcome: succeeded ? 'succeeded' : 'failed', failures, exitCode: code }, Math.max(end, start)));

  return {
    buildId,
    toolType: 'targetbuild',
    toolVersion: str(started['buildToolVersion']) ?? 'unknown',
    agentVersion: packageVersion(),
    events: out,
  };
}

/** The invocation ID of a stream (BuildStarted.uuid), if the stream has one. */
export function invocationIdOf(events: readonly TimedBepEvent[]): string | undefined {
  for (const { event: e } of events) {
    if (e['started'] !== undefined) return str(obj(e['started'])['uuid']);
  }
  return undefined;
}

/** A 13-character Buildscope build ID derived from a Bazel invocation ID (a UUID): the same stream twice is one build. */
export function buildIdFromInvocation(invocationId: string): string {
  const hex = invocationId.replace(/[^0-9a-f]/gi, '').toLowerCase();
  if (hex.length < 16) throw new BepError(`Not an invocation ID: ${JSON.stringify(invocationId)}`);
  // 64 bits in base 36 are at most 13 characters; pad to exactly 13.
  return BigInt(`0x${hex.slice(0, 16)}`).toString(36).padStart(13, '0');
}

/** A Timestamp as proto3 JSON (RFC 3339 string) or as a decoded message ({seconds, nanos}). */
function timestampMillis(v: unknown): number | undefined {
  if (typeof v === 'string') {
    const t = Date.parse(v);
    return Number.isNaN(t) ? undefined : t;
  }
  const o = obj(v);
  const seconds = num(o['seconds']);
  if (seconds === undefined) return undefined;
  return seconds * 1000 + Math.floor((num(o['nanos']) ?? 0) / 1e6);
}

function lastPathSegment(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  const parts = path.split(/[\\/]/).filter(Boolean);
  return parts[parts.length - 1];
}

/** Parses a `--build_event_json_file` file: one JSON BuildEvent per line. */
export function parseBepJson(text: string): TimedBepEvent[] {
  const events: TimedBepEvent[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (e) {
      throw new BepError(`line ${i + 1}: not JSON (${(e as Error).message}); expected a --build_event_json_file file`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || !('id' in parsed)) {
      throw new BepError(`line ${i + 1}: not a build event (no "id"); expected a --build_event_json_file file`);
    }
    events.push({ event: parsed as BepEvent });
  }
  return events;
}

/**
 * The parts of each event kind that `bepToBuild` reads, by payload name. Everything else (file
 * sets, actions, the command line) makes no part of the build. The live endpoint keeps
 * only these parts of an invocation while it waits for the rest (src/bes/invocations.ts), so what
 * an invocation costs is what its build is made of, not what Bazel sent. A field read above and
 * missing here is caught by the test that builds every recorded stream both ways.
 */
const READ_PARTS: Readonly<Record<string, readonly string[]>> = {
  progress: ['stdout', 'stderr'],
  started: ['uuid', 'startTimeMillis', 'startTime', 'workspaceDirectory', 'command', 'buildToolVersion'],
  expanded: [],
  workspaceStatus: ['item'],
  buildMetadata: ['metadata'],
  configured: ['targetKind', 'testSize'],
  completed: ['success'],
  testResult: ['cachedLocally', 'testAttemptStartMillisEpoch', 'testAttemptDurationMillis', 'status', 'testActionOutput'],
  testSummary: ['overallStatus'],
  aborted: ['reason', 'description'],
  finished: ['finishTimeMillis', 'finishTime', 'exitCode', 'overallSuccess'],
};

/** The payloads `bepToBuild` reads anything of; events with another payload are of no use to it. */
export const READ_PAYLOADS: readonly string[] = Object.keys(READ_PARTS);

/** Longest string kept of a reduced event: labels, paths and descriptions are far shorter. */
export const REDUCED_STRING_LIMIT = 16 * 1024;

/**
 * The event with only what `bepToBuild` reads of it (strings cut at REDUCED_STRING_LIMIT, console
 * text at the contract's console bound), or undefined when it reads nothing of it:
 * `bepToBuild(events.map(reduce))` is the same build.
 */
export function reduceBepEvent(e: BepEvent): BepEvent | undefined {
  for (const [payload, fields] of Object.entries(READ_PARTS)) {
    const value = e[payload];
    if (value === undefined) continue;
    // One character past the bound, so that the conversion still sees that the console was cut.
    const limit = payload === 'progress' ? agentContract().bounds.consoleChars + 1 : REDUCED_STRING_LIMIT;
    const kept: Obj = {};
    for (const f of fields) if (obj(value)[f] !== undefined) kept[f] = bounded(obj(value)[f], limit);
    return { ...(e.id !== undefined ? { id: bounded(e.id, REDUCED_STRING_LIMIT) as BepEvent['id'] } : {}), [payload]: kept };
  }
  return undefined;
}

function bounded(v: unknown, limit: number): unknown {
  if (typeof v === 'string') return v.length > limit ? v.slice(0, limit) : v;
  if (Array.isArray(v)) return v.map((x) => bounded(x, limit));
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, bounded(x, limit)]));
  return v;
}
