// The test server (test/support/server.ts) and build lines (test/support/lines.ts) for the server's
// tests, and the authentication of a data directory holding one user.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { openAuth, type Auth } from '../../src/auth/index.js';

export { basic, bearer, newLocation, startTestServer, type Dialect, type Location, type TestServer } from '../support/server.js';
export { buildId, buildLine, type BuildSpec } from '../support/lines.js';

/**
 * The authentication of a fresh SQLite data directory holding the user carol (password
 * `carol-secret`), opened before the tests of the describe block that calls this and closed after:
 * for the tests of password checks, which build authenticators of their own over its users.
 */
export function useCarolAuth(prefix: string): { readonly auth: Auth } {
  let dir: string;
  let database: DatabaseHandle;
  let auth: Auth | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    const config = parseConfig({ database: { data: dir } });
    database = await openDatabase(config.database);
    auth = await openAuth(database, config);
    await auth.users.addUser({ name: 'carol', password: 'carol-secret', permissions: ['accessBuildDataViaApi'] });
  });
  afterAll(async () => {
    await database?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return {
    get auth() {
      if (auth === undefined) throw new Error('useCarolAuth: read auth inside a test');
      return auth;
    },
  };
}
