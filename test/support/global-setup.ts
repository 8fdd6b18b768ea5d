// Vitest global setup: one throwaway PostgreSQL server for the whole run, when it can be had.
// On CI (CI=true) PostgreSQL is required, so its tests never silently disappear. And dist/ as
// current as src/: the tests run the compiled command.

import type { TestProject } from 'vitest/node';
import { rebuildDistIfStale } from './compiled-cli.js';
import { findPostgresBin, startPostgres, type RunningPostgres } from './postgres-server.js';

let server: RunningPostgres | undefined;

export async function setup(project: TestProject): Promise<void> {
  await rebuildDistIfStale();
  let url = process.env['BUILDSCOPE_TEST_PG_URL'] ?? '';
  if (!url && findPostgresBin()) {
    server = await startPostgres();
    url = server.url;
  }
  if (!url && process.env['CI']) throw new Error('CI requires PostgreSQL for the tests; install the postgresql package');
  project.provide('pgAdminUrl', url);
}

export async function teardown(): Promise<void> {
  await server?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
  }
}
