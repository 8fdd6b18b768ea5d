// `buildscope access-key create NAME [--expires-in-days N]`: prints only the new key.

import type { Command } from 'commander';

export function register(program: Command): void {
  const key = program.command('access-key').description('Manage access keys');
  key
    .command('create <user>')
    .description('Create an access key for a user and print it (only the key; it is not shown again)')
    .option('--expires-in-days <n>', 'lifetime in days (default 365, or limits.accessKeyDefaultDays)')
    .option('--data <dir>', 'data directory of the embedded SQLite database (default ./.buildscope)')
    .option('--db <url>', 'postgres:// URL of a PostgreSQL database')
    .option('--config <file>', 'YAML configuration file')
    .action(async (user: string, opts: { expiresInDays?: string; data?: string; db?: string; config?: string }) => {
      const { withAuth, fail } = await import('./_auth-cli.js');
      let days: number | undefined;
      if (opts.expiresInDays !== undefined) {
        days = Number(opts.expiresInDays);
        if (!/^\d+$/.test(opts.expiresInDays) || days < 1 || days > 36500) fail(`--expires-in-days must be a whole number from 1 to 36500, got '${opts.expiresInDays}'`);
      }
      await withAuth(opts, async (auth, config) => {
        const lifetime = (days ?? config.limits.accessKeyDefaultDays) * 86_400_000;
        const created = await auth.users.createAccessKey(user, { expiresAt: Date.now() + lifetime });
        process.stdout.write(created.key + '\n');
      });
    });
}
