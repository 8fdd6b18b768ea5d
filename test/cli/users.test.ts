// Users and access keys from the command line: add, list, remove, set-password, revoke, with the
// password from standard input or typed at a (pseudo-)terminal prompt, never only as an argument.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { UserStore } from '../../src/auth/users.js';
import { verifyPassword } from '../../src/auth/password.js';
import { CLI_ARGS, cli, isOneLineError } from './support.js';

vi.setConfig({ testTimeout: 240_000 });

const dir = mkdtempSync(join(tmpdir(), 'bs-cli-users-'));
const data = join(dir, 'data');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function passwordMatches(name: string, password: string): Promise<boolean> {
  const handle = await openDatabase({ data, mustExist: true });
  try {
    const user = await new UserStore(handle).getUser(name);
    return user?.passwordHash != null && (await verifyPassword(password, user.passwordHash));
  } finally {
    await handle.close();
  }
}

/** Runs the CLI on a pseudo-terminal (util-linux `script`), typing each answer once its prompt appears. */
function onTerminal(args: readonly string[], answers: readonly [RegExp, string][]): Promise<{ status: number | null; output: string }> {
  const command = [process.execPath, ...CLI_ARGS, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('script', ['-qefc', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  let next = 0;
  const onData = (d: Buffer): void => {
    output += d.toString();
    while (next < answers.length && answers[next]![0].test(output)) {
      output += '\n[typed]\n';
      child.stdin.write(`${answers[next]![1]}\r`);
      next++;
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return new Promise((done) => child.once('close', (status) => done({ status, output })));
}

describe('user and access-key commands', () => {
  it('user list on a data directory that does not exist refuses and creates nothing', () => {
    const r = cli(['user', 'list', '--data', data]);
    expect(r.status).toBe(2);
    expect(isOneLineError(r.stderr, 'user'), r.stderr).toBe(true);
    expect(r.stderr).toContain('no data directory');
    expect(existsSync(data)).toBe(false);
  });

  it('user add takes the password from standard input; without one and without a terminal it refuses', async () => {
    const add = cli(['user', 'add', 'alice', '--password-stdin', '--permissions', 'accessBuildDataViaApi', '--data', data], { input: 'correct horse\n' });
    expect(add.status, add.stderr).toBe(0);
    expect(add.stdout).toBe('Added user alice with permissions accessBuildDataViaApi\n');
    expect(await passwordMatches('alice', 'correct horse')).toBe(true);

    const none = cli(['user', 'add', 'bob', '--data', data], { input: '' });
    expect(none.status).toBe(2);
    expect(none.stderr).toBe('buildscope: no password: pipe it in with --password-stdin, or run on a terminal to be asked for it\n');
    const empty = cli(['user', 'add', 'bob', '--password-stdin', '--data', data], { input: '\n' });
    expect(empty.status).toBe(2);
    expect(empty.stderr).toContain('standard input holds no password');
  });

  it('user add on a terminal asks twice without echoing the password', async () => {
    const r = await onTerminal(['user', 'add', 'carol', '--data', data], [
      [/Password for carol: /, 'tty secret'],
      [/The same password again: /, 'tty secret'],
    ]);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain('Added user carol');
    expect(r.output).not.toContain('tty secret');
    expect(await passwordMatches('carol', 'tty secret')).toBe(true);

    const differ = await onTerminal(['user', 'set-password', 'carol', '--data', data], [
      [/Password for carol: /, 'one'],
      [/The same password again: /, 'two'],
    ]);
    expect(differ.status).toBe(2);
    expect(differ.output).toContain('buildscope: the two passwords differ; nothing was changed');
    expect(await passwordMatches('carol', 'tty secret')).toBe(true);
  });

  it('set-password replaces the password; list shows users; remove removes a user and the keys', async () => {
    const set = cli(['user', 'set-password', 'alice', '--password-stdin', '--data', data], { input: 'battery staple\n' });
    expect(set.status, set.stderr).toBe(0);
    expect(await passwordMatches('alice', 'battery staple')).toBe(true);
    expect(await passwordMatches('alice', 'correct horse')).toBe(false);
    const unknown = cli(['user', 'set-password', 'nobody', '--password-stdin', '--data', data], { input: 'x\n' });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toBe("buildscope: No user 'nobody'\n");

    const list = cli(['user', 'list', '--json', '--data', data]);
    expect(list.status, list.stderr).toBe(0);
    const users = JSON.parse(list.stdout) as { name: string; permissions: string[]; password: boolean }[];
    expect(users.map((u) => u.name)).toEqual(['alice', 'carol']);
    expect(users[0]).toMatchObject({ permissions: ['accessBuildDataViaApi'], password: true });
    const text = cli(['user', 'list', '--data', data]);
    expect(text.stdout.split('\n')[0]).toMatch(/^NAME\s+PERMISSIONS\s+PROJECTS\s+PASSWORD\s+ADDED$/);

    const key = cli(['access-key', 'create', 'carol', '--data', data]).stdout.trim();
    const removed = cli(['user', 'remove', 'carol', '--data', data]);
    expect(removed.status, removed.stderr).toBe(0);
    const keys = JSON.parse(cli(['access-key', 'list', '--json', '--data', data]).stdout) as { user: string }[];
    expect(keys.some((k) => k.user === 'carol')).toBe(false);
    expect(key).not.toBe('');
    const again = cli(['user', 'remove', 'carol', '--data', data]);
    expect(again.status).toBe(2);
    expect(again.stderr).toBe("buildscope: no user 'carol'\n");
  });

  it('access-key list shows first characters only; revoke takes the whole key or those characters', () => {
    const k1 = cli(['access-key', 'create', 'alice', '--data', data]).stdout.trim();
    const k2 = cli(['access-key', 'create', 'alice', '--data', data]).stdout.trim();
    const list = cli(['access-key', 'list', 'alice', '--data', data]);
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).not.toContain(k1);
    expect(list.stdout).toContain(`${k1.slice(0, 8)}…`);
    expect(list.stdout).toContain(`${k2.slice(0, 8)}…`);

    const byKey = cli(['access-key', 'revoke', k1, '--data', data]);
    expect(byKey.status, byKey.stderr).toBe(0);
    expect(byKey.stdout).toBe(`Revoked access key ${k1.slice(0, 8)}… of alice\n`);
    const byPrefix = cli(['access-key', 'revoke', `${k2.slice(0, 8)}…`, '--data', data]);
    expect(byPrefix.status, byPrefix.stderr).toBe(0);
    const left = JSON.parse(cli(['access-key', 'list', '--json', '--data', data]).stdout) as unknown[];
    expect(left).toEqual([]);
    const gone = cli(['access-key', 'revoke', k1, '--data', data]);
    expect(gone.status).toBe(2);
    expect(gone.stderr).toMatch(/^buildscope: No access key /);
  });
});
