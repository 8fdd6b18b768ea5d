// `buildscope ingest-bep FILE [--execution-log LOG]`: stores a Bazel build from its JSON build event
// file (`bazel build ... --build_event_json_file=FILE`) as a targetbuild build, with each action's
// inputs from the invocation's `--execution_log_json_file` when given.

import type { Command } from 'commander';

interface Options {
  executionLog?: string;
  data?: string;
  db?: string;
  server?: string;
}

export function register(program: Command): void {
  program
    .command('ingest-bep')
    .description('Store a Bazel build from its --build_event_json_file file (locally, or on a server with --server)')
    .argument('<file>', 'the JSON build event file Bazel wrote')
    .option('--execution-log <file>', "Bazel's --execution_log_json_file of the same invocation: each action's inputs, for why an action missed the cache")
    .option('--server <url>', 'send the build to this Buildscope server (access key from BUILDSCOPE_ACCESS_KEY) instead of a local database')
    .option('--data <dir>', 'data directory of the embedded SQLite database (default ./.buildscope)')
    .option('--db <url>', 'postgres:// URL of a PostgreSQL database (instead of --data)')
    .action(async (file: string, opts: Options) => {
      const { fail } = await import('./_fail.js');
      const { buildFromEventFile } = await import('../../agents/bazel/ingest-bep.js');
      const { BepError } = await import('../../bes/bep-build.js');
      if (opts.server !== undefined && (opts.data !== undefined || opts.db !== undefined)) fail('ingest-bep', 'give either --server or --data/--db, not both');
      let build;
      try {
        build = await buildFromEventFile(file, {
          ...(opts.executionLog !== undefined ? { executionLog: opts.executionLog } : {}),
          warn: (message) => process.stderr.write(`buildscope ingest-bep: ${message}\n`),
        });
      } catch (e) {
        if (e instanceof BepError) fail('ingest-bep', e.message);
        throw e;
      }
      if (opts.server !== undefined) {
        const { agentSettings, sendBuild } = await import('../../agents/common-send.js');
        const outcome = await sendBuild(agentSettings({ ...process.env, BUILDSCOPE_SERVER: opts.server }), build);
        switch (outcome.kind) {
          case 'sent':
            process.stdout.write(`${outcome.link}\n`);
            return;
          case 'spooled':
            fail('ingest-bep', `not sent: ${outcome.reason} (kept in the spool; sent with the next build)`, 1);
            return;
          case 'rejected':
            fail('ingest-bep', `the server rejected the build: ${outcome.reason}`, 1);
            return;
          default: {
            const never: never = outcome;
            throw new Error(String(never));
          }
        }
      }
      const { openStoreAt } = await import('../../store/open.js');
      const { toIngestLine } = await import('../../agents/common-build.js');
      const opened = await openStoreAt(opts);
      try {
        const [result] = await opened.store.ingestNdjson(toIngestLine(build) + '\n');
        if (result?.status === 'rejected') fail('ingest-bep', `${result.path}: ${result.error}`, 1);
        process.stdout.write(`${result?.status === 'unchanged' ? 'unchanged' : 'stored'} build ${build.buildId} (${build.events.length} events) into ${opened.handle.describe}\n`);
      } finally {
        await opened.close();
      }
    });
}
