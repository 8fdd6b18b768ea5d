// `buildscope run -- <command>`: records an npm, yarn or pnpm command as a jsbuild build.

import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('run')
    .description('Run an npm/yarn/pnpm command and record it as a build (buildscope run -- npm run build); exits with its exit code')
    .argument('<command...>', 'the command and its arguments, after --')
    .allowUnknownOption()
    .action(async (argv: string[]) => {
      const { runRecorded } = await import('../../agents/npm/run.js');
      process.exitCode = await runRecorded(argv);
    });
}
