// Opens a build store on SQLite (temp dir) or PostgreSQL (own database) for the store tests,
// with an injectable clock; `reset()` empties the build tables between tests.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { openBuildStore, type BuildStoreOptions } from '../../src/store/build-store.js';
import { openDatabase, type DatabaseHandle, type DialectName } from '../../src/db/database.js';
import type { BuildEvent, BuildStore } from '../../src/store/types.js';
import { createTestDatabase } from '../support/postgres.js';
import { parseQuery } from '../../src/query/index.js';
import type { CheckedExpr } from '../../src/query/checked.js';
import { event, ingestLine } from '../support/lines.js';

export interface TestStore {
  readonly store: BuildStore;
  readonly handle: DatabaseHandle;
  /** The store's clock: set `now.value` to move it. */
  readonly now: { value: number };
  readonly location: { data?: string; url?: string };
  reset(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The test store of a describe block on `dialect`: opened before its tests, emptied before each,
 * closed after; every test is skipped when `skip`. The object stands for the store it opens.
 */
export function useTestStore(dialect: DialectName, skip: boolean, options: Omit<BuildStoreOptions, 'clock'> = {}): TestStore {
  let t: TestStore | undefined;
  beforeAll(async () => {
    if (!skip) t = await openTestStore(dialect, options);
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(async (ctx) => {
    if (skip) ctx.skip();
    await t!.reset();
  });
  return {
    get store() {
      return t!.store;
    },
    get handle() {
      return t!.handle;
    },
    get now() {
      return t!.now;
    },
    get location() {
      return t!.location;
    },
    reset: () => t!.reset(),
    close: () => t!.close(),
  };
}

/** `options` go to the store as they are (the clock is the test store's own). */
export async function openTestStore(dialect: DialectName, options: Omit<BuildStoreOptions, 'clock'> = {}): Promise<TestStore> {
  let location: { data?: string; url?: string };
  let drop: () => Promise<void>;
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'bs-store-'));
    location = { data: dir };
    drop = async () => rmSync(dir, { recursive: true, force: true });
  } else {
    const pg = await createTestDatabase();
    if (pg === undefined) throw new Error('PostgreSQL unavailable');
    location = { url: pg.url };
    drop = () => pg.drop();
  }
  const handle = await openDatabase(location);
  const now = { value: 1_767_225_600_000 };
  const store = await openBuildStore(handle, { ...options, clock: () => now.value });
  return {
    store,
    handle,
    now,
    location,
    async reset() {
      for (const t of ['build_values', 'build_custom_values', 'build_custom_values_recent', 'build_values_recent', 'build_events', 'build_attributes', 'build_tasks', 'build_task_counts', 'build_attestations', 'test_runs', 'test_packs', 'build_failures', 'tests', 'failure_groups', 'build_rollups', 'build_duration_rollups', 'build_task_rollups', 'build_facet_rollups', 'test_rollups', 'failure_group_rollups', 'failure_group_test_rollups', 'rollup_keys', 'builds']) {
        await sql`DELETE FROM ${sql.table(t)}`.execute(handle.db);
      }
    },
    async close() {
      await store.close();
      await handle.close();
      await drop();
    },
  };
}

let clockTs = 1_767_225_600_000;

/** An event; timestamps increase by one second per call unless given. */
export function ev(eventType: string, data: Record<string, unknown> = {}, timestamp?: number): BuildEvent {
  clockTs += 1000;
  return event(timestamp ?? clockTs, eventType, data);
}

export interface LineSpec {
  buildId?: string;
  toolType?: string;
  toolVersion?: string;
  agentVersion?: string;
  events: BuildEvent[];
}

export function line(spec: LineSpec): string {
  return ingestLine(spec.buildId, spec.events, spec);
}

let idCounter = 0;
/** A fresh valid build ID. */
export function id(): string {
  idCounter++;
  return `t${idCounter.toString(36).padStart(12, '0')}`;
}

/** A complete build with a project. */
export function completeBuild(buildId: string, project: string | null = 'alpha', extra: BuildEvent[] = []): string {
  const start = ev('BuildStarted');
  return line({
    buildId,
    events: [
      start,
      ...(project === null ? [] : [ev('ProjectStructure', { rootProjectName: project })]),
      ...extra,
      ev('BuildFinished', { outcome: 'succeeded', failures: [] }),
    ],
  });
}

/** A search query checked as the server checks it at `now`, for tests that call the store directly. */
export function checkedQuery(text: string, now: number): CheckedExpr {
  const r = parseQuery(text, { now });
  if (!r.ok || r.expr === undefined) throw new Error(`invalid query ${text}`);
  return r.expr;
}

/**
 * A generated build of the random-build property tests (rollups, the analytics index): its
 * facet values, start (an offset before `now`, or null: no BuildStarted), duration, tasks and
 * custom values. `randomBuildLine` writes it as the agents do.
 */
export interface RandomBuild {
  project: string | null;
  outcome: 'succeeded' | 'failed' | null;
  /** Start as an offset before `now` (ms), or null: no BuildStarted (the build starts 5 days before). */
  ago: number | null;
  duration: number;
  tool: string;
  /** BuildAgent's user name, or null: no BuildAgent event. */
  user: string | null;
  /** UserTag events (repeats and case variants included). */
  tags: string[];
  tasks?: { path: string; outcome: string; took: number }[];
  values?: [string, string][];
  /** BuildRequestedTasks' tasks (none: no such event). */
  requested?: string[];
}

export function randomBuildLine(id: string, g: RandomBuild, now: number): string {
  const start = g.ago === null ? now - 5 * 86_400_000 : now - g.ago;
  const events: [number, string, Record<string, unknown>][] = [];
  if (g.ago !== null) events.push([start, 'BuildStarted', {}]);
  if (g.project !== null) events.push([start, 'ProjectStructure', { rootProjectName: g.project }]);
  if (g.user !== null) events.push([start, 'BuildAgent', { username: g.user, publicHostname: 'h' }]);
  for (const tag of g.tags) events.push([start, 'UserTag', { tag }]);
  for (const [key, value] of g.values ?? []) events.push([start, 'UserNamedValue', { key, value }]);
  if (g.requested !== undefined && g.requested.length > 0) events.push([start, 'BuildRequestedTasks', { requested: g.requested }]);
  (g.tasks ?? []).forEach((t, k) => {
    events.push([start, 'TaskStarted', { id: k + 1, path: t.path }]);
    events.push([start + t.took, 'TaskFinished', { id: k + 1, path: t.path, outcome: t.outcome }]);
  });
  events.push([start + g.duration, 'BuildFinished', { ...(g.outcome !== null ? { outcome: g.outcome } : {}), failures: [] }]);
  return ingestLine(id, events, { toolType: g.tool, toolVersion: '8.10' });
}
