// `buildscope run -- <command>`: runs a package manager command with the npm agent preloaded,
// passes its output through untouched (inherited stdio), sends the build when it ends, prints one
// line with the build's link on stderr, and exits with the command's exit code.

import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newBuildId, packageRoot } from '../common-build.js';
import { agentSettings, outcomeLine, sendBuild } from '../common-send.js';
import { agentContract, settingOf, switchedOn } from '../contract.js';
import { agentSettingsOf } from '../settings.js';
import { jsBuild, readRecord, type JsCapture } from './js-build.js';
import { reportFiles, testEventsFromReports } from './test-reports.js';

type Chunk = { t: number; stream: 'stdout' | 'stderr'; text: string; truncated?: boolean };

/**
 * The command's console as it passes through: every byte is written on unchanged (with the
 * pipe's back-pressure), and a copy is kept in chunks up to the contract's bound, plus the end of
 * its error output.
 */
class ConsoleCopy {
  readonly chunks: Chunk[] = [];
  private chars = 0;
  private truncated = false;
  stderrTail = '';

  constructor(
    private readonly keep: boolean,
    private readonly limit = agentContract().bounds.consoleChars,
    private readonly tailLimit = agentContract().bounds.outputTailChars,
  ) {}

  tee(from: Readable, to: Writable, stream: 'stdout' | 'stderr'): void {
    const decoder = new StringDecoder('utf8');
    from.pipe(to, { end: false });
    from.on('data', (data: Buffer) => this.add(stream, decoder.write(data)));
    from.on('end', () => this.add(stream, decoder.end()));
  }

  private add(stream: 'stdout' | 'stderr', text: string): void {
    if (text === '') return;
    if (stream === 'stderr') this.stderrTail = (this.stderrTail + text).slice(-this.tailLimit);
    if (!this.keep || this.truncated) return;
    if (this.chars + text.length > this.limit) {
      text = text.slice(0, this.limit - this.chars);
      this.truncated = true;
    }
    this.chars += text.length;
    const last = this.chunks.at(-1);
    if (last !== undefined && last.stream === stream && last.text.length < 8192) last.text += text;
    else this.chunks.push({ t: Date.now(), stream, text });
    if (this.truncated && this.chunks.length > 0) this.chunks.at(-1)!.truncated = true;
  }
}

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
  const file = agentSettingsOf(env).config;
  const sources = { systemProperties: {}, environment: env, file };
  const consoleOn = switchedOn(settingOf('consoleOutput', sources));
  const testOutputOn = switchedOn(settingOf('testOutput', sources));
  // On a terminal the command keeps the terminal (its colours, prompts and progress stay as they
  // are) and its console is not captured; elsewhere (CI, a log file) it is copied as it passes.
  const copying = process.stdout.isTTY !== true && process.stderr.isTTY !== true;
  const copy = new ConsoleCopy(consoleOn);
  const child = spawn(argv[0]!, argv.slice(1), {
    stdio: copying ? ['inherit', 'pipe', 'pipe'] : 'inherit',
    env: { ...env, NODE_OPTIONS: withPreload(env['NODE_OPTIONS']), BUILDSCOPE_JS_EVENTS: recordFile },
  });
  if (copying) {
    copy.tee(child.stdout!, process.stdout, 'stdout');
    copy.tee(child.stderr!, process.stderr, 'stderr');
  }
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
    const junit = settingOf('junit', sources);
    const capture: JsCapture = {
      tests: junit === undefined ? [] : testEventsFromReports(reportFiles(junit, process.cwd()), startedAt, { task: argv.join(' '), testOutput: testOutputOn, now: finishedAt }),
      ...(copying ? { console: copy.chunks } : {}),
      ...(copying && consoleOn ? { stderrTail: copy.stderrTail } : {}),
      testOutputCapturingEnabled: testOutputOn,
      buildOutputCapturingEnabled: copying && consoleOn,
    };
    const build = jsBuild(newBuildId(), { argv, cwd: process.cwd(), startedAt, finishedAt, exitCode: status, env }, readRecord(recordFile), capture);
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
