// Commands that read the server configuration end with the configuration's message and status 2,
// never with a stack trace.

import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI } from '../support/compiled-cli.js';

function cli(args: string[]): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [...CLI, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stderr: r.stderr };
}

describe('configuration errors on the command line', () => {
  it.each([
    ['serve', ['serve', '--data', '/tmp/x', '--db', 'postgres://127.0.0.1/x']],
    ['mirror', ['mirror', 'http://127.0.0.1:1', '--data', '/tmp/x', '--db', 'postgres://127.0.0.1/x']],
    ['', ['user', 'add', 'alice', '--password', 'pw', '--data', '/tmp/x', '--db', 'postgres://127.0.0.1/x']],
  ])('%s: a clear message and exit status 2', (command, args) => {
    const r = cli(args);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`buildscope${command ? ` ${command}` : ''}: Give either --data or --db, not both`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
