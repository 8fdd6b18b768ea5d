// The real server, in-process, for the web app's end-to-end tests: SQLite in a temp dir, demo
// builds plus one build with 10,000 tasks, users with passwords (one limited to a project), the
// session, web and playground plugins serving fresh bundles.

import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { openAuth } from '../../src/auth/index.js';
import { defaultConfig } from '../../src/config.js';
import { buildApp } from '../../src/http/app.js';
import { createPlaygroundPlugin } from '../../src/http/playground-plugin.js';
import { sessionPlugin } from '../../src/http/session-plugin.js';
import { createWebPlugin } from '../../src/http/web-plugin.js';
import { createLogger } from '../../src/log.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import type { BuildStore } from '../../src/store/types.js';
import { FAILED_BUILD, failedBuildLine } from './failed-build.js';

export interface WebServer {
  readonly base: string;
  readonly app: FastifyInstance;
  readonly database: DatabaseHandle;
  readonly store: BuildStore;
  readonly bigBuild: string;
  close(): Promise<void>;
}

/** Bundles a page (web/ or playground/) into a temp directory with its own build script. */
export async function bundle(script: 'web/build.js' | 'playground/build.js'): Promise<string> {
  const out = await mkdtemp(join(tmpdir(), 'buildscope-web-bundle-'));
  const r = spawnSync(process.execPath, [script, '--outdir', out], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${script} failed: ${r.stderr || r.stdout}`);
  return out;
}

/** A Gradle-like build of `n` tasks run by 8 workers, a few from cache, one failed. */
export function bigBuildLine(id: string, now: number, n = 10_000): string {
  const start = now - 3_600_000;
  const events: { timestamp: number; type: { majorVersion: number; minorVersion: number; eventType: string }; data: Record<string, unknown> }[] = [];
  const ev = (timestamp: number, eventType: string, data: Record<string, unknown>) => events.push({ timestamp, type: { majorVersion: 1, minorVersion: 0, eventType }, data });
  ev(start, 'BuildStarted', {});
  ev(start + 1, 'BuildAgent', { username: 'ci', publicHostname: 'build-09.ci.example.com', localHostname: 'b9', localIpAddresses: ['10.0.0.9'] });
  ev(start + 2, 'ProjectStructure', { rootProjectName: 'monorepo' });
  ev(start + 3, 'BuildRequestedTasks', { requested: ['build'], excluded: [] });
  ev(start + 4, 'UserTag', { tag: 'CI' });
  const workers = new Array<number>(8).fill(start + 10);
  const tasks: { at: number; kind: 'TaskStarted' | 'TaskFinished'; data: Record<string, unknown> }[] = [];
  for (let i = 0; i < n; i++) {
    const w = i % 8;
    const outcome = i === n - 7 ? 'failed' : i % 5 === 0 ? 'from-cache' : i % 3 === 0 ? 'up-to-date' : 'success';
    const duration = outcome === 'success' || outcome === 'failed' ? 20 + ((i * 7919) % 900) : 2 + (i % 5);
    const path = `:module${Math.floor(i / 20)}:task${i % 20}`;
    tasks.push({ at: workers[w]!, kind: 'TaskStarted', data: { id: i + 1, path } });
    tasks.push({ at: workers[w]! + duration, kind: 'TaskFinished', data: { id: i + 1, path, outcome, cacheable: i % 2 === 0 } });
    workers[w] = workers[w]! + duration + 1;
  }
  tasks.sort((a, b) => a.at - b.at);
  for (const t of tasks) ev(t.at, t.kind, t.data);
  const end = Math.max(...workers) + 10;
  ev(end, 'BuildFinished', { outcome: 'failed', failures: [{ classification: 'verification', message: 'Test failed: :module499:task13' }] });
  return JSON.stringify({ buildId: id, toolType: 'native', toolVersion: '8.10.2', agentVersion: '3.19', events });
}

/** A build that sent no task events, no environment and no options: its page must still work. */
export const PLAIN_BUILD = 'plain00000001';

function plainBuildLine(id: string, now: number): string {
  const ev = (t: number, eventType: string, data: Record<string, unknown>) => ({ timestamp: now - 7_200_000 + t, type: { majorVersion: 1, minorVersion: 0, eventType }, data });
  return JSON.stringify({
    buildId: id,
    toolType: 'pybuild',
    toolVersion: '25.0',
    agentVersion: '1.0.0',
    events: [ev(0, 'BuildStarted', {}), ev(5, 'ProjectStructure', { rootProjectName: 'scripts' }), ev(9, 'UserTag', { tag: 'no tasks' }), ev(4000, 'BuildFinished', { outcome: 'succeeded', failures: [] })],
  });
}

export async function startWebServer(options: { webRoot: string; playgroundRoot: string; builds?: number }): Promise<WebServer> {
  const dir = await mkdtemp(join(tmpdir(), 'buildscope-web-'));
  const now = Date.now();
  const database = await openDatabase({ data: dir });
  const store = await openBuildStore(database);
  const bigBuild = 'big0000000001';
  const results = await store.ingestNdjson([...demoBuilds({ builds: options.builds ?? 150, seed: 17, now }), bigBuildLine(bigBuild, now), plainBuildLine(PLAIN_BUILD, now), failedBuildLine(FAILED_BUILD, now)].join('\n'));
  const rejected = results.filter((r) => r.status === 'rejected');
  if (rejected.length > 0) throw new Error(`builds rejected: ${JSON.stringify(rejected.slice(0, 3))}`);
  const config = defaultConfig({ data: dir });
  const app = await buildApp(
    { config, database, store, logger: createLogger('web-e2e', 'warn') },
    { plugins: [sessionPlugin, createPlaygroundPlugin({ root: options.playgroundRoot }), createWebPlugin({ root: options.webRoot })] },
  );
  const auth = await openAuth(database, config);
  await auth.users.addUser({ name: 'alice', password: 'alice-password-1', permissions: ['accessBuildDataViaApi', 'exportData'], projects: null });
  await auth.users.addUser({ name: 'bob', password: 'bob-password-1', permissions: ['accessBuildDataViaApi'], projects: ['inventory'] });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return {
    base: `http://127.0.0.1:${address.port}`,
    app,
    database,
    store,
    bigBuild,
    close: async () => {
      const closing = app.close();
      app.server.closeAllConnections();
      await closing;
      await store.close();
      await database.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
