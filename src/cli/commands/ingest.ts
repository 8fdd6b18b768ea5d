// `buildscope ingest FILE|-`: stores NDJSON builds (one per line) in the build store.

import type { Command } from 'commander';
import { errorLine, fail } from './_fail.js';
import { DEFAULT_BATCH_SIZE, SQLITE_BULK_BATCH_SIZE } from '../../store/ingest/batches.js';

interface Options {
  data?: string;
  db?: string;
  json?: boolean;
  batchSize?: string;
  progress?: boolean;
  progressInterval: string;
}

type Counts = { stored: number; unchanged: number; rejected: number; incomplete: number };

/** What ingest shows while it runs; updated after every committed batch. */
interface Progress {
  update(bytes: number, counts: Counts): void;
  stop(): void;
}

export function register(program: Command): void {
  program
    .command('ingest')
    .description('Store builds from an NDJSON file (one build per line; - reads standard input)')
    .argument('<file>', 'NDJSON file, or - for standard input')
    .option('--data <dir>', 'data directory of the embedded SQLite database (default ./.buildscope)')
    .option('--db <url>', 'postgres:// URL of a PostgreSQL database (instead of --data)')
    .option('--json', 'print each line\'s result as a JSON line as soon as it is committed')
    .option('--batch-size <n>', `lines per transaction (default ${SQLITE_BULK_BATCH_SIZE} on SQLite, ${DEFAULT_BATCH_SIZE} on PostgreSQL)`)
    .option('--progress-interval <seconds>', 'when standard error is not a terminal: a progress line at most this often (0: after every batch)', '10')
    .option('--no-progress', 'no progress display')
    .action(async (file: string, opts: Options) => {
      const { createReadStream, statSync } = await import('node:fs');
      const { openStoreAt } = await import('../../store/open.js');
      let size = 0;
      if (file !== '-') {
        let stat;
        try {
          stat = statSync(file);
        } catch (e) {
          fail('ingest', `cannot read ${errorLine(e)}`);
        }
        if (stat.isDirectory()) fail('ingest', `${file} is a directory: give an NDJSON file, or - for standard input`);
        size = stat.size;
      }
      const batchSize = opts.batchSize === undefined ? undefined : Number(opts.batchSize);
      if (batchSize !== undefined && !(Number.isInteger(batchSize) && batchSize > 0)) fail('ingest', `--batch-size needs a positive integer, got '${opts.batchSize}'`);
      const interval = Number(opts.progressInterval);
      if (!/^\d+(\.\d+)?$/.test(opts.progressInterval)) fail('ingest', `--progress-interval needs a number of seconds, got '${opts.progressInterval}'`);
      const opened = await openStoreAt(opts);
      const source = file === '-' ? process.stdin : createReadStream(file);
      let bytes = 0;
      // Counts bytes for the progress bar as the store pulls them (no second reader on the stream).
      async function* input(): AsyncGenerator<Uint8Array> {
        for await (const c of source as AsyncIterable<Buffer>) {
          bytes += c.length;
          yield c;
        }
      }
      const counts: Counts = { stored: 0, unchanged: 0, rejected: 0, incomplete: 0 };
      const started = performance.now();
      const bar: Progress | undefined =
        opts.progress === false
          ? undefined
          : process.stderr.isTTY
            ? // A file's size gives a total and an ETA; standard input has neither, so counts and rate.
              size > 1_000_000 && !opts.json
              ? await progressBar(size)
              : file === '-'
                ? await countingBar(started)
                : undefined
            : progressLines(interval * 1000, started);
      try {
        await opened.store.ingestNdjson(input(), {
          keepResults: false,
          bulk: true,
          ...(batchSize !== undefined ? { batchSize } : {}),
          onResults: (results) => {
            let out = '';
            for (const r of results) {
              counts[r.status]++;
              if (r.status !== 'rejected' && !r.complete) counts.incomplete++;
              if (opts.json) out += JSON.stringify(r) + '\n';
              else if (r.status === 'rejected') process.stderr.write(`line ${r.line}: ${r.path}: ${r.error}\n`);
            }
            if (out) process.stdout.write(out);
            bar?.update(bytes, counts);
          },
        });
      } finally {
        bar?.stop();
        await opened.close();
      }
      const seconds = (performance.now() - started) / 1000;
      const rate = Math.round((counts.stored + counts.unchanged) / Math.max(seconds, 1e-3));
      process.stderr.write(
        `${counts.stored} stored (${counts.incomplete} of them still incomplete), ${counts.unchanged} unchanged, ${counts.rejected} rejected in ${seconds.toFixed(1)} s (${rate} builds/s) into ${opened.handle.describe}\n`,
      );
      process.exitCode = counts.rejected > 0 ? 1 : 0;
    });
}

function rate(done: number, started: number): number {
  return Math.round(done / Math.max((performance.now() - started) / 1000, 1e-3));
}

/** Not a terminal (a log, a CI job): one line now and then, so that a long ingest is seen to move. */
function progressLines(everyMs: number, started: number): Progress {
  let last = performance.now();
  return {
    update: (_bytes, c) => {
      const now = performance.now();
      if (now - last < everyMs) return;
      last = now;
      const lines = c.stored + c.unchanged + c.rejected;
      process.stderr.write(`ingest: ${lines} lines so far (${c.stored} stored, ${c.unchanged} unchanged, ${c.rejected} rejected), ${rate(c.stored + c.unchanged, started)} builds/s\n`);
    },
    stop: () => undefined,
  };
}

/** Standard input on a terminal: how many lines so far and how fast, with no total to aim at. */
async function countingBar(started: number): Promise<Progress> {
  const { default: cliProgress } = await import('cli-progress');
  const bar = new cliProgress.SingleBar(
    { format: 'ingest | {value} lines ({stored} stored, {unchanged} unchanged, {rejected} rejected) | {rate} builds/s', hideCursor: true, stream: process.stderr },
    cliProgress.Presets.shades_classic,
  );
  bar.start(0, 0, { stored: 0, unchanged: 0, rejected: 0, rate: 0 });
  return {
    update: (_bytes, c) => {
      const lines = c.stored + c.unchanged + c.rejected;
      bar.setTotal(lines);
      bar.update(lines, { ...c, rate: rate(c.stored + c.unchanged, started) });
    },
    stop: () => bar.stop(),
  };
}

async function progressBar(total: number): Promise<Progress> {
  const { default: cliProgress } = await import('cli-progress');
  const bar = new cliProgress.SingleBar(
    { format: 'ingest [{bar}] {percentage}% | {value_mb}/{total_mb} MB | eta {eta}s', hideCursor: true, stream: process.stderr },
    cliProgress.Presets.shades_classic,
  );
  const mb = (v: number): string => (v / 1e6).toFixed(1);
  bar.start(total, 0, { value_mb: mb(0), total_mb: mb(total) });
  return {
    update: (v) => bar.update(Math.min(v, total), { value_mb: mb(v) }),
    stop: () => bar.stop(),
  };
}
