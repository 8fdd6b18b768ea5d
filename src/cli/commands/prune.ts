// `buildscope prune --older-than 90d [--dry-run]`: deletes the builds that started before then, in
// short batches (store/prune.ts), for operators who run retention from cron instead of `serve`.

import type { Command } from 'commander';
import { fail } from './_fail.js';

interface Options {
  olderThan?: string;
  dryRun?: boolean;
  data?: string;
  db?: string;
  batchSize?: string;
}

const UNIT_MS: Readonly<Record<string, number>> = { h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `90d`, `12h`, `2w` in milliseconds; undefined when it is not such a duration. */
export function parseAge(text: string): number | undefined {
  const m = /^(\d{1,6})([hdw])$/.exec(text.trim());
  if (m === null) return undefined;
  const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
  return ms > 0 ? ms : undefined;
}

export function register(program: Command): void {
  program
    .command('prune')
    .description('Delete the builds that started longer ago than --older-than (for cron; serve does it with the retention settings)')
    .requiredOption('--older-than <age>', 'age of the builds to delete: a number with h (hours), d (days) or w (weeks), e.g. 90d')
    .option('--dry-run', 'change nothing: print the IDs of the builds that would be deleted, and how many')
    .option('--data <dir>', 'data directory of the embedded SQLite database (default ./.buildscope)')
    .option('--db <url>', 'postgres:// URL of a PostgreSQL database (instead of --data)')
    .option('--batch-size <n>', 'builds per transaction (default 100)')
    .action(async (opts: Options) => {
      const age = parseAge(opts.olderThan ?? '');
      if (age === undefined) fail('prune', `--older-than needs an age such as 90d, 12h or 2w, got '${opts.olderThan}'`);
      if (opts.data !== undefined && opts.db !== undefined) fail('prune', 'give either --data or --db, not both');
      const batch = opts.batchSize === undefined ? undefined : Number(opts.batchSize);
      if (batch !== undefined && !(Number.isInteger(batch) && batch > 0 && batch <= 10_000)) fail('prune', `--batch-size needs a whole number from 1 to 10000, got '${opts.batchSize}'`);
      const { existsSync } = await import('node:fs');
      const { join } = await import('node:path');
      const { DEFAULT_DATA_DIR, openDatabase } = await import('../../db/database.js');
      if (opts.db === undefined) {
        // Never create a database to prune it.
        const file = join(opts.data ?? DEFAULT_DATA_DIR, 'buildscope.db');
        if (!existsSync(file)) fail('prune', `no Buildscope database at ${file}`);
      }
      const instant = Date.now() - age;
      const selection = { kind: 'startedBefore', instant } as const;
      const when = new Date(instant).toISOString();
      if (opts.dryRun) {
        // The database alone, without the store: opening the store would migrate it.
        const handle = await openDatabase(opts.db !== undefined ? { url: opts.db } : { data: opts.data ?? DEFAULT_DATA_DIR });
        try {
          const { countPruneCandidates, pruneCandidates } = await import('../../store/prune.js');
          let after: string | undefined;
          for (;;) {
            const page = await pruneCandidates(handle.db, selection, 1000, after, true);
            if (page.length === 0) break;
            process.stdout.write(page.map((c) => c.id).join('\n') + '\n');
            after = page.at(-1)!.id;
          }
          const n = await countPruneCandidates(handle.db, selection);
          process.stderr.write(`${n} builds started before ${when} and would be deleted from ${handle.describe} (dry run: nothing deleted)\n`);
        } catch (e) {
          fail('prune', (e as Error).message, 1);
        } finally {
          await handle.close();
        }
        return;
      }
      const { openStoreAt } = await import('../../store/open.js');
      let opened: Awaited<ReturnType<typeof openStoreAt>>;
      try {
        opened = await openStoreAt(opts);
      } catch (e) {
        fail('prune', (e as Error).message, 1);
      }
      const { DEFAULT_PRUNE_BATCH, countPruneCandidates } = await import('../../store/prune.js');
      const started = performance.now();
      let deleted = 0;
      try {
        const total = await countPruneCandidates(opened.handle.db, selection);
        process.stderr.write(`deleting ${total} builds that started before ${when} from ${opened.handle.describe}\n`);
        let lastLine = performance.now();
        for (;;) {
          const gone = await opened.store.deleteBuilds(selection, batch ?? DEFAULT_PRUNE_BATCH);
          if (gone.length === 0) break;
          deleted += gone.length;
          if (performance.now() - lastLine > 1000) {
            lastLine = performance.now();
            process.stderr.write(`${deleted}/${total} deleted\n`);
          }
        }
      } catch (e) {
        process.stderr.write(`buildscope prune: ${(e as Error).message} (after deleting ${deleted} builds)\n`);
        process.exitCode = 1;
      } finally {
        await opened.close();
      }
      const seconds = (performance.now() - started) / 1000;
      process.stderr.write(`${deleted} builds deleted in ${seconds.toFixed(1)} s\n`);
    });
}
