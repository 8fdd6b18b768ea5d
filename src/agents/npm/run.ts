// `buildscope run -- <command>`: runs a package manager command with the npm agent preloaded,
// passes its output through untouched (inherited stdio), sends the build when it ends, prints one
// line with the build's link on stderr, and exits with the command's exit code.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newBuildId, packageRoot } from '../common-build.js';
import { agentSettings, outcomeLine, sendBuild } from '../common-send.js';
import { jsBuild, readRecord } from './js-build.js';

/** The preload's path: what `NODE_OPTIONS=--require=...` names. */
export function preloadPath(): string {
  return join(packageRoot(), 'src', 'agents', 'npm', 'preload.cjs');
}

/** NODE_OPTIONS with the preload added (quoted when the path has spaces). */
export function withPreload(nodeOptions: string | undefined): string {
  const path = preloadPath();
  const flag = /\s/.test(path) ? `--require="${path}"` : `--require=${path}`;
  return nodeOptions && nodeOptions.trim() !== '' ? `${nodeOptions} ${flag}` : flag;
}

/** Runs the command; resolves with the exit status to exit with (128 + n for a signal, as a shell does). */
export async function runRecorded(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'buildscope-run-'));
  const recordFile = join(dir, 'record.jsonl');
  const startedAt = Date.now();
  const child = spawn(argv[0]!, argv.slice(1), {
    stdio: 'inherit',
    env: { ...env, NODE_OPTIONS: withPreload(env['NODE_OPTIONS']), BUILDSCOPE_JS_EVENTS: recordFile },
  });
  // The wrapped command gets the signals the user sends; this process waits for it.
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((s) => [s, forward(s)] as const);
  for (const [s, h] of handlers) process.on(s, h);
  const status = await new Promise<number>((resolve) => {
    child.on('error', (e: NodeJS.ErrnoException) => {
      process.stderr.write(`buildscope run: cannot run ${argv[0]}: ${e.code === 'ENOENT' ? 'command not found' : e.message}\n`);
      resolve(127);
    });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 + (signalNumber(signal) ?? 1) : 1)));
  });
  for (const [s, h] of handlers) process.off(s, h);
  const finishedAt = Date.now();
  try {
    const settings = agentSettings(env);
    if (settings.warning !== undefined) process.stderr.write(settings.warning + '\n');
    const build = jsBuild(newBuildId(), { argv, cwd: process.cwd(), startedAt, finishedAt, exitCode: status, env }, readRecord(recordFile));
    const outcome = await sendBuild(settings, build);
    process.stderr.write(outcomeLine(outcome, settings.spoolDir) + '\n');
  } catch (e) {
    // Never fail the build: the command's status is what counts.
    process.stderr.write(`Buildscope: the build was not recorded: ${(e as Error).message}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return status;
}

function signalNumber(signal: NodeJS.Signals): number | undefined {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };
  return numbers[signal];
}
