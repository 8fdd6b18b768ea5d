// Options shared by several commands, with no heavy imports (every command module is loaded at
// start to register itself). Files starting with `_` are not commands.

import type { Command } from 'commander';

export interface DatabaseOpts {
  data?: string;
  db?: string;
  config?: string;
}

/** `--data`, `--db` and `--config`: where the server's database and configuration are. */
export function databaseOptions(c: Command): Command {
  return c
    .option('--data <dir>', 'data directory of the embedded SQLite database (default ./.buildscope)')
    .option('--db <url>', 'postgres:// URL of a PostgreSQL database')
    .option('--config <file>', 'YAML configuration file');
}
