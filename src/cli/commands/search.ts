// `buildscope search 'QUERY' [--json] [--limit N]`: runs an advanced search query over the store.

import type { Command } from 'commander';
import { fail } from './_fail.js';

interface Options {
  json?: boolean;
  limit: string;
  data?: string;
  db?: string;
}

export function register(program: Command): void {
  program
    .command('search')
    .description('Search builds with the advanced search query language (newest first)')
    .argument('<query>', "the query, e.g. 'buildOutcome:failed project:pay*'")
    .option('--json', 'print the builds with their attributes as a JSON array')
    .option('--limit <n>', 'maximum number of builds', '20')
    .option('--data <dir>', 'data directory of the embedded SQLite database (default ./.buildscope)')
    .option('--db <url>', 'postgres:// URL of a PostgreSQL database (instead of --data)')
    .action(async (text: string, opts: Options) => {
      const limit = Number(opts.limit);
      if (!/^\d+$/.test(opts.limit) || !Number.isSafeInteger(limit)) fail('search', `--limit needs a non-negative integer, got '${opts.limit}'`);
      const { parseQuery, formatDiagnostic } = await import('../../query/index.js');
      const parsed = parseQuery(text, { now: Date.now() });
      if (!parsed.ok || parsed.expr === undefined) {
        for (const d of parsed.diagnostics) process.stderr.write(formatDiagnostic(text, d) + '\n');
        process.exit(1);
      }
      const { openStoreAt } = await import('../../store/open.js');
      const { SEE_EVERYTHING } = await import('../../store/types.js');
      const { NAMED_FIELDS } = await import('../../query/catalog.js');
      const opened = await openStoreAt(opts, { mustExist: true });
      try {
        const builds = await opened.store.listBuilds({
          query: parsed.expr,
          visibility: SEE_EVERYTHING,
          maxBuilds: limit,
          reverse: true,
          withAttributes: true,
        });
        if (opts.json) {
          process.stdout.write(JSON.stringify(builds, null, 2) + '\n');
          return;
        }
        const rows = builds.map((b) => {
          const a = 'attributes' in b ? b.attributes : {};
          const dur = a[NAMED_FIELDS.buildDuration.name];
          return [
            b.id,
            new Date(b.availableAt).toISOString().replace('T', ' ').slice(0, 19),
            b.toolType,
            b.project ?? '',
            String(a[NAMED_FIELDS.buildOutcome.name] ?? ''),
            typeof dur === 'number' ? `${(dur / 1000).toFixed(1)}s` : '',
            String(a[NAMED_FIELDS.user.name] ?? ''),
          ];
        });
        const header = ['ID', 'AVAILABLE (UTC)', 'TOOL', 'PROJECT', 'OUTCOME', 'DURATION', 'USER'];
        const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
        const fmt = (r: readonly string[]): string => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
        process.stdout.write([fmt(header), ...rows.map(fmt)].join('\n') + '\n');
        process.stderr.write(`${builds.length} build${builds.length === 1 ? '' : 's'}\n`);
      } finally {
        await opened.close();
      }
    });
}
