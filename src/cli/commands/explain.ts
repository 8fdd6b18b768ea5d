// `buildscope explain 'QUERY'`: the checked AST (or the diagnostics with a caret under each fault),
// the SQL the query compiles to on both dialects, and the query plan of the database at hand.

import type { Command } from 'commander';

interface Options {
  plan: boolean;
  data?: string;
  db?: string;
}

export function register(program: Command): void {
  program
    .command('explain')
    .description('Show how a search query is understood: checked AST, SQL for SQLite and PostgreSQL, and the query plan')
    .argument('<query>', "the query, e.g. 'buildOutcome:failed buildStartTime>-7d'")
    .option('--no-plan', 'skip the query plan (no database is opened)')
    .option('--data <dir>', 'data directory of the embedded SQLite database (default ./.buildscope)')
    .option('--db <url>', 'postgres:// URL of a PostgreSQL database (instead of --data)')
    .action(async (text: string, opts: Options) => {
      const { parseQuery, explainText } = await import('../../query/index.js');
      const now = Date.now();
      const explained = explainText(text, { now });
      process.stdout.write(explained.output + '\n');
      const parsed = parseQuery(text, { now });
      if (!parsed.ok || parsed.expr === undefined) process.exit(1);
      const { explainSql, explainPlan } = await import('../../sql/index.js');
      for (const dialect of ['sqlite', 'postgres'] as const) {
        const { sql, parameters } = explainSql(parsed.expr, dialect);
        process.stdout.write(`\nSQL (${dialect}):\n  ${sql}\n  parameters: ${JSON.stringify(parameters)}\n`);
      }
      if (!opts.plan) return;
      const { openStoreAt } = await import('../../store/open.js');
      const { DatabaseLocationError } = await import('../../db/database.js');
      let opened;
      try {
        opened = await openStoreAt(opts, { mustExist: true });
      } catch (e) {
        // The AST and the SQL are the query's alone; only the plan needs a store. Without one named
        // (--data, --db) and none at the default place, that is said and the command succeeds.
        if (!(e instanceof DatabaseLocationError) || opts.data !== undefined || opts.db !== undefined) throw e;
        process.stdout.write(`
Plan: needs a store (--data DIR or --db URL): ${e.message}
`);
        return;
      }
      try {
        const plan = await explainPlan(opened.handle, parsed.expr);
        process.stdout.write(`\nPlan (${opened.handle.dialect}, ${opened.handle.describe}):\n${plan.replace(/^/gm, '  ')}\n`);
      } finally {
        await opened.close();
      }
    });
}
