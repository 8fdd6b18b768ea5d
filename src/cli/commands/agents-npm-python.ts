// `buildscope agent python` and `buildscope agent npm`: how to enable the pytest plugin and the
// npm preload. They join the `agent` command when another command file has made it (this file
// sorts after agent.ts on purpose), and make it otherwise.

import type { Command } from 'commander';

function agentCommand(program: Command): Command {
  return program.commands.find((c) => c.name() === 'agent') ?? program.command('agent').description('Capture agents that send builds to Buildscope');
}

export function register(program: Command): void {
  const agent = agentCommand(program);
  agent
    .command('python')
    .description('Print how to record pytest sessions (pytest -p buildscope_pytest), or install the plugin into a virtual environment')
    .option('--install', 'install the plugin into a virtual environment so that pytest loads it by itself')
    .option('--venv <dir>', 'the virtual environment to install into (default $VIRTUAL_ENV)')
    .action(async (opts: { install?: boolean; venv?: string }) => {
      const { fail } = await import('./_fail.js');
      const { pythonInstructions, installIntoVenv, InstallError } = await import('../../agents/python/install.js');
      if (!opts.install) {
        if (opts.venv !== undefined) fail('agent python', '--venv goes with --install');
        process.stdout.write(pythonInstructions(process.env['BUILDSCOPE_SERVER']));
        return;
      }
      const venv = opts.venv ?? process.env['VIRTUAL_ENV'];
      if (!venv) return fail('agent python', 'no virtual environment: activate one or give --venv DIR');
      try {
        const site = installIntoVenv(venv);
        process.stdout.write(`Installed buildscope_pytest into ${site}; pytest in ${venv} now records every session (BUILDSCOPE_DISABLE=1 turns it off).\n`);
      } catch (e) {
        if (e instanceof InstallError) fail('agent python', e.message);
        throw e;
      }
    });
  agent
    .command('npm')
    .description('Print how to record every npm/yarn/pnpm command of a CI job with NODE_OPTIONS (or use: buildscope run -- npm run build)')
    .action(async () => {
      const { withPreload } = await import('../../agents/npm/run.js');
      process.stdout.write(
        [
          '# Record one command (exits with its status, output untouched):',
          'npx buildscope run -- npm run build',
          '# Or record every npm, yarn and pnpm command of a job without changing them:',
          `export NODE_OPTIONS="${withPreload(undefined)}"`,
          `export BUILDSCOPE_SERVER=${process.env['BUILDSCOPE_SERVER'] ?? 'http://localhost:5080'}`,
          'export BUILDSCOPE_ACCESS_KEY=<access key with the publishScan permission>',
          '',
        ].join('\n'),
      );
    });
}
