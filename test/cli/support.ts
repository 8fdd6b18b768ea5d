// Runs the real command line from source, as a separate process, from any working directory.

import { spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '..', '..');
/** node arguments that run the CLI from source (absolute, so that any cwd works). */
export const CLI_ARGS: readonly string[] = ['--import', pathToFileURL(resolve(root, 'node_modules/tsx/dist/loader.mjs')).href, resolve(root, 'src/cli/run.ts')];

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

/** Starts `serve --port 0` and resolves once it prints where it runs. */
export function serveCli(args: readonly string[]): Promise<Serving> {
  return new Promise((resolveServing, reject) => {
    const child = spawn(process.execPath, [...CLI_ARGS, 'serve', '--port', '0', ...args], { cwd: root, env: { ...process.env, BUILDSCOPE_LOG_LEVEL: 'warn' } });
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const failed = (code: number | null): void => reject(new Error(`serve exited with ${code}: ${err}`));
    child.once('exit', failed);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const running = /Buildscope is running at (http:\/\/[^/\s]+)\//.exec(out);
      const key = /access key (\S+) \(shown only this once\)/.exec(out);
      if (running && key) {
        child.off('exit', failed);
        const exited = new Promise<void>((done) => child.once('exit', () => done()));
        resolveServing({
          url: running[1]!,
          key: key[1]!,
          stop: () => {
            child.kill('SIGTERM');
            return exited;
          },
        });
      }
    });
  });
}
