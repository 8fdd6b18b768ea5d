// `buildscope demo-data --builds N [--seed S]`: realistic builds of all six tools as NDJSON on
// standard output, or stored directly when --data or --db is given.

import type { Command } from 'commander';
import { fail } from './_fail.js';

interface Options {
  builds: string;
  seed?: string;
  now?: string;
  unfinished?: string;
  data?: string;
  db?: string;
}

function int(name: string, v: string): number {
  const n = Number(v);
  if (!/^-?\d+$/.test(v) || !Number.isSafeInteger(n)) fail('demo-data', `${name} needs an integer, got '${v}'`);
  return n;
}

export function register(program: Command): void {
  program
    .command('demo-data')
    .description('Generate realistic demo builds (NDJSON on standard output, or stored with --data/--db)')
    .requiredOption('--builds <n>', 'number of builds')
    .option('--seed <s>', 'random seed: the same seed (and --now) gives the same builds (default: a new random seed, printed on standard error)')
    .option('--now <epochMs>', 'end of the 30-day window of start times (default: now)')
    .option('--unfinished <fraction>', 'fraction of builds sent without BuildFinished (default 0)')
    .option('--data <dir>', 'store the builds in the SQLite database of this data directory')
    .option('--db <url>', 'store the builds in this PostgreSQL database')
    .action(async (opts: Options) => {
      const { demoBuilds } = await import('../../store/demo/demo-data.js');
      const builds = int('--builds', opts.builds);
      const unfinished = opts.unfinished === undefined ? undefined : Number(opts.unfinished);
      if (unfinished !== undefined && !(unfinished >= 0 && unfinished <= 1)) fail('demo-data', `--unfinished needs a fraction between 0 and 1, got '${opts.unfinished}'`);
      // A random seed by default: the server's own demo builds (`serve --demo`) use seed 1, and
      // builds with the same IDs but other contents would be rejected when ingested beside them.
      let seed: number;
      if (opts.seed !== undefined) seed = int('--seed', opts.seed);
      else {
        const { randomInt } = await import('node:crypto');
        seed = randomInt(2, 2 ** 31);
        process.stderr.write(`demo-data: seed ${seed} (--seed ${seed} makes the same builds again)\n`);
      }
      const lines = demoBuilds({
        builds,
        seed,
        ...(opts.now !== undefined ? { now: int('--now', opts.now) } : {}),
        ...(unfinished !== undefined ? { unfinished } : {}),
      });
      if (opts.data === undefined && opts.db === undefined) {
        let buf = '';
        for (const l of lines) {
          buf += l + '\n';
          if (buf.length > 1 << 20) {
            if (!process.stdout.write(buf)) await new Promise((r) => process.stdout.once('drain', r));
            buf = '';
          }
        }
        process.stdout.write(buf);
        return;
      }
      const { openStoreAt } = await import('../../store/open.js');
      const opened = await openStoreAt(opts);
      async function* text(): AsyncGenerator<string> {
        for (const l of lines) yield l + '\n';
      }
      let stored = 0;
      let bar: { update(n: number): void; stop(): void } | undefined;
      if (process.stderr.isTTY && builds >= 5000) {
        const { default: cliProgress } = await import('cli-progress');
        const b = new cliProgress.SingleBar({ format: 'demo-data [{bar}] {value}/{total} builds | eta {eta}s', stream: process.stderr }, cliProgress.Presets.shades_classic);
        b.start(builds, 0);
        bar = b;
      }
      let done = 0;
      try {
        await opened.store.ingestNdjson(text(), {
          keepResults: false,
          bulk: true,
          onResults: (rs) => {
            stored += rs.filter((r) => r.status === 'stored').length;
            done += rs.length;
            bar?.update(done);
          },
        });
      } finally {
        bar?.stop();
        await opened.close();
      }
      process.stderr.write(`${stored} demo builds stored into ${opened.handle.describe}\n`);
    });
}
