// The `buildscope` command line. Each sub-command lives in src/cli/commands/<name>.ts and exports
// `register(program)`; they are discovered here so that adding a command touches one file.
// Command modules keep their top-level imports light and load heavy code inside their actions.
// Only the modules of the command being run are loaded (the files whose name starts with its
// first word: `agent` loads agent.ts and agents-npm-python.ts); help, the version and a word that
// names no command load them all. `buildscope run -- <command>` is timed against the bare command
// (bench/run-overhead.ts), so its start loads nothing else.

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import { failWith } from './commands/_fail.js';

const here = dirname(fileURLToPath(import.meta.url));

/** Commands that keep running as servers. */
const SERVERS = new Set(['serve', 'provenance', 'cache-node']);

/**
 * Runs a command as the entry points do (bin/buildscope.js, src/cli/run.ts). The commands load
 * their modules lazily; a dynamic import awaited while nothing else is pending can end the
 * process with status 13, "unsettled top-level await", before the command has started anything
 * (measured: `serve --workers 2` on a loaded machine, 10 of 36 starts from the compiled command,
 * and from the sources under tsx before this was there). A timer holds the process until the
 * command's start is done; what it starts (a server, child processes) holds it from then on.
 */
export async function runCommand(argv: readonly string[]): Promise<void> {
  const keepAlive = setInterval(() => undefined, 60_000);
  try {
    await main(argv);
  } finally {
    clearInterval(keepAlive);
  }
}

export async function main(argv: readonly string[]): Promise<void> {
  /** The command being run (its first word), for error lines. */
  let running = '';
  // `| head` closes standard output early: that ends the command quietly, as it does for other tools.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    failWith(running, e);
  });
  // Whatever escapes an action (or an event handler it started) ends as one line, never a stack.
  // A crash of a running server is a defect to report, so there the stack follows the line.
  const crashed = (e: unknown): never => {
    if (SERVERS.has(running)) process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
    return failWith(running, e);
  };
  process.on('uncaughtException', crashed);
  process.on('unhandledRejection', crashed);

  // `run -- <command>`: straight to the action (commands/run.ts), without the option parser.
  if (argv[0] === 'run' && argv[1] === '--' && argv.length > 2) {
    running = 'run';
    try {
      const { runCommand } = await import('./commands/run.js');
      await runCommand(argv.slice(2));
    } catch (e) {
      failWith(running, e);
    }
    return;
  }

  const { Command } = await import('commander');
  const program = new Command('buildscope')
    .description('Buildscope: build analytics server, advanced build search, export, provenance and build cache node.')
    .version(version(), '-V, --version', 'print the version')
    .showHelpAfterError();
  const dir = join(here, 'commands');
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const files = commandFiles(
    readdirSync(dir).filter((f) => f.endsWith(ext) && !f.endsWith(`.d${ext}`) && !f.startsWith('_')),
    argv[0],
    ext,
  );
  for (const f of files) {
    const mod = (await import(pathToFileURL(join(dir, f)).href)) as { register?: (p: Command) => void };
    mod.register?.(program);
  }
  program.hook('preAction', (_program, action) => {
    let top: Command = action;
    while (top.parent && top.parent !== program) top = top.parent;
    running = top === program ? '' : top.name();
  });
  try {
    await program.parseAsync(queryMayStartWithDash(program, argv), { from: 'user' });
  } catch (e) {
    failWith(running, e);
  }
}

/**
 * The command modules to load for a command line whose first word is `word`: those whose file name
 * starts with it, or every one when the word is an option (`--help`, `--version`), absent, or names
 * no command file.
 */
export function commandFiles(files: readonly string[], word: string | undefined, ext: string): string[] {
  const all = [...files].sort();
  if (word === undefined || word.startsWith('-') || !/^[a-z][a-z0-9-]*$/.test(word)) return all;
  // `<word>.js`, and `<word>-more.js` or `<word>s-more.js` (agents-npm-python.ts adds to `agent`).
  const mine = all.filter((f) => f.startsWith(word) && (f.slice(word.length) === ext || /^s?-/.test(f.slice(word.length))));
  return mine.length > 0 ? mine : all;
}

function version(): string {
  // package.json is two levels up from both src/cli/ and dist/cli/.
  return (JSON.parse(readFileSync(join(here, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * A search query may start with `-` (`search '-user:bot'`), which the option parser would take for
 * an unknown option. For a command whose first argument is `<query>`, the first word that starts
 * with `-` and is none of the command's options is that query: it is moved behind `--`, where
 * nothing is read as an option. A command line that already has `--` is left as it is.
 */
export function queryMayStartWithDash(program: Command, argv: readonly string[]): readonly string[] {
  const [name, ...rest] = argv;
  const command = program.commands.find((c) => c.name() === name || c.aliases().includes(name ?? ''));
  if (!command || command.registeredArguments[0]?.name() !== 'query' || rest.includes('--')) return argv;
  const takesValue = new Map<string, boolean>([['-h', false], ['--help', false]]);
  for (const o of command.options) {
    for (const flag of [o.short, o.long]) if (flag) takesValue.set(flag, o.required || o.optional);
  }
  const kept: string[] = [];
  let query: string | undefined;
  let positional = false;
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!;
    if (!word.startsWith('-') || word === '-') {
      positional = true;
      kept.push(word);
      continue;
    }
    const flag = word.split('=')[0]!;
    const known = takesValue.get(flag);
    if (known === undefined && query === undefined && !positional) {
      query = word;
      continue;
    }
    kept.push(word);
    if (known === true && !word.includes('=') && i + 1 < rest.length) kept.push(rest[++i]!);
  }
  return query === undefined ? argv : [name!, ...kept, '--', query];
}
