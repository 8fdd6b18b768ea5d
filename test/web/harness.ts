// The test server (test/support/server.ts) for the web app's end-to-end tests: SQLite in a temp dir, demo
// builds plus one build with 10,000 tasks, users with passwords (one limited to a project), the
// session, web and playground plugins serving fresh bundles.

import { spawnSync } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createPlaygroundPlugin } from '../../src/http/playground-plugin.js';
import { sessionPlugin } from '../../src/http/session-plugin.js';
import { createWebPlugin } from '../../src/http/web-plugin.js';
import { createLogger } from '../../src/log.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import type { BuildStore } from '../../src/store/types.js';
import { event, ingestLine, type BuildEvent } from '../support/lines.js';
import { newLocation, startTestServer } from '../support/server.js';
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
  const events: BuildEvent[] = [];
  const ev = (timestamp: number, eventType: string, data: Record<string, unknown>) => events.push(event(timestamp, eventType, data));
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
  return ingestLine(id, events);
}

/** A build that sent no task events, no environment and no options: its page must still work. */
export const PLAIN_BUILD = 'plain00000001';

function plainBuildLine(id: string, now: number): string {
  const at = (t: number) => now - 7_200_000 + t;
  return ingestLine(
    id,
    [[at(0), 'BuildStarted', {}], [at(5), 'ProjectStructure', { rootProjectName: 'scripts' }], [at(9), 'UserTag', { tag: 'no tasks' }], [at(4000), 'BuildFinished', { outcome: 'succeeded', failures: [] }]],
    { toolType: 'pybuild', toolVersion: '25.0', agentVersion: '1.0.0' },
  );
}

/** The test server (test/support/server.ts) with the session, web and playground plugins, the builds and users above. */
export async function startWebServer(options: { webRoot: string; playgroundRoot: string; builds?: number }): Promise<WebServer> {
  const now = Date.now();
  const bigBuild = 'big0000000001';
  const s = await startTestServer(await newLocation('sqlite', 'buildscope-web-'), {
    hostname: null,
    plugins: [sessionPlugin, createPlaygroundPlugin({ root: options.playgroundRoot }), createWebPlugin({ root: options.webRoot })],
    logger: createLogger('web-e2e', 'warn'),
    storeClock: Date.now,
    closeConnectionsAfterMs: 0,
    seed: async (store) => {
      const results = await store.ingestNdjson([...demoBuilds({ builds: options.builds ?? 150, seed: 17, now }), bigBuildLine(bigBuild, now), plainBuildLine(PLAIN_BUILD, now), failedBuildLine(FAILED_BUILD, now)].join('\n'));
      const rejected = results.filter((r) => r.status === 'rejected');
      if (rejected.length > 0) throw new Error(`builds rejected: ${JSON.stringify(rejected.slice(0, 3))}`);
    },
  });
  await s.auth.users.addUser({ name: 'alice', password: 'alice-password-1', permissions: ['accessBuildDataViaApi', 'exportData'], projects: null });
  await s.auth.users.addUser({ name: 'bob', password: 'bob-password-1', permissions: ['accessBuildDataViaApi'], projects: ['inventory'] });
  return { base: s.url, app: s.app, database: s.database, store: s.store, bigBuild, close: () => s.close() };
}
