// Starts a throwaway PostgreSQL server (initdb + postgres on a free port in a temp dir) for the
// test run. Used by vitest's global setup; tests get databases from test/support/postgres.ts.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { waitFor } from './wait.js';

export interface RunningPostgres {
  readonly url: string;
  stop(): Promise<void>;
}

/** Directory holding initdb and postgres, or undefined when PostgreSQL is not installed. */
export function findPostgresBin(): string | undefined {
  const candidates: string[] = [];
  for (const p of (process.env['PATH'] ?? '').split(':')) candidates.push(p);
  if (existsSync('/usr/lib/postgresql')) {
    for (const v of readdirSync('/usr/lib/postgresql').sort().reverse()) candidates.push(`/usr/lib/postgresql/${v}/bin`);
  }
  return candidates.find((d) => d && existsSync(join(d, 'initdb')) && existsSync(join(d, 'postgres')));
}

/** PostgreSQL refuses to run as root: run its binaries as the `postgres` system user then. */
function asServerUser(cmd: string, args: string[]): [string, string[]] {
  if (process.getuid?.() === 0) return ['runuser', ['-u', 'postgres', '--', cmd, ...args]];
  return [cmd, args];
}

export async function startPostgres(): Promise<RunningPostgres> {
  const bin = findPostgresBin();
  if (!bin) throw new Error('PostgreSQL binaries (initdb, postgres) not found');
  const dir = mkdtempSync(join(tmpdir(), 'buildscope-pg-'));
  chmodSync(dir, 0o777);
  if (process.getuid?.() === 0) spawnSync('chown', ['-R', 'postgres', dir]);
  const data = join(dir, 'data');
  const [icmd, iargs] = asServerUser(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const init = spawnSync(icmd, iargs, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  const port = await freePort();
  const [pcmd, pargs] = asServerUser(join(bin, 'postgres'), [
    '-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1',
    '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300',
  ]);
  const child: ChildProcess = spawn(pcmd, pargs, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (d: Buffer) => {
    log += d.toString();
  });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode}: ${log}`);
      return /ready to accept connections/.test(log);
    },
    'postgres to accept connections',
    30_000,
    100,
  ).catch((e: Error) => {
    throw new Error(`postgres did not start: ${e.message}; ${log}`);
  });
  return {
    url,
    async stop() {
      // Signal the postmaster itself: runuser does not pass signals on to it.
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      const exited = new Promise<void>((r) => (child.exitCode !== null ? r() : child.once('exit', () => r())));
      try {
        process.kill(pid, 'SIGQUIT');
      } catch {
        // already gone
      }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
