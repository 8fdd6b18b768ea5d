// The test server (test/support/server.ts) for the playground's end-to-end tests: SQLite in a temp dir, demo
// builds ingested, one user with an access key, the playground plugin serving a fresh bundle.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { chromium, type BrowserContext } from 'playwright-core';
import type { FacePlugin } from '../../src/http/app.js';
import { createPlaygroundPlugin } from '../../src/http/playground-plugin.js';
import { createLogger } from '../../src/log.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { newLocation, startTestServer } from '../support/server.js';
import { bundle } from '../web/harness.js';

export interface TestServer {
  readonly base: string;
  readonly accessKey: string;
  readonly app: FastifyInstance;
  close(): Promise<void>;
}

/** Bundles the playground into a temp directory (the same script `npm run build` runs). */
export function buildBundle(): Promise<string> {
  return bundle('playground/build.js');
}

/** The test server (test/support/server.ts) with the playground plugin, demo builds and the user alice with an access key. */
export async function startServer(root: string, options: { builds?: number; extraPlugins?: readonly FacePlugin[] } = {}): Promise<TestServer> {
  const now = Date.now();
  const s = await startTestServer(await newLocation('sqlite', 'buildscope-playground-'), {
    hostname: null,
    plugins: [createPlaygroundPlugin({ root }), ...(options.extraPlugins ?? [])],
    logger: createLogger('playground-test', 'warn'),
    storeClock: Date.now,
    // Keep-alive connections of the test's own fetch calls would hold the close up.
    closeConnectionsAfterMs: 0,
    seed: async (store) => {
      const results = await store.ingestNdjson([...demoBuilds({ builds: options.builds ?? 120, seed: 11, now })].join('\n'));
      const rejected = results.filter((r) => r.status === 'rejected');
      if (rejected.length > 0) throw new Error(`demo builds rejected: ${JSON.stringify(rejected.slice(0, 3))}`);
    },
  });
  await s.auth.users.addUser({ name: 'alice', permissions: ['accessBuildDataViaApi', 'exportData'], projects: null });
  const { key } = await s.auth.users.createAccessKey('alice', { expiresAt: now + 86_400_000 });
  return { base: s.url, accessKey: key, app: s.app, close: () => s.close() };
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
