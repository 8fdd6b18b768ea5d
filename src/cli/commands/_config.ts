// Shared by the commands that read the server configuration (files starting with `_` are not
// commands). A bad configuration or option ends the command with its message and exit status 2,
// never with a stack trace.

import { configFromCli, ConfigError, type CliDatabaseOptions, type ServerConfig } from '../../config.js';
import { fail } from './_fail.js';

/** The server configuration from `--config`, `--data`, `--db` and the other server options. */
export function cliConfig(command: string, opts: CliDatabaseOptions): ServerConfig {
  try {
    return configFromCli(opts);
  } catch (e) {
    if (e instanceof ConfigError) fail(command, e.message);
    throw e;
  }
}
