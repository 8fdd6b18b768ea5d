// The real server, in-process, for the playground's end-to-end tests: SQLite in a temp dir, demo
// builds ingested, one user with an access key, the playground plugin serving a fresh bundle.

import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { chromium, type BrowserContext } from 'playwright-core';
import { openAuth } from '../../src/auth/index.js';
import { defaultConfig } from '../../src/config.js';
import { buildApp, type FacePlugin } from '../../src/http/app.js';
import { createPlaygroundPlugin } from '../../src/http/playground-plugin.js';
import { createLogger } from '../../src/log.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import type { BuildStore } from '../../src/store/types.js';

export interface TestServer {
  readonly base: string;
  readonly accessKey: string;
  readonly app: FastifyInstance;
  close(): Promise<void>;
}

/** Bundles the playground into a temp directory (the same script `npm run build` runs). */
export async function buildBundle(): Promise<string> {
  const out = await mkdtemp(join(tmpdir(), 'buildscope-playground-bundle-'));
  const r = spawnSync(process.execPath, ['playground/build.js', '--outdir', out], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`playground build failed: ${r.stderr || r.stdout}`);
  return out;
}

export async function startServer(root: string, options: { builds?: number; extraPlugins?: readonly FacePlugin[] } = {}): Promise<TestServer> {
  const dir = await mkdtemp(join(tmpdir(), 'buildscope-playground-'));
  const now = Date.now();
  let database: DatabaseHandle | undefined;
  let store: BuildStore | undefined;
  let app: FastifyInstance | undefined;
  try {
    database = await openDatabase({ data: dir });
    store = await openBuildStore(database);
    const results = await store.ingestNdjson([...demoBuilds({ builds: options.builds ?? 120, seed: 11, now })].join('\n'));
    const rejected = results.filter((r) => r.status === 'rejected');
    if (rejected.length > 0) throw new Error(`demo builds rejected: ${JSON.stringify(rejected.slice(0, 3))}`);
    const config = defaultConfig({ data: dir });
    const logger = createLogger('playground-test', 'warn');
    app = await buildApp({ config, database, store, logger }, { plugins: [createPlaygroundPlugin({ root }), ...(options.extraPlugins ?? [])] });
    const auth = await openAuth(database, config);
    await auth.users.addUser({ name: 'alice', permissions: ['accessBuildDataViaApi', 'exportData'], projects: null });
    const { key } = await auth.users.createAccessKey('alice', { expiresAt: now + 86_400_000 });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    const opened = { app, store, database };
    return {
      base: `http://127.0.0.1:${address.port}`,
      accessKey: key,
      app,
      close: async () => {
        // Keep-alive connections of the test's own fetch calls would hold the close up.
        const closing = opened.app.close();
        opened.app.server.closeAllConnections();
        await closing;
        await opened.store.close();
        await opened.database.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await app?.close();
    await store?.close();
    await database?.close();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Debian's Chromium, headless, with a fresh profile; flags that keep it off the (closed) network. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = await mkdtemp(join(tmpdir(), 'buildscope-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
