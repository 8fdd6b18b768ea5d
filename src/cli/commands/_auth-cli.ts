// Shared by `user` and `access-key`: open the configured database's auth component, run, close.
// (Files starting with `_` are not commands.)

import type { CliDatabaseOptions, ServerConfig } from '../../config.js';
import { cliConfig } from './_config.js';
import { fail as failWith } from './_fail.js';
import { openDatabase } from '../../db/database.js';
import { openAuth, UserError, type Auth } from '../../auth/index.js';

export const fail: (message: string) => never = (message) => failWith('', message);

export async function withAuth(opts: CliDatabaseOptions, run: (auth: Auth, config: ServerConfig) => Promise<void>): Promise<void> {
  const config = cliConfig('', opts);
  const database = await openDatabase(config.database);
  try {
    await run(await openAuth(database, config), config);
  } catch (e) {
    if (e instanceof UserError) {
      await database.close();
      fail(e.message);
    }
    throw e;
  } finally {
    await database.close().catch(() => undefined);
  }
}
