// Store migration 0021: the test dimension (0020) for the builds stored before it. 0020 created the
// tables empty and the ingest fills them from then on, so a store upgraded across 0020 had no test
// history before the upgrade. Here each such build's events are decoded again (events are the
// source of truth) and its rows written as the ingest writes them (ingest-plan.ts: the same
// testRunsOf and buildFailuresOf, the same identity key, the same ord), in batches of seqs, with
// progress in the log.
//
// Which builds: the available ones below the first seq that has any row of the dimension (every
// build from there on went through the ingest's writer), and of those only the ones with no row (a
// store rewound to before 0020 and migrated again, in the tests, is filled once). A store that
// never had a test or a build failure reads every build once.

import { sql, type Kysely } from 'kysely';
import { eventsByKey } from './events-read.js';
import { buildFailuresOf, testKeyOf, testRunsOf, type FailureTuple } from './test-runs.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/** Builds read per statement. */
const PAGE = 500;

export type Progress = (done: number, total: number) => void;

export async function backfillTestDimension(db: Db, dialect: 'sqlite' | 'postgres', progress: Progress): Promise<number> {
  const first = await sql<{ first: number | string | null }>`SELECT min(s) AS first FROM (SELECT min(seq) AS s FROM test_runs UNION ALL SELECT min(seq) AS s FROM build_failures) AS m`.execute(db);
  const bound = first.rows[0]?.first == null ? null : Number(first.rows[0].first);
  const below = bound === null ? sql`` : sql`AND b.seq < ${bound}`;
  const unfilled = sql`b.seq IS NOT NULL ${below}
    AND NOT EXISTS (SELECT 1 FROM test_runs AS r WHERE r.seq = b.seq) AND NOT EXISTS (SELECT 1 FROM build_failures AS f WHERE f.seq = b.seq)`;
  const total = Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM builds AS b WHERE ${unfilled}`.execute(db)).rows[0]!.n);
  if (total === 0) return 0;

  const ids = dictionary(db, 'tests', 'test_key');
  const groups = dictionary(db, 'failure_groups', 'group_key');
  const groupOf = (f: FailureTuple | null) => (f === null ? null : groups.id(f[0], { group_key: f[0], sample: f[1] }));
  let done = 0;
  let after = 0;
  for (;;) {
    const builds = (
      await sql<{ seq: number | string; tool_type: string; project_name: string | null; events_key: number | string | null }>`SELECT b.seq, b.tool_type, b.project_name, b.events_key
        FROM builds AS b WHERE ${unfilled} AND b.seq > ${after} ORDER BY b.seq LIMIT ${PAGE}`.execute(db)
    ).rows;
    if (builds.length === 0) break;
    const events = await eventsByKey(db, dialect, builds.flatMap((b) => (b.events_key === null ? [] : [Number(b.events_key)])));
    // PostgreSQL runs the migration in one transaction; on SQLite each batch commits by itself, so
    // a run that was stopped starts over at the first build without rows.
    await batch(db, dialect, async (t) => {
      for (const b of builds) {
        const seq = Number(b.seq);
        const own = b.events_key === null ? [] : (events.get(Number(b.events_key)) ?? []);
        const runs = [];
        for (const [ord, [suite, name, parameters, outcome, attempt, start, duration, failure]] of testRunsOf(own).entries()) {
          const key = testKeyOf(b.tool_type, b.project_name, suite, name, parameters);
          const testId = await ids.id(key, { test_key: key, tool_type: b.tool_type, project_name: b.project_name, suite, name, parameters }, t);
          runs.push({ seq, ord, test_id: testId, outcome, attempt, start_ms: start, duration_ms: duration, group_id: await groupOf(failure) });
        }
        const failures = [];
        for (const [ord, f] of buildFailuresOf(own).entries()) failures.push({ seq, ord, group_id: await groupOf(f) });
        // Within SQLite's 999 variables a statement: 8 columns a row.
        for (let i = 0; i < runs.length; i += 100) await t.insertInto('test_runs').values(runs.slice(i, i + 100)).execute();
        for (let i = 0; i < failures.length; i += 300) await t.insertInto('build_failures').values(failures.slice(i, i + 300)).execute();
      }
    });
    after = Number(builds.at(-1)!.seq);
    done += builds.length;
    progress(done, total);
  }
  return done;
}

async function batch(db: Db, dialect: 'sqlite' | 'postgres', write: (t: Db) => Promise<void>): Promise<void> {
  if (dialect === 'postgres') return write(db);
  await sql`BEGIN IMMEDIATE`.execute(db);
  try {
    await write(db);
    await sql`COMMIT`.execute(db);
  } catch (e) {
    await sql`ROLLBACK`.execute(db);
    throw e;
  }
}

/** A dictionary table's ids by key, added where missing (the migration is the store's only writer while it runs). */
function dictionary(db: Db, table: string, keyColumn: string) {
  // Ids of rows a batch rolled back are not kept: a failed batch fails the migration.
  const known = new Map<string, number>();
  return {
    async id(key: string, row: Record<string, unknown>, t: Db = db): Promise<number> {
      const cached = known.get(key);
      if (cached !== undefined) return cached;
      const found = await t.selectFrom(table).select('id').where(keyColumn, '=', key).executeTakeFirst();
      const id = Number(found?.id ?? (await t.insertInto(table).values(row).returning('id').executeTakeFirstOrThrow()).id);
      known.set(key, id);
      return id;
    },
  };
}
