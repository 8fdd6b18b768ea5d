// Shared by the end-to-end tests of the capture agents: real build tools run as child processes
// (asynchronously: the server under test runs in this process and must keep serving) against a
// real server on loopback, with an environment that holds no CI variables of the machine running
// the tests, and helpers to read what the server made of the builds.

import { spawn, spawnSync } from 'node:child_process';
import { expect } from 'vitest';
import type { TestServer } from '../support/server.js';

export const has = (...commands: string[]): boolean =>
  spawnSync('sh', ['-c', commands.map((c) => `command -v ${c}`).join(' && ')], { encoding: 'utf8' }).status === 0;

/** Variables that make an agent see a CI; the tests set the ones they want themselves. */
const CI_VARIABLES = /^(CI|GITHUB_.*|GITLAB_CI|CI_.*|JENKINS_URL|JENKINS_HOME|BUILD_URL|CIRCLECI|CIRCLE_.*|BUILDKITE.*|TRAVIS.*|TF_BUILD|SYSTEM_.*|BUILD_BUILDID|BITBUCKET_.*|TEAMCITY_VERSION|BRANCH_NAME|GIT_BRANCH|BUILDSCOPE_.*|MAVEN_OPTS|GRADLE_OPTS|JAVA_TOOL_OPTIONS)$/;

export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!CI_VARIABLES.test(k)) env[k] = v;
  return { ...env, ...extra };
}

export interface Run {
  readonly code: number | null;
  /** Standard output, with standard error too unless they were asked apart. */
  readonly out: string;
  readonly err: string;
}

export function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv, onSpawn?: () => void, apart = false): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (apart ? (err += c.toString()) : (out += c.toString())));
    child.on('close', (code) => resolve({ code, out, err }));
    onSpawn?.();
  });
}

/** The build ID of the link the agent prints at the end (`Buildscope: <server>/builds/<id>`). */
export function linkedBuild(out: string, server: string): string {
  const m = new RegExp(`Buildscope: ${server.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/builds/([0-9a-z]{13})\\b`).exec(out);
  expect(m, out).not.toBeNull();
  return m![1]!;
}

/** IDs of the builds that the search finds (all of the server's history). */
export async function search(server: TestServer, auth: string, query: string): Promise<string[]> {
  const r = await server.get(`/api/builds?fromInstant=0&maxBuilds=1000&query=${encodeURIComponent(query)}`, auth);
  expect(r.status, await r.clone().text()).toBe(200);
  return ((await r.json()) as { id: string }[]).map((b) => b.id);
}

export interface ExportedEvent {
  readonly timestamp: number;
  readonly type: { readonly eventType: string };
  readonly data: Record<string, unknown>;
}

/** A build's events as the export API streams them, with the raw text (to look for leaks). */
export async function exportedEvents(server: TestServer, auth: string, id: string): Promise<{ events: ExportedEvent[]; raw: string }> {
  const r = await server.get(`/build-export/v2/build/${id}/events`, auth);
  expect(r.status).toBe(200);
  const raw = await r.text();
  const events = raw
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)) as ExportedEvent & { buildId?: string })
    .filter((e) => e.type !== undefined);
  return { events, raw };
}

export const ofType = (events: readonly ExportedEvent[], type: string) => events.filter((e) => e.type.eventType === type);

/** The tasks (or mojo executions) in export order, with their outcomes. */
export function finishedTasks(events: readonly ExportedEvent[]): { path: string; outcome: string; cacheable: boolean }[] {
  return ofType(events, 'TaskFinished').map((e) => ({ path: String(e.data['path']), outcome: String(e.data['outcome']), cacheable: e.data['cacheable'] === true }));
}

export interface RecordedTest {
  readonly suite: string;
  readonly name: string;
  readonly task?: string;
  readonly outcome: string;
  readonly attempt?: number;
  readonly skipReason?: string;
  readonly parameters?: string;
  readonly failure?: { type?: string; message: string; stackTrace?: string };
  /** The test's TestOutput texts by stream, joined. */
  readonly output: Record<string, string>;
  readonly startedAt: number;
  readonly finishedAt: number;
}

/** Each test of a build: its TestStarted joined with its TestFinished and TestOutput (one entry per attempt). */
export function testsOf(events: readonly { timestamp: number; type: { eventType: string }; data: Record<string, unknown> }[]): RecordedTest[] {
  const started = new Map<string, { data: Record<string, unknown>; timestamp: number }>();
  const output = new Map<string, Record<string, string>>();
  const out: RecordedTest[] = [];
  for (const e of events) {
    const id = String(e.data['id']);
    if (e.type.eventType === 'TestStarted') started.set(id, { data: e.data, timestamp: e.timestamp });
    else if (e.type.eventType === 'TestOutput') {
      const o = output.get(id) ?? {};
      o[String(e.data['stream'])] = (o[String(e.data['stream'])] ?? '') + String(e.data['text']);
      output.set(id, o);
    } else if (e.type.eventType === 'TestFinished') {
      const s = started.get(id);
      expect(s, `TestFinished ${id} without its TestStarted`).toBeDefined();
      out.push({ ...(s!.data as object), ...(e.data as object), output: output.get(id) ?? {}, startedAt: s!.timestamp, finishedAt: e.timestamp } as RecordedTest);
    }
  }
  return out;
}

/** Every TaskStarted comes before its TaskFinished, and each task appears once of each. */
export function expectTasksInOrder(events: readonly ExportedEvent[]): void {
  const seen = new Map<string, 'started' | 'finished'>();
  let last = 0;
  for (const e of events) {
    expect(e.timestamp).toBeGreaterThanOrEqual(last);
    last = e.timestamp;
    const path = String(e.data['path']);
    if (e.type.eventType === 'TaskStarted') {
      expect(seen.has(path), `${path} started twice`).toBe(false);
      seen.set(path, 'started');
    } else if (e.type.eventType === 'TaskFinished') {
      expect(seen.get(path), `${path} finished before it started`).toBe('started');
      seen.set(path, 'finished');
    }
  }
  expect([...seen.values()].every((s) => s === 'finished')).toBe(true);
}

export function git(dir: string, ...args: string[]): void {
  const r = spawnSync('git', ['-c', 'user.name=Dev', '-c', 'user.email=dev@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}
