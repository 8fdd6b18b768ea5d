// `buildscope user add NAME --password P [--permissions a,b] [--projects x,y]`.

import type { Command } from 'commander';

export function register(program: Command): void {
  const user = program.command('user').description('Manage users of the server');
  user
    .command('add <name>')
    .description('Add a user who signs in with a password (Basic) and may create access keys')
    .requiredOption('--password <password>', 'the password (stored as a scrypt hash)')
    .option('--permissions <list>', 'comma-separated permission config values (default: all)')
    .option('--projects <list>', 'comma-separated projects: enables project-level access control for this user')
    .option('--data <dir>', 'data directory of the embedded SQLite database (default ./.buildscope)')
    .option('--db <url>', 'postgres:// URL of a PostgreSQL database')
    .option('--config <file>', 'YAML configuration file')
    .action(async (name: string, opts: { password: string; permissions?: string; projects?: string; data?: string; db?: string; config?: string }) => {
      const { withAuth, fail } = await import('./_auth-cli.js');
      const { PERMISSION_NAMES, isPermission } = await import('../../auth/types.js');
      const split = (s: string) => [...new Set(s.split(',').map((x) => x.trim()).filter((x) => x !== ''))];
      const permissions = opts.permissions === undefined ? [...PERMISSION_NAMES] : split(opts.permissions);
      const unknown = permissions.filter((p) => !isPermission(p));
      if (unknown.length > 0) fail(`unknown permission ${unknown.join(', ')}; known: ${PERMISSION_NAMES.join(', ')}`);
      const projects = opts.projects === undefined ? null : split(opts.projects);
      await withAuth(opts, async (auth) => {
        const u = await auth.users.addUser({ name, password: opts.password, permissions: permissions.filter(isPermission), projects });
        process.stdout.write(`Added user ${u.name} with permissions ${u.permissions.join(', ') || '(none)'}${u.projects ? ` and projects ${u.projects.join(', ')}` : ''}\n`);
      });
    });
}
