// `buildscope access-key create|list|revoke`: create prints only the new key (it is stored only as
// a hash); list shows each key's first characters, which revoke accepts as well as the whole key.

import type { Command } from 'commander';
import { databaseOptions, type DatabaseOpts } from './_options.js';

export function register(program: Command): void {
  const key = program.command('access-key').description('Manage access keys');

  databaseOptions(key.command('create <user>'))
    .description('Create an access key for a user and print it (only the key; it is not shown again)')
    .option('--expires-in-days <n>', 'lifetime in days (default 365, or limits.accessKeyDefaultDays)')
    .action(async (user: string, opts: DatabaseOpts & { expiresInDays?: string }) => {
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

  databaseOptions(key.command('list [user]'))
    .description("List access keys (of one user, or all): the key's first characters, user, created, expires")
    .option('--json', 'print a JSON array')
    .action(async (user: string | undefined, opts: DatabaseOpts & { json?: boolean }) => {
      const { withAuth, table, day } = await import('./_auth-cli.js');
      await withAuth(
        opts,
        async (auth) => {
          const keys = await auth.users.listAccessKeys(user);
          if (opts.json) {
            process.stdout.write(JSON.stringify(keys, null, 2) + '\n');
            return;
          }
          const now = Date.now();
          const rows = keys.map((k) => [`${k.prefix}…`, k.user, day(k.createdAt), day(k.expiresAt) + (k.expiresAt <= now ? ' (expired)' : '')]);
          process.stdout.write(table(['KEY', 'USER', 'CREATED', 'EXPIRES'], rows));
        },
        { readOnly: true },
      );
    });

  databaseOptions(key.command('revoke <key>'))
    .description('Revoke an access key, given whole or by the first characters `access-key list` shows')
    .option('--user <name>', 'only among the keys of this user')
    .action(async (given: string, opts: DatabaseOpts & { user?: string }) => {
      const { withAuth } = await import('./_auth-cli.js');
      await withAuth(opts, async (auth) => {
        // `list` prints the prefix with an ellipsis; accept it copied as shown.
        const revoked = await auth.users.revokeAccessKey(given.replace(/(…|\.\.\.)$/, ''), opts.user);
        process.stdout.write(`Revoked access key ${revoked.prefix}… of ${revoked.user}\n`);
      });
    });
}
