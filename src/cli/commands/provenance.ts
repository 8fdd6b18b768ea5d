// `buildscope provenance --server URL --access-key K [--port P]`: the provenance service on its
// own, reading builds from a Buildscope server over its REST API.
// `buildscope provenance rotate-key`: a new signing key becomes active; old keys keep verifying.

import type { Command } from 'commander';
import { fail as failWith } from './_fail.js';

interface Opts {
  server?: string;
  accessKey?: string;
  host?: string;
  port?: string;
  data?: string;
  db?: string;
  config?: string;
}

// Annotated so that calls narrow types like a function declaration returning never.
const fail: (message: string, code?: number) => never = (message, code = 2) => failWith('provenance', message, code);

export function register(program: Command): void {
  const cmd = program
    .command('provenance')
    .description('Run the provenance service alone, reading builds from a Buildscope server')
    .option('--server <url>', 'base URL of the Buildscope server to read builds from (required)')
    .option('--access-key <key>', 'access key for reading builds from that server (or BUILDSCOPE_ACCESS_KEY)')
    .option('--host <host>', 'listen address (default 127.0.0.1)')
    .option('--port <port>', 'listen port (default 5080; 0 picks a free one)')
    .option('--data <dir>', 'data directory: callers\' users and keys, signing keys, default object store (default ./.buildscope)')
    .option('--db <url>', 'postgres:// URL for callers\' users and keys (instead of --data)')
    .option('--config <file>', 'YAML configuration file (its `provenance` section)')
    .action(async (opts: Opts) => {
      const accessKey = opts.accessKey ?? process.env['BUILDSCOPE_ACCESS_KEY'];
      if (opts.server === undefined) fail('--server <url> is required');
      if (!/^https?:\/\//.test(opts.server)) fail(`--server must be an http(s) URL, got '${opts.server}'`);
      if (accessKey === undefined || accessKey === '') fail('--access-key <key> is required');
      const { cliConfig } = await import('./_config.js');
      const { createLogger } = await import('../../log.js');
      const { buildStandaloneApp } = await import('../../server.js');
      const config = cliConfig('provenance', opts);
      const logger = createLogger('provenance');
      const { closeOnSignals } = await import('./_signals.js');
      const signals = closeOnSignals(logger, config.server.stopTimeoutSeconds);
      try {
        const running = await buildStandaloneApp({ config, serverUrl: opts.server, accessKey, logger });
        const address = await running.app.listen({ host: config.server.host, port: config.server.port });
        logger.info({ address, server: opts.server }, 'provenance service listening');
        process.stdout.write(`provenance service listening on ${address}\n`);
        signals.attach(running);
      } catch (e) {
        fail((e as Error).message, 1);
      }
    });

  cmd
    .command('rotate-key')
    .description('Create a new signing key and make it the active one (old keys keep verifying)')
    .option('--data <dir>', 'data directory (default ./.buildscope)')
    .option('--config <file>', 'YAML configuration file (its `provenance` section)')
    .action(async (_opts: unknown, command: Command) => {
      // --data and --config are also options of `provenance` itself; commander gives them to the parent.
      const opts = command.optsWithGlobals<{ data?: string; config?: string }>();
      const { cliConfig } = await import('./_config.js');
      const { parseProvenanceConfig } = await import('../../provenance/config.js');
      const { rotateKey } = await import('../../provenance/keys.js');
      const { DEFAULT_DATA_DIR } = await import('../../db/database.js');
      const config = cliConfig('provenance', opts);
      const p = parseProvenanceConfig(config.provenance, config.database.data ?? DEFAULT_DATA_DIR);
      if (p.keys.files.length > 0) fail('provenance.keys.files names the keys: rotate by adding a file and setting provenance.keys.active');
      const key = rotateKey(p.keys.directory, p.keys.algorithm);
      process.stdout.write(`${key.keyid}\n`);
    });
}
