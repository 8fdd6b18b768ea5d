// Shared by `user` and `access-key`: open the configured database's auth component, run, close.
// (Files starting with `_` are not commands.)

import { configFromCli, ConfigError, type CliDatabaseOptions, type ServerConfig } from '../../config.js';
import { openDatabase } from '../../store/database.js';
import { openAuth, UserError, type Auth } from '../../auth/index.js';

export function fail(message: string): never {
  process.stderr.write(`buildscope: ${message}\n`);
  process.exit(2);
}

export async function withAuth(opts: CliDatabaseOptions, run: (auth: Auth, config: ServerConfig) => Promise<void>): Promise<void> {
  let config: ServerConfig;
  try {
    config = configFromCli(opts);
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message);
    throw e;
  }
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
