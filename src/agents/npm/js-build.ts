// A `jsbuild` build from one package manager command: what `buildscope run` (or, zero-touch, the
// outermost npm process) saw, plus the lifecycle scripts the preload recorded (preload.cjs).

import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { BuildEvent } from '../../store/types.js';
import { event, packageVersion, type AgentBuild } from '../common-build.js';
import { buildAgentData, contextEvents, localeOf, type Env, type GitInfo } from '../common-env.js';
import { osTag } from '../contract.js';
import { agentSettingsOf } from '../settings.js';
import { lockfileDependencyEvents } from './lockfile.js';

/** One line of the record file the preload writes. */
export type RecordEntry =
  | { readonly kind: 'command'; readonly argv: readonly string[]; readonly cwd: string; readonly t: number; readonly node?: string }
  | { readonly kind: 'start'; readonly id: string; readonly name: string; readonly package?: string; readonly userAgent?: string; readonly t: number }
  | { readonly kind: 'end'; readonly id: string; readonly code: number | null; readonly signal?: string; readonly t: number }
  | { readonly kind: 'exit'; readonly code: number; readonly t: number }
  | NodeTestEntry
  | { readonly kind: 'node-test-reports'; readonly files: readonly string[] };

/** A test node's test runner ran in a process of the build (node-tests.cjs); times in ms. */
export interface NodeTestEntry {
  readonly kind: 'test';
  readonly suite: string;
  readonly name: string;
  readonly outcome: 'passed' | 'failed' | 'skipped';
  readonly start: number;
  readonly end: number;
  readonly failure?: { readonly type?: string; readonly message: string; readonly stackTrace?: string };
  readonly skipReason?: string;
}

export function readRecord(file: string): RecordEntry[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const entries: RecordEntry[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      entries.push(JSON.parse(line) as RecordEntry);
    } catch {
      // A torn last line (a process killed mid-write) is skipped.
    }
  }
  return entries;
}

export interface JsCommand {
  /** The command as typed: `['npm', 'run', 'build']`. */
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly exitCode: number;
  readonly env: Env;
  /** The checkout, when read already (gitInfoAsync while the command ran); read now when absent. */
  readonly git?: { readonly info: GitInfo | undefined };
}

/** Scripts whose failure is a test or check failing (`verification`), not the build breaking. */
const VERIFICATION_SCRIPT = /^(pre|post)?(test|tests|lint|check|verify|e2e|coverage)([:_-].*)?$/;

/** `npm`, `yarn`, `pnpm` from an executable path or script (`/usr/lib/node_modules/npm/bin/npm-cli.js` -> `npm`). */
export function managerName(executable: string): string {
  const base = basename(executable).replace(/(-cli)?\.(c?js|mjs)$/, '');
  return base === 'npx' ? 'npm' : base;
}

/** The package name of the nearest package.json at or above `cwd`. */
export function projectName(cwd: string): string | undefined {
  let dir = cwd;
  for (;;) {
    try {
      const name = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name;
      return typeof name === 'string' && name !== '' ? name : undefined;
    } catch {
      const up = dirname(dir);
      if (up === dir) return undefined;
      dir = up;
    }
  }
}

/** What `buildscope run` saw of the command besides its scripts: its tests, its console, the end of its error output. */
export interface JsCapture {
  readonly tests?: readonly BuildEvent[];
  /** The console in chunks, in order (bounded by the caller); the last says `truncated` when it was cut. */
  readonly console?: readonly { readonly t: number; readonly stream: 'stdout' | 'stderr'; readonly text: string; readonly truncated?: boolean }[];
  /** The end of the command's error output: the cause of a failed command. */
  readonly stderrTail?: string;
  readonly testOutputCapturingEnabled?: boolean;
  readonly buildOutputCapturingEnabled?: boolean;
}

export function jsBuild(buildId: string, command: JsCommand, record: readonly RecordEntry[], capture: JsCapture = {}): AgentBuild {
  const { argv, cwd, startedAt, finishedAt, exitCode, env } = command;
  const tool = managerName(argv[0] ?? 'npm');
  // What a user searches for: the words after the tool (`run build`, `test`, `ci`).
  const requested = argv.slice(1).join(' ') || 'install';
  const events: BuildEvent[] = [];
  // The settings every agent reads (environment, then agent.properties), for redaction, tags and values.
  const { context } = agentSettingsOf(env);
  events.push(event('BuildStarted', {}, startedAt));
  events.push(event('BuildAgent', buildAgentData(context.redact), startedAt));
  const project = projectName(cwd);
  if (project) events.push(event('ProjectStructure', { rootProjectName: project }, startedAt));
  events.push(event('BuildRequestedTasks', { requested: [requested], excluded: [] }, startedAt));
  const commandEntry = record.find((r) => r.kind === 'command');
  events.push(
    event(
      'Environment',
      {
        nodeVersion: (commandEntry?.kind === 'command' ? commandEntry.node : undefined) ?? process.version,
        nodeLocale: localeOf(env),
        operatingSystem: osTag(),
        numberOfCpuCores: availableParallelism(),
      },
      startedAt,
    ),
  );
  events.push(...contextEvents(context, cwd, startedAt, command.git !== undefined ? { knownGit: command.git } : {}));
  events.push(event('UserNamedValue', { key: 'Package manager', value: tool }, startedAt));

  // Lifecycle scripts, in the order they started.
  const ends = new Map<string, Extract<RecordEntry, { kind: 'end' }>>();
  for (const r of record) if (r.kind === 'end') ends.set(r.id, r);
  const failures: { classification: 'verification' | 'non-verification'; message: string; cause?: Record<string, unknown> }[] = [];
  let toolVersion: string | undefined;
  let taskId = 0;
  for (const r of record) {
    if (r.kind !== 'start') continue;
    taskId++;
    toolVersion ??= versionFromUserAgent(r.userAgent, tool);
    const end = ends.get(r.id);
    const path = r.package ? `${r.package}:${r.name}` : r.name;
    const outcome = end === undefined ? 'failed' : end.code === 0 ? 'success' : 'failed';
    events.push(event('TaskStarted', { id: taskId, path }, r.t));
    events.push(event('TaskFinished', { id: taskId, path, outcome, cacheable: false, ...(end?.code !== undefined && end.code !== null ? { exitCode: end.code } : {}) }, end?.t ?? finishedAt));
    if (outcome === 'failed') {
      const how = end === undefined ? 'did not finish' : end.signal ? `was stopped by ${end.signal}` : `exited with ${end.code}`;
      failures.push({ classification: VERIFICATION_SCRIPT.test(r.name) ? 'verification' : 'non-verification', message: `Script ${path} ${how}` });
    }
  }
  if (exitCode !== 0 && failures.length === 0) {
    failures.push({ classification: 'non-verification', message: `${[tool, ...argv.slice(1)].join(' ')} exited with ${exitCode}` });
  }
  // Why the command failed, in its own words: the end of its error output, with the first failure
  // (the script that failed first, or the command itself).
  if (exitCode !== 0 && failures[0] !== undefined && capture.stderrTail !== undefined && capture.stderrTail.trim() !== '') failures[0].cause = { outputTail: capture.stderrTail };
  // node's test runner's tests first, then the JUnit reports' (numbered on after them).
  const nodeTests = nodeTestEvents(record, { task: argv.join(' '), startedAt, finishedAt });
  const firstReportId = nodeTests.filter((e) => e.type.eventType === 'TestStarted').length;
  events.push(...nodeTests, ...renumbered(capture.tests ?? [], firstReportId));
  for (const c of capture.console ?? []) events.push(event('ConsoleOutput', { stream: c.stream, text: c.text, ...(c.truncated ? { truncated: true } : {}) }, c.t));
  if (capture.testOutputCapturingEnabled !== undefined || capture.buildOutputCapturingEnabled !== undefined) {
    events.push(event('ServerSettings', { testOutputCapturingEnabled: capture.testOutputCapturingEnabled ?? false, buildOutputCapturingEnabled: capture.buildOutputCapturingEnabled ?? false }, startedAt));
  }
  // What the project resolved, as its lockfile says when the command has ended (an install writes it).
  events.push(...lockfileDependencyEvents(cwd, Math.max(finishedAt, startedAt)));
  events.push(event('BuildFinished', { outcome: exitCode === 0 ? 'succeeded' : 'failed', failures, exitCode }, Math.max(finishedAt, startedAt)));
  return { buildId, toolType: 'jsbuild', toolVersion: toolVersion ?? 'unknown', agentVersion: packageVersion(), events };
}

/** `10.8.2` from `npm/10.8.2 node/v20.20.2 linux x64 workspaces/false`. */
function versionFromUserAgent(userAgent: string | undefined, tool: string): string | undefined {
  const m = userAgent === undefined ? null : new RegExp(`(?:^|\\s)${tool}/(\\S+)`).exec(userAgent);
  return m?.[1];
}

const str = (s: unknown): string | undefined => (typeof s === 'string' ? s : undefined);

/**
 * TestStarted / TestFinished events of the tests the record holds (node's test runner, seen in
 * the processes that ran them; node-tests.cjs bounds their texts by the contract), numbered from
 * 1, within the command's time.
 */
export function nodeTestEvents(record: readonly RecordEntry[], options: { task: string; startedAt: number; finishedAt: number }): BuildEvent[] {
  const within = (t: unknown): number => Math.min(Math.max(typeof t === 'number' && Number.isFinite(t) ? t : options.startedAt, options.startedAt), Math.max(options.finishedAt, options.startedAt));
  const events: BuildEvent[] = [];
  let id = 0;
  for (const r of record) {
    if (r.kind !== 'test' || typeof r.name !== 'string' || !['passed', 'failed', 'skipped'].includes(r.outcome)) continue;
    id++;
    const start = within(r.start);
    const end = Math.max(start, within(r.end));
    events.push(event('TestStarted', { id, suite: str(r.suite) ?? '', name: r.name, task: options.task }, start));
    const failure = r.outcome === 'failed' && r.failure !== undefined ? failureOf(r.failure) : undefined;
    const skipReason = r.outcome === 'skipped' ? str(r.skipReason) : undefined;
    events.push(event('TestFinished', { id, outcome: r.outcome, ...(failure !== undefined ? { failure } : {}), ...(skipReason !== undefined ? { skipReason } : {}) }, end));
  }
  return events;
}

function failureOf(f: NonNullable<NodeTestEntry['failure']>): Record<string, string> {
  const type = str(f.type);
  const stackTrace = str(f.stackTrace);
  return { ...(type !== undefined ? { type } : {}), message: str(f.message) ?? '', ...(stackTrace !== undefined ? { stackTrace } : {}) };
}

/** Test events with their ids moved on by `by`, so that two sources of tests do not share an id. */
function renumbered(events: readonly BuildEvent[], by: number): BuildEvent[] {
  if (by === 0) return [...events];
  return events.map((e) => (typeof e.data['id'] === 'number' ? { ...e, data: { ...e.data, id: e.data['id'] + by } } : e));
}

/**
 * The JUnit reports that `node --test`'s own reporters wrote, when the record holds node's tests:
 * the same tests, not to be read again from the report.
 */
export function reportsOfRecordedTests(record: readonly RecordEntry[]): ReadonlySet<string> {
  if (!record.some((r) => r.kind === 'test')) return new Set();
  return new Set(record.flatMap((r) => (r.kind === 'node-test-reports' && Array.isArray(r.files) ? r.files : [])));
}
