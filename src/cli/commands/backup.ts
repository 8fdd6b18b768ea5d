// `buildscope backup DEST [--data DIR]`: a consistent copy of a live SQLite data directory.

import type { Command } from 'commander';
import { fail } from './_fail.js';

interface Options {
  data?: string;
  db?: string;
}

export function register(program: Command): void {
  program
    .command('backup')
    .description('Copy a data directory (SQLite), consistently, while the server runs; the copy opens with --data DEST')
    .argument('<dest>', 'new or empty directory for the copy')
    .option('--data <dir>', 'data directory to copy (default ./.buildscope)')
    .option('--db <url>', 'a PostgreSQL database: not copied by this command (use pg_dump, see docs/operations.md)')
    .action(async (dest: string, opts: Options) => {
      if (opts.db !== undefined) {
        fail('backup', 'a PostgreSQL database is backed up with its own tools: pg_dump --format=custom --file=buildscope.dump <url> (see docs/operations.md)');
      }
      const { backupDataDirectory, BackupError } = await import('../../db/backup.js');
      const { DEFAULT_DATA_DIR } = await import('../../db/database.js');
      const source = opts.data ?? DEFAULT_DATA_DIR;
      let lastShown = -1;
      const started = Date.now();
      try {
        const result = await backupDataDirectory(source, dest, ({ totalPages, remainingPages }) => {
          const percent = totalPages === 0 ? 100 : Math.floor((100 * (totalPages - remainingPages)) / totalPages);
          if (percent >= lastShown + 10 || remainingPages === 0) {
            lastShown = percent;
            process.stderr.write(`backup: ${percent}% of ${totalPages} pages\n`);
          }
        });
        const mb = (result.databaseBytes / 1e6).toFixed(1);
        const others = result.otherEntries.length > 0 ? ` and ${result.otherEntries.join(', ')}` : '';
        process.stderr.write(`backup: copied the database (${mb} MB)${others} to ${dest} in ${((Date.now() - started) / 1000).toFixed(1)} s; start a server on it with --data ${dest}\n`);
      } catch (e) {
        if (e instanceof BackupError) fail('backup', e.message);
        fail('backup', `could not copy ${source}: ${(e as Error).message}`, 1);
      }
    });
}
