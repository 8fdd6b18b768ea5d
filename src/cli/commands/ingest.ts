// `buildscope ingest FILE|-`: stores NDJSON builds (one per line) in the build store.

import type { Command } from 'commander';
import { errorLine, fail } from './_fail.js';
import { DEFAULT_BATCH_SIZE, SQLITE_BULK_BATCH_SIZE } from '../../store/batches.js';

interface Options {
  data?: string;
  db?: string;
  json?: boolean;
  batchSize?: string;
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
      const counts = { stored: 0, unchanged: 0, rejected: 0, incomplete: 0 };
      const bar = process.stderr.isTTY && !opts.json && size > 1_000_000 ? await progressBar(size) : undefined;
      const started = performance.now();
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
            bar?.update(bytes);
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

async function progressBar(total: number): Promise<{ update(v: number): void; stop(): void }> {
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
