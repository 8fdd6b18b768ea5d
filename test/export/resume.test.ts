// Resuming a listing with Last-Event-ID continues right after the named build, whatever the
// original :date was: a `since/now?stream` client that reconnects after a server restart gets the
// builds stored while the server was down (`now` is not evaluated again).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventSource } from 'eventsource';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.js';
import { exportPlugin } from '../../src/http/export-plugin.js';
import { parseConfig, type ServerConfig } from '../../src/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { openAuth } from '../../src/auth/index.js';
import { createLogger } from '../../src/log.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { SEE_EVERYTHING, type BuildStore } from '../../src/store/types.js';
import { createTestDatabase, pgAvailable, type TestDatabase } from '../support/postgres.js';
import { rawGet } from './harness.js';
import { parseSseText } from './sse-parse.js';
import { waitFor } from '../support/wait.js';

const logger = createLogger('export-resume-test', 'silent');
const idsOf = (lines: readonly string[]) => lines.map((l) => (JSON.parse(l) as { buildId: string }).buildId);

interface Running {
  readonly app: FastifyInstance;
  readonly store: BuildStore;
  readonly database: DatabaseHandle;
  stop(): Promise<void>;
}

async function start(config: ServerConfig, port: number): Promise<Running> {
  const database = await openDatabase(config.database);
  const store = await openBuildStore(database, { logger });
  const app = await buildApp({ config, database, store, logger }, { plugins: [exportPlugin] });
  await app.listen({ host: '127.0.0.1', port });
  return {
    app,
    store,
    database,
    async stop() {
      await app.close();
      await store.close();
      await database.close();
    },
  };
}

/** Ingests into the database of a stopped server, as another process would. */
async function ingestOffline(config: ServerConfig, lines: readonly string[]): Promise<void> {
  const database = await openDatabase(config.database);
  const store = await openBuildStore(database, { logger });
  await store.ingestNdjson(lines.join('\n'));
  await store.close();
  await database.close();
}

for (const dialect of ['sqlite', 'postgres'] as const) describe.skipIf(dialect === 'postgres' && !pgAvailable())(`export resume with Last-Event-ID on ${dialect}`, { timeout: 120_000 }, () => {
  let dir: string;
  let pg: TestDatabase | undefined;
  let config: ServerConfig;
  let server: Running;
  let port: number;
  let bearer: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bs-export-resume-'));
    pg = dialect === 'postgres' ? await createTestDatabase() : undefined;
    config = parseConfig({ export: { heartbeatMs: 200 } }, pg !== undefined ? { url: pg.url } : { data: dir });
    server = await start(config, 0);
    port = (server.app.server.address() as { port: number }).port;
    const auth = await openAuth(server.database, config);
    await auth.users.addUser({ name: 'exporter', password: 'pw-exporter', permissions: ['exportData'], projects: null });
    const { key } = await auth.users.createAccessKey('exporter', { expiresAt: Date.now() + 86_400_000 });
    bearer = `Bearer ${key}`;
  });

  afterAll(async () => {
    await server?.stop();
    await pg?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a since/now request resumed with Last-Event-ID sends the builds after the named one, not only those after now', async () => {
    const first = [...demoBuilds({ builds: 3, seed: 9101 })];
    await server.store.ingestNdjson(first.join('\n'));
    const later = [...demoBuilds({ builds: 4, seed: 9102 })];
    await server.store.ingestNdjson(later.join('\n'));
    const named = idsOf(first)[1]!;
    const resumed = await rawGet(port, '/build-export/v2/builds/since/now', { Authorization: bearer, 'Last-Event-ID': named });
    expect(resumed.status).toBe(200);
    expect(parseSseText(resumed.text).events.map((e) => e.id)).toEqual([idsOf(first)[2], ...idsOf(later)]);
    // The same with an instant after the named build: the resume point wins.
    const late = await server.store.listBuilds({ visibility: SEE_EVERYTHING, fromBuild: named, maxBuilds: 1 });
    const instant = await rawGet(port, `/build-export/v2/builds/since/${late[0]!.availableAt + 1}`, { Authorization: bearer, 'Last-Event-ID': named });
    expect(parseSseText(instant.text).events.map((e) => e.id)).toEqual([idsOf(first)[2], ...idsOf(later)]);
  });

  it('the eventsource client on since/now?stream gets every build stored while the server was down', async () => {
    const ids: string[] = [];
    const es = new EventSource(`http://127.0.0.1:${port}/build-export/v2/builds/since/now?stream`, {
      fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: bearer } }),
    });
    const received = (n: number) => waitFor(() => ids.length >= n, `${n} builds on the event stream`, 20_000).catch(() => undefined);
    try {
      await new Promise<void>((resolve) => es.addEventListener('open', () => resolve(), { once: true }));
      es.addEventListener('Build', (e) => ids.push((e as MessageEvent).lastEventId));
      const live = [...demoBuilds({ builds: 2, seed: 9103 })];
      await server.store.ingestNdjson(live.join('\n'));
      await received(2);
      expect(ids).toEqual(idsOf(live));

      // Stop the server, store builds into its database meanwhile, start it again on the same port.
      await server.stop();
      const whileDown = [...demoBuilds({ builds: 5, seed: 9104 })];
      await ingestOffline(config, whileDown);
      server = await start(config, port);
      await received(7);
      const afterRestart = [...demoBuilds({ builds: 1, seed: 9105 })];
      await server.store.ingestNdjson(afterRestart.join('\n'));
      await received(8);
      expect(ids).toEqual([...idsOf(live), ...idsOf(whileDown), ...idsOf(afterRestart)]);
    } finally {
      es.close();
    }
  });
});
