// `buildscope serve` as a child process, for tests that need the real command (workers, signals).

import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { CLI } from './compiled-cli.js';

export { CLI };

export interface Serving {
  readonly child: ChildProcess;
  readonly url: string;
  readonly lines: readonly string[];
  stop(): Promise<number | null>;
}

/** Starts `serve --port 0` and resolves once it prints where to go (`cli`: node arguments of another command than CLI). */
export function serve(args: readonly string[], options: { cli?: readonly string[]; cwd?: string } = {}): Promise<Serving> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(options.cli ?? CLI), 'serve', '--port', '0', ...args], { ...(options.cwd !== undefined ? { cwd: options.cwd } : {}), env: { ...process.env, BUILDSCOPE_LOG_LEVEL: 'warn' } });
    const lines: string[] = [];
    let buffer = '';
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      buffer += d.toString();
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        lines.push(line);
        const m = /Buildscope is running at (http:\/\/[^/\s]+)\//.exec(line);
        if (m) {
          const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
          resolve({
            child,
            url: m[1]!,
            lines,
            stop: () => {
              child.kill('SIGTERM');
              return exited;
            },
          });
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
    setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 180_000).unref();
  });
}

/** Child processes of `pid` running `serve` (from /proc). */
export function serverChildren(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('serve')) out.push(Number(entry));
    } catch {
      // The process ended while being read.
    }
  }
  return out;
}

/** The access key `serve` prints when it creates the first administrator. */
export function printedAccessKey(s: Serving): string {
  return /access key (bsk\S+) /.exec(s.lines.find((l) => l.startsWith('Created user'))!)![1]!;
}
