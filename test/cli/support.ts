// Runs the real command line (compiled: test/support/compiled-cli.ts), as a separate process, from
// any working directory.

import { spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { resolve } from 'node:path';
import { CLI } from '../support/compiled-cli.js';
import { printedAccessKey, serve } from '../support/serve-cli.js';

const root = resolve(import.meta.dirname, '..', '..');
/** node arguments that run the CLI (absolute, so that any cwd works). */
export const CLI_ARGS: readonly string[] = CLI;

export interface CliResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function cli(args: readonly string[], options: { input?: string; cwd?: string; env?: Record<string, string> } = {}): CliResult {
  const spawnOptions: SpawnSyncOptions = {
    encoding: 'utf8',
    timeout: 180_000,
    maxBuffer: 256 * 1024 * 1024,
    cwd: options.cwd ?? root,
    env: { ...process.env, BUILDSCOPE_LOG_LEVEL: 'info', ...options.env },
    ...(options.input !== undefined ? { input: options.input } : {}),
  };
  const r = spawnSync(process.execPath, [...CLI_ARGS, ...args], spawnOptions);
  return { status: r.status, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** The same, without blocking the test process (for commands that talk to a server the test runs). */
export function cliAsync(args: readonly string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [...CLI_ARGS, ...args], { cwd: root, env: { ...process.env, BUILDSCOPE_LOG_LEVEL: 'info', ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.end(options.input ?? '');
    child.once('close', (status) => done({ status, stdout, stderr }));
  });
}

/** A single line on standard error that names the command, and no stack trace. */
export function isOneLineError(stderr: string, command: string): boolean {
  const lines = stderr.trimEnd().split('\n');
  return lines.length === 1 && lines[0]!.startsWith(`buildscope${command ? ` ${command}` : ''}: `) && !/\n\s+at |"stack"/.test(stderr);
}

export interface Serving {
  readonly url: string;
  /** The access key the first start prints for `admin`. */
  readonly key: string;
  stop(): Promise<void>;
}

/** Starts `serve --port 0` (test/support/serve-cli.ts) and resolves once it prints where it runs and the key it made. */
export async function serveCli(args: readonly string[]): Promise<Serving> {
  const s = await serve(args, { cwd: root });
  return {
    url: s.url,
    key: printedAccessKey(s),
    stop: async () => {
      await s.stop();
    },
  };
}
