// `buildscope mirror URL [--token T] [--since 0] [--data DIR | --db URL]`: copies another
// server's builds (and their events) through its export API into the local store.

import type { Command } from 'commander';
import { BUILD_ID_PATTERN, BUILD_ID_WORDS } from '../../store/ingest/build-id.js';
import { fail as failWith } from './_fail.js';

interface MirrorCliOptions {
  token?: string;
  since: string;
  after?: string;
  concurrency: string;
  follow?: boolean;
  data?: string;
  db?: string;
  config?: string;
  progress?: boolean;
  giveUpAfter: string;
}

export function register(program: Command): void {
  program
    .command('mirror <url>')
    .description("Mirror another server's builds through its export API (/build-export/v2) into the local database")
    .option('--token <token>', 'access key or access token of the source server (default: $BUILDSCOPE_TOKEN)')
    .option('--since <date>', 'first builds to copy: 0 (all), Unix epoch ms, an ISO 8601 timestamp, a relative time (-7d), or now (with --follow)', '0')
    .option('--after <buildId>', 'resume after this build ID (the last one mirrored)')
    .option('--concurrency <n>', 'event streams open at once', '6')
    .option('--follow', 'keep going: mirror new builds as the source receives them')
    .option('--data <dir>', 'data directory of the embedded SQLite database (default ./.buildscope)')
    .option('--db <url>', 'postgres:// URL of a PostgreSQL database')
    .option('--config <file>', 'YAML configuration file')
    .option('--give-up-after <seconds>', 'stop with an error when the source cannot be reached for this long', '60')
    .option('--no-progress', 'no progress display')
    .action(async (url: string, opts: MirrorCliOptions) => {
      const { cliConfig } = await import('./_config.js');
      const fail: (message: string) => never = (message) => failWith('mirror', message);
      try {
        new URL(url);
      } catch {
        fail(`not a URL: ${url}`);
      }
      const concurrency = Number(opts.concurrency);
      if (!/^\d+$/.test(opts.concurrency) || concurrency < 1 || concurrency > 64) fail(`--concurrency must be a whole number from 1 to 64, got '${opts.concurrency}'`);
      // The export API takes 0, epoch ms or now; an ISO 8601 timestamp (up to 9 fraction digits)
      // or a relative time (-7d) is turned into epoch ms here.
      let since = opts.since;
      if (!/^(\d+|now)$/.test(since)) {
        const { parseTimestamp } = await import('../../query/values.js');
        const t = parseTimestamp(since, Date.now());
        if (!t.ok) fail(`--since must be 0, a Unix epoch time in ms, now, an ISO 8601 timestamp or a relative time such as -7d; got '${opts.since}'`);
        since = String(Math.max(0, t.value.instant));
      }
      // Build IDs are 13 characters of 0-9 and a-z (the export API's own check, made before connecting).
      if (opts.after !== undefined && !BUILD_ID_PATTERN.test(opts.after)) fail(`--after needs a build ID (${BUILD_ID_WORDS}, as mirror printed it), got '${opts.after}'`);
      const giveUpAfter = Number(opts.giveUpAfter);
      if (!/^\d+(\.\d+)?$/.test(opts.giveUpAfter) || giveUpAfter <= 0) fail(`--give-up-after needs a number of seconds above 0, got '${opts.giveUpAfter}'`);

      const { openDatabase } = await import('../../db/database.js');
      const { openBuildStore } = await import('../../store/build-store.js');
      const { mirror } = await import('../../mirror/mirror.js');
      const { ExportRequestError, ExportUnreachableError } = await import('../../mirror/sse-client.js');
      const { createLogger } = await import('../../log.js');

      const config = cliConfig('mirror', opts);
      const logger = createLogger('mirror');
      const database = await openDatabase(config.database);
      const store = await openBuildStore(database, { logger });
      const abort = new AbortController();
      const stop = (): void => abort.abort(new Error('interrupted'));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);

      const tty = opts.progress !== false && process.stderr.isTTY;
      const { SingleBar, Presets } = await import('cli-progress');
      const bar = tty
        ? new SingleBar(
            { format: 'mirror [{bar}] {value}/{total} builds ({stored} new, {unchanged} known, {rejected} failed) | {events} events | {rate} builds/s | eta {eta_formatted}', hideCursor: true, stream: process.stderr },
            Presets.shades_classic,
          )
        : undefined;
      const started = Date.now();
      bar?.start(0, 0, { stored: 0, unchanged: 0, rejected: 0, events: 0, rate: 0 });
      let lastLog = 0;
      const token = opts.token ?? process.env['BUILDSCOPE_TOKEN'];
      try {
        const result = await mirror(store, {
          source: url,
          ...(token ? { token } : {}),
          since,
          ...(opts.after ? { afterBuild: opts.after } : {}),
          concurrency,
          giveUpAfterMs: giveUpAfter * 1000,
          follow: opts.follow === true,
          signal: abort.signal,
          onReconnect: (reason, last) => logger.warn({ lastEventId: last }, `reconnecting: ${reason}`),
          onProgress: (p) => {
            const rate = Math.round((p.builds * 1000) / Math.max(1, Date.now() - started));
            // The source counts what it has to send (total); an old source does not: then no ETA.
            const total = Math.max(p.total ?? p.builds, p.builds);
            const etaSeconds = p.total !== undefined && rate > 0 ? Math.round((total - p.builds) / rate) : undefined;
            if (bar) {
              bar.setTotal(total);
              bar.update(p.builds, { ...p, rate });
            } else if (opts.progress !== false && Date.now() - lastLog > 2000) {
              lastLog = Date.now();
              logger.info({ ...p, total, rate, ...(etaSeconds !== undefined ? { etaSeconds } : {}) }, p.total !== undefined ? `mirrored ${p.builds} of ${total} builds` : `mirrored ${p.builds} builds`);
            }
          },
        });
        bar?.stop();
        for (const f of result.failures.slice(0, 20)) logger.error(`build ${f.buildId}: ${f.error}`);
        process.stdout.write(
          `Mirrored ${result.builds} builds (${result.stored} new, ${result.unchanged} already present, ${result.rejected} failed), ${result.events} events` +
            (result.lastBuildId ? `; resume with --after ${result.lastBuildId}` : '') +
            '\n',
        );
        process.exitCode = result.rejected > 0 ? 1 : 0;
      } catch (e) {
        bar?.stop();
        if (e instanceof ExportUnreachableError) fail(`${e.message}; --give-up-after sets how long to try`);
        // The listing resumes with Last-Event-ID: the source answers 400 when it has no such build.
        if (e instanceof ExportRequestError && e.status === 400 && opts.after !== undefined && /Last-Event-ID/.test(e.message)) {
          fail(`--after ${opts.after}: the source has no build ${opts.after} that this token can see (give the ID mirror printed last, or leave --after out)`);
        }
        if (e instanceof ExportRequestError) fail(e.message);
        if (abort.signal.aborted) fail('interrupted');
        throw e;
      } finally {
        await store.close().catch(() => undefined);
        await database.close().catch(() => undefined);
      }
    });
}
