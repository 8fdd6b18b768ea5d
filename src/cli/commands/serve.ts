// `buildscope serve`: the server on SQLite (default ./.buildscope) or PostgreSQL (--db URL).

import type { Command } from 'commander';
import { fail, failWith } from './_fail.js';

export function register(program: Command): void {
  program
    .command('serve')
    .description('Start the Buildscope server')
    .option('--host <host>', 'listen address (default 127.0.0.1)')
    .option('--port <port>', 'listen port (default 5080; 0 picks a free one)')
    .option('--hostname <name>', 'public hostname of the server; access tokens are bound to it (default localhost)')
    .option('--data <dir>', 'data directory of the embedded SQLite database (default ./.buildscope)')
    .option('--db <url>', 'postgres:// URL of a PostgreSQL database (instead of --data)')
    .option('--config <file>', 'YAML configuration file (command-line options win)')
    .option('--demo <n>', 'load n demo builds when the database has no builds yet')
    .option('--workers <n>', 'server processes sharing the port, 1 to 64 (default 1)')
    .option('--bes-port <port>', 'serve the Build Event Service for Bazel (--bes_backend) on this port (off by default; npm start uses 5081; 0 picks a free one)')
    .action(async (opts: { host?: string; port?: string; hostname?: string; data?: string; db?: string; config?: string; demo?: string; workers?: string; besPort?: string }) => {
      const { cliConfig } = await import('./_config.js');
      const { startServer } = await import('../../server.js');
      const { closeOnSignals } = await import('./_signals.js');
      const { createLogger } = await import('../../log.js');
      let demo: number | undefined;
      if (opts.demo !== undefined) {
        demo = Number(opts.demo);
        if (!/^\d+$/.test(opts.demo)) fail('serve', `--demo needs a number of builds, got '${opts.demo}'`);
      }
      const config = cliConfig('serve', opts);
      const logger = createLogger('buildscope');
      const cluster = (await import('node:cluster')).default;
      const workers = await import('../../workers.js');
      if (config.server.workers > 1 && cluster.isPrimary) {
        try {
          await workers.runPrimary({ config, logger, ...(demo !== undefined ? { demo } : {}) }, config.server.workers);
        } catch (e) {
          // The one-line error says it; the stack is for BUILDSCOPE_DEBUG or a debug log level.
          logger.debug({ err: e }, 'the server could not start');
          failWith('serve', e, 'the server could not start');
        }
        return;
      }
      const signals = closeOnSignals(logger, config.server.stopTimeoutSeconds);
      if (cluster.isWorker) workers.stopWhenAsked(signals.stop);
      try {
        // A worker of several: the primary loaded the demo and prints where to go.
        const server = await startServer({ config, logger, ...(cluster.isWorker ? { print: () => undefined } : demo !== undefined ? { demo } : {}) });
        signals.attach(server);
        if (cluster.isWorker) workers.reportListening(server);
      } catch (e) {
        logger.debug({ err: e }, 'the server could not start');
        failWith('serve', e, 'the server could not start');
      }
    });
}
