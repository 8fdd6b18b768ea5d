// `buildscope user add|list|remove|set-password`: the users who sign in with a password.
// Passwords come from a hidden prompt on a terminal or from standard input (--password-stdin);
// --password on the command line still works but shows in the shell history and process list.

import type { Command } from 'commander';
import { databaseOptions, type DatabaseOpts } from './_options.js';

function passwordOptions(c: Command): Command {
  return c
    .option('--password-stdin', 'read the password from standard input (one line)')
    .option('--password <password>', 'the password itself (visible in the shell history; prefer the prompt or --password-stdin)');
}

export function register(program: Command): void {
  const user = program.command('user').description('Manage users of the server');

  passwordOptions(databaseOptions(user.command('add <name>')))
    .description('Add a user who signs in with a password (Basic) and may create access keys; asks for the password on a terminal')
    .option('--permissions <list>', 'comma-separated permission config values (default: all)')
    .option('--projects <list>', 'comma-separated projects: enables project-level access control for this user')
    .action(async (name: string, opts: DatabaseOpts & { password?: string; passwordStdin?: boolean; permissions?: string; projects?: string }) => {
      const { withAuth, fail } = await import('./_auth-cli.js');
      const { readPassword } = await import('./_password.js');
      const { PERMISSION_NAMES, isPermission } = await import('../../auth/types.js');
      const split = (s: string) => [...new Set(s.split(',').map((x) => x.trim()).filter((x) => x !== ''))];
      const permissions = opts.permissions === undefined ? [...PERMISSION_NAMES] : split(opts.permissions);
      const unknown = permissions.filter((p) => !isPermission(p));
      if (unknown.length > 0) fail(`unknown permission ${unknown.join(', ')}; known: ${PERMISSION_NAMES.join(', ')}`);
      const projects = opts.projects === undefined ? null : split(opts.projects);
      const password = await readPassword('', opts, name);
      await withAuth(opts, async (auth) => {
        const u = await auth.users.addUser({ name, password, permissions: permissions.filter(isPermission), projects });
        process.stdout.write(`Added user ${u.name} with permissions ${u.permissions.join(', ') || '(none)'}${u.projects ? ` and projects ${u.projects.join(', ')}` : ''}\n`);
      });
    });

  databaseOptions(user.command('list'))
    .description('List the users: name, permissions, projects, whether a password is set, when added')
    .option('--json', 'print a JSON array')
    .action(async (opts: DatabaseOpts & { json?: boolean }) => {
      const { withAuth, table, day } = await import('./_auth-cli.js');
      await withAuth(
        opts,
        async (auth) => {
          const users = await auth.users.listUsers();
          if (opts.json) {
            const shown = users.map((u) => ({ name: u.name, permissions: u.permissions, projects: u.projects, password: u.passwordHash !== null, createdAt: u.createdAt }));
            process.stdout.write(JSON.stringify(shown, null, 2) + '\n');
            return;
          }
          const rows = users.map((u) => [u.name, u.permissions.join(',') || '(none)', u.projects?.join(',') ?? '(all)', u.passwordHash !== null ? 'yes' : 'no', day(u.createdAt)]);
          process.stdout.write(table(['NAME', 'PERMISSIONS', 'PROJECTS', 'PASSWORD', 'ADDED'], rows));
        },
        { readOnly: true },
      );
    });

  databaseOptions(user.command('remove <name>'))
    .description('Remove a user and every access key of the user')
    .action(async (name: string, opts: DatabaseOpts) => {
      const { withAuth, fail } = await import('./_auth-cli.js');
      await withAuth(opts, async (auth) => {
        if (!(await auth.users.removeUser(name))) fail(`no user '${name}'`);
        process.stdout.write(`Removed user ${name} and the user's access keys\n`);
      });
    });

  passwordOptions(databaseOptions(user.command('set-password <name>')))
    .description("Replace a user's password (asks for it on a terminal); access keys stay valid")
    .action(async (name: string, opts: DatabaseOpts & { password?: string; passwordStdin?: boolean }) => {
      const { withAuth } = await import('./_auth-cli.js');
      const { readPassword } = await import('./_password.js');
      const password = await readPassword('', opts, name);
      await withAuth(opts, async (auth) => {
        await auth.users.setPassword(name, password);
        process.stdout.write(`Changed the password of ${name}\n`);
      });
    });
}
