// `buildscope run -- <command>`: runs a package manager command with the npm agent preloaded,
// passes its output through untouched (inherited stdio), sends the build when it ends, prints one
// line with the build's link on stderr, and exits with the command's exit code.
//
// The exit does not wait for the network (BUILDSCOPE_SEND, sendMode): outside a CI the build is
// written to the spool and a detached sender (send-spooled.ts) sends it, so the command returns
// as soon as its build is safe on disk. What the build needs besides the command is read while the
// command runs: the git checkout (gitInfoAsync) and whether the server takes connections (probe),
// so that a server that is down is said at once, as the synchronous send says it. On a CI (whose
// machine may go away when the job's command exits) or with BUILDSCOPE_SEND=sync the build is sent
// before the exit, as before. bench/run-overhead.ts measures what `run` adds.

import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newBuildId, packageRoot, type AgentBuild } from '../common-build.js';
import type { AgentSettings } from '../common-send.js';
import type { GitInfo } from '../common-env.js';
import { agentContract, detectCi, settingOf, switchedOn } from '../contract.js';
import { agentSettingsOf } from '../settings.js';
import { BoundedConsole, type ConsoleChunk, type ConsoleStream } from '../bounded-console.js';
import type { JsCapture } from './js-build.js';

/** What makes and sends the build: loaded while the command runs, off its start. */
const buildModules = () => Promise.all([import('../common-send.js'), import('./js-build.js'), import('../common-env.js')]);
type BuildModules = Awaited<ReturnType<typeof buildModules>>;

/**
 * The command's console as it passes through: every byte is written on unchanged (with the
 * pipe's back-pressure), and a copy is kept up to the contract's bound (bounded-console.ts), plus
 * the end of its error output.
 */
class ConsoleCopy {
  private readonly kept = new BoundedConsole<number>(8192);
  stderrTail = '';

  constructor(
    private readonly keep: boolean,
    private readonly tailLimit = agentContract().bounds.outputTailChars,
  ) {}

  get chunks(): readonly ConsoleChunk<number>[] {
    return this.kept.chunks;
  }

  tee(from: Readable, to: Writable, stream: ConsoleStream): void {
    const decoder = new StringDecoder('utf8');
    from.pipe(to, { end: false });
    from.on('data', (data: Buffer) => this.add(stream, decoder.write(data)));
    from.on('end', () => this.add(stream, decoder.end()));
  }

  private add(stream: ConsoleStream, text: string): void {
    if (text === '') return;
    if (stream === 'stderr') this.stderrTail = (this.stderrTail + text).slice(-this.tailLimit);
    if (this.keep) this.kept.add(stream, text, Date.now());
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

/**
 * How the build leaves: `sync`, sent before the command's status is returned (on a CI, or
 * BUILDSCOPE_SEND=sync), else `background`, spooled and handed to a detached sender
 * (BUILDSCOPE_SEND=background forces it on a CI too). The same rule as the zero-touch preload's.
 */
export function sendMode(env: NodeJS.ProcessEnv): 'sync' | 'background' {
  const mode = (env['BUILDSCOPE_SEND'] ?? '').trim().toLowerCase();
  if (mode === 'sync' || mode === 'background') return mode;
  return detectCi(env) !== undefined ? 'sync' : 'background';
}

/**
 * Whether the server's host takes a TCP connection, tried while the command runs: undefined while
 * the answer is pending, else the reason it does not (an error code) or null when it does.
 */
function probe(server: string | undefined, timeoutMs: number): { readonly result: () => string | null | undefined; stop(): void } {
  let result: string | null | undefined;
  if (server === undefined) return { result: () => undefined, stop() {} };
  let socket: ReturnType<typeof connect> | undefined;
  try {
    const url = new URL(server);
    const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port });
    socket.unref();
    socket.setTimeout(timeoutMs, () => socket?.destroy());
    socket.once('connect', () => {
      result = null;
      socket?.destroy();
    });
    socket.once('error', (e: NodeJS.ErrnoException) => {
      result = e.code ?? e.message;
    });
  } catch {
    // An address the probe cannot read: the sender finds out.
  }
  return { result: () => result, stop: () => socket?.destroy() };
}

/** The sender's script and how node runs it (from dist/, or from the sources when run by tsx). */
function senderCommand(buildId: string): string[] {
  const fromSources = import.meta.url.endsWith('.ts');
  const script = fileURLToPath(new URL(`./send-spooled.${fromSources ? 'ts' : 'js'}`, import.meta.url));
  return [...(fromSources ? ['--import', 'tsx'] : []), script, buildId];
}

/** Spools the build and starts the detached sender; the line to print. Throws when the build cannot be spooled. */
function handOff([{ buildLink, outcomeLine, spoolRedacted }]: BuildModules, settings: AgentSettings, build: AgentBuild, env: NodeJS.ProcessEnv, unreachable: string | null | undefined): string {
  spoolRedacted(settings, build);
  if (typeof unreachable === 'string') return outcomeLine({ kind: 'spooled', reason: unreachable, link: buildLink(settings, build.buildId)! }, settings.spoolDir);
  const sender = spawn(process.execPath, senderCommand(build.buildId), { detached: true, stdio: 'ignore', env: { ...env, NODE_OPTIONS: '' } });
  sender.on('error', () => undefined);
  sender.unref();
  return outcomeLine({ kind: 'sent', link: buildLink(settings, build.buildId)!, flushed: 0 }, settings.spoolDir);
}

/** Runs the command; resolves with the exit status to exit with (128 + n for a signal, as a shell does). */
export async function runRecorded(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'buildscope-run-'));
  const recordFile = join(dir, 'record.jsonl');
  const startedAt = Date.now();
  const agent = agentSettingsOf(env);
  const file = agent.config;
  const sources = { systemProperties: {}, environment: env, file };
  const mode = sendMode(env);
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
  // Beside the command: the code that makes and sends the build, the checkout, and (when sending
  // in the background) whether the server takes connections.
  const modules = buildModules();
  const git = modules.then(([, , e]) => e.gitInfoAsync(process.cwd(), agent.context.ciBranch)).catch((): GitInfo | undefined => undefined);
  const reach = mode === 'background' ? probe(agent.server || undefined, 3000) : probe(undefined, 0);
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
  const unreachable = reach.result();
  reach.stop();
  try {
    const loaded = await modules;
    const [{ agentSettings, outcomeLine, sendBuild }, { jsBuild, readRecord, reportsOfRecordedTests }] = loaded;
    const settings = agentSettings(env);
    if (settings.warning !== undefined) process.stderr.write(settings.warning + '\n');
    const record = readRecord(recordFile);
    const junit = settingOf('junit', sources);
    const junitOptions = { task: argv.join(' '), testOutput: testOutputOn, now: finishedAt, skip: reportsOfRecordedTests(record) };
    const capture: JsCapture = {
      tests: junit === undefined ? [] : await junitTests(junit, startedAt, junitOptions),
      ...(copying ? { console: copy.chunks } : {}),
      ...(copying && consoleOn ? { stderrTail: copy.stderrTail } : {}),
      testOutputCapturingEnabled: testOutputOn,
      buildOutputCapturingEnabled: copying && consoleOn,
    };
    const build = jsBuild(newBuildId(), { argv, cwd: process.cwd(), startedAt, finishedAt, exitCode: status, env, git: { info: await git } }, record, capture);
    if (mode === 'background' && settings.server !== undefined) process.stderr.write(handOff(loaded, settings, build, env, unreachable) + '\n');
    else process.stderr.write(outcomeLine(await sendBuild(settings, build), settings.spoolDir) + '\n');
  } catch (e) {
    // Never fail the build: the command's status is what counts.
    process.stderr.write(`Buildscope: the build was not recorded: ${(e as Error).message}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return status;
}

/**
 * The tests of the JUnit reports `junit` names, but those in `skip` (written by `node --test`
 * whose tests the record holds already); the XML parser is loaded only for them.
 */
async function junitTests(junit: string, startedAt: number, options: { task: string; testOutput: boolean; now: number; skip: ReadonlySet<string> }) {
  const { reportFiles, testEventsFromReports } = await import('./test-reports.js');
  return testEventsFromReports(reportFiles(junit, process.cwd()).filter((f) => !options.skip.has(f)), startedAt, options);
}

function signalNumber(signal: NodeJS.Signals): number | undefined {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };
  return numbers[signal];
}
