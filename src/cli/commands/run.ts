// `buildscope run -- <command>`: records an npm, yarn or pnpm command as a jsbuild build.

import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('run')
    .description('Run an npm/yarn/pnpm command and record it as a build (buildscope run -- npm run build); exits with its exit code')
    .argument('<command...>', 'the command and its arguments, after --')
    .allowUnknownOption()
    .action(runCommand);
}

/**
 * The command's action: also called by main.ts directly for `run -- <command>`, the form every
 * wrapped command takes, so that its start loads neither the option parser nor other commands.
 */
export async function runCommand(argv: string[]): Promise<void> {
  const { runRecorded } = await import('../../agents/npm/run.js');
  process.exitCode = await runRecorded(argv);
}
