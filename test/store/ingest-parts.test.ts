// The ingest writes its input in parts (100 lines in a bulk load) inside transactions of up to
// batchSize lines
// (src/store/ingest/ingest.ts): a line that fails in the database is refused alone, a stalled input is
// committed (stored means listed) without waiting for the rest, and two loads on one store at
// once both store everything. SQLite and PostgreSQL.

import fc from 'fast-check';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { SEE_EVERYTHING, type IngestLineResult } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';
import { completeBuild, id, line, useTestStore } from './support.js';
import type { BuildEvent } from '../../src/store/types.js';
import { waitFor } from '../support/wait.js';
import { testedBuild } from './tested-build.js';
import { testRollupsAndRecount } from './test-rollups-check.js';

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];


describe.each(dialects)('ingest in parts on $name', ({ name, skip }) => {
  const t = useTestStore(name, skip);

  /** Makes inserting the events of the builds `bad` fail in the database (a trigger); returns its removal. */
  async function failingBuild(...bad: string[]): Promise<() => Promise<void>> {
    const ids = bad.map((b) => `'${b}'`).join(', ') || 'NULL';
    if (name === 'sqlite') {
      t.handle.sqlite!.exec(`CREATE TEMP TRIGGER fail_one BEFORE INSERT ON build_events WHEN new.events_key IN (SELECT events_key FROM builds WHERE id IN (${ids})) BEGIN SELECT RAISE(ABORT, 'refused by test trigger'); END`);
      return async () => void t.handle.sqlite!.exec('DROP TRIGGER temp.fail_one');
    }
    await sql
      .raw(
        `CREATE OR REPLACE FUNCTION fail_one() RETURNS trigger AS $$ BEGIN
           IF NEW.events_key IN (SELECT events_key FROM builds WHERE id IN (${ids})) THEN RAISE EXCEPTION 'refused by test trigger'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`,
      )
      .execute(t.handle.db);
    await sql.raw('CREATE TRIGGER fail_one BEFORE INSERT ON build_events FOR EACH ROW EXECUTE FUNCTION fail_one()').execute(t.handle.db);
    return async () => {
      await sql.raw('DROP TRIGGER fail_one ON build_events').execute(t.handle.db);
      await sql.raw('DROP FUNCTION fail_one()').execute(t.handle.db);
    };
  }

  it.each([false, true])('refuses only the line that fails in the database, in a part of many (bulk %s)', async (bulk) => {
    const ids = Array.from({ length: 1200 }, () => id());
    const bad = ids[700]!;
    const remove = await failingBuild(bad);
    try {
      const results = await t.store.ingestNdjson(ids.map((b) => completeBuild(b)).join('\n'), { bulk });
      expect(results.filter((r) => r.status === 'rejected')).toEqual([
        { line: 701, status: 'rejected', path: '$', error: expect.stringContaining('refused by test trigger'), buildId: bad },
      ]);
      expect(results.filter((r) => r.status === 'stored')).toHaveLength(1199);
      const listed = await t.store.listBuilds({ visibility: SEE_EVERYTHING, maxBuilds: 2000 });
      expect(listed).toHaveLength(1199);
      expect(listed.map((b) => b.id)).not.toContain(bad);
      // seq has no gap where the refused build would have been.
      expect(listed.map((b) => b.seq)).toEqual(Array.from({ length: 1199 }, (_, i) => i + 1));
    } finally {
      await remove();
    }
  }, 180_000);

  // A bulk load on SQLite writes its parts without savepoints and, when one fails, writes its
  // transaction again (src/store/ingest/ingest.ts): wherever the failing lines are (in several parts of a
  // transaction, in the part that commits it, in different transactions), the outcome is the
  // outcome of writing each line on its own.
  it('refuses exactly the lines that fail in the database, wherever they are, in bulk loads and others alike', async () => {
    const lines = 260;
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 0, max: lines - 1 }), { maxLength: 4 }), fc.boolean(), async (failing, bulk) => {
        const ids = Array.from({ length: lines }, () => id());
        const remove = await failingBuild(...failing.map((i) => ids[i]!));
        try {
          const seq = await t.store.latestSeq();
          const count = await t.store.countBuilds({ visibility: SEE_EVERYTHING });
          // Transactions of 120 lines: parts of 100 and 20 in a bulk load.
          const results = await t.store.ingestNdjson(ids.map((b) => completeBuild(b)).join('\n'), { bulk, batchSize: 120 });
          expect(results.filter((r) => r.status === 'rejected').map((r) => r.line)).toEqual([...failing].sort((a, b) => a - b).map((i) => i + 1));
          expect(results.filter((r) => r.status === 'stored')).toHaveLength(lines - failing.length);
          // Stored means listed, with no gap in seq where a refused line would have been.
          expect(await t.store.latestSeq()).toBe(seq + lines - failing.length);
          expect(await t.store.countBuilds({ visibility: SEE_EVERYTHING })).toBe(count + lines - failing.length);
          const listed = new Set((await t.store.listBuilds({ visibility: SEE_EVERYTHING, maxBuilds: 100_000 })).map((b) => b.id));
          expect(ids.filter((b) => listed.has(b))).toEqual(ids.filter((_, i) => !failing.includes(i)));
        } finally {
          await remove();
        }
      }),
      // The failing line in the part that commits, in the first part, and in two transactions.
      { numRuns: 6, examples: [[[119], true], [[0, 100], true], [[5, 130, 259], true]] },
    );
  }, 240_000);

  it('writes a transaction again with its build sent in two lines and its re-send as the first time', async () => {
    const earlier = id();
    const earlierLine = completeBuild(earlier);
    expect((await t.store.ingestNdjson(earlierLine, { bulk: true }))[0]!.status).toBe('stored');
    const seq = await t.store.latestSeq();
    const ids = Array.from({ length: 150 }, () => id());
    const streamed = id();
    const whole = (JSON.parse(completeBuild(streamed)) as { events: BuildEvent[] }).events;
    const input = ids.map((b) => completeBuild(b));
    // The streamed build's two lines in the first and second parts of one transaction, the
    // failing line after both, and a re-send of a build stored before at the end.
    input.splice(10, 0, line({ buildId: streamed, events: whole.slice(0, 2) }));
    input.splice(120, 0, line({ buildId: streamed, events: whole.slice(2) }));
    input.push(earlierLine);
    const bad = ids[140]!;
    const badLine = input.findIndex((l) => l.includes(bad)) + 1;
    expect(badLine).toBe(143);
    const remove = await failingBuild(bad);
    try {
      const results = await t.store.ingestNdjson(input.join('\n'), { bulk: true, batchSize: 500 });
      expect(results.filter((r) => r.status === 'rejected').map((r) => r.line)).toEqual([badLine]);
      expect(results[10]).toMatchObject({ line: 11, status: 'stored', buildId: streamed, complete: false });
      expect(results[120]).toMatchObject({ line: 121, status: 'stored', buildId: streamed, complete: true });
      expect(results[results.length - 1]).toMatchObject({ status: 'unchanged', buildId: earlier });
      // 149 new builds and the streamed one, each once.
      expect(await t.store.latestSeq()).toBe(seq + 150);
      // Both of its lines' events, in order.
      const events: BuildEvent[] = [];
      for await (const e of t.store.streamEvents(streamed)) events.push(e);
      expect(events).toEqual(whole);
    } finally {
      await remove();
    }
  }, 180_000);

  // The writer keeps the test ids it found between parts (src/store/ingest/test-rows-sqlite.ts):
  // ids of tests a rolled-back part added must not outlive it.
  it("writes a transaction again with the tests its first parts added: every execution names a stored test, and the per-test rollups are a recount", async () => {
    // Each build its own two tests, new to the store; 240 builds in one transaction (parts of 100).
    const lines = Array.from({ length: 240 }, (_, b) =>
      testedBuild({ project: 'parts', start: 1_700_000_000_000 + b, tests: [{ name: `t${b}a`, message: undefined, retried: false }, { name: `t${b}b`, message: 'boom 1', retried: true }], own: [] }),
    );
    const bad = (JSON.parse(lines[170]!) as { buildId: string }).buildId;
    const remove = await failingBuild(bad);
    try {
      const results = await t.store.ingestNdjson(lines.join('\n'), { bulk: true, batchSize: 240 });
      expect(results.filter((r) => r.status === 'rejected').map((r) => r.line)).toEqual([171]);
    } finally {
      await remove();
    }
    const count = async (q: ReturnType<typeof sql<{ n: number | string }>>) => Number((await q.execute(t.handle.db)).rows[0]!.n);
    expect(await count(sql`SELECT count(*) AS n FROM test_runs AS r JOIN builds AS b ON b.seq = r.seq WHERE b.project_name = 'parts'`)).toBe(239 * 3);
    expect(await count(sql`SELECT count(*) AS n FROM test_runs AS r WHERE NOT EXISTS (SELECT 1 FROM tests AS x WHERE x.id = r.test_id)`)).toBe(0);
    expect(await count(sql`SELECT count(*) AS n FROM tests WHERE project_name = 'parts'`)).toBe(239 * 2);
    const { rolledUp, recount } = await testRollupsAndRecount(t.handle.db);
    expect(rolledUp).toEqual(recount);
  }, 180_000);

  it('takes savepoints again when the temporary directory cannot hold the lines set aside, and still refuses only the line that fails', async () => {
    const ids = Array.from({ length: 300 }, () => id());
    const remove = await failingBuild(ids[150]!);
    const before = process.env.TMPDIR;
    // A temporary directory that does not exist: the file for the lines set aside cannot be made.
    process.env.TMPDIR = '/nonexistent/buildscope-test';
    try {
      const results = await t.store.ingestNdjson(ids.map((b) => completeBuild(b)).join('\n'), { bulk: true });
      expect(results.filter((r) => r.status === 'rejected').map((r) => r.line)).toEqual([151]);
      expect(results.filter((r) => r.status === 'stored')).toHaveLength(299);
    } finally {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
      await remove();
    }
  }, 180_000);

  it('commits what it has read when the input stalls: a build reported stored is listed while the sender waits', async () => {
    const first = Array.from({ length: 600 }, () => id());
    const later = id();
    const seen: IngestLineResult[] = [];
    let go!: () => void;
    const gate = new Promise<void>((r) => (go = r));
    async function* input(): AsyncGenerator<string> {
      yield first.map((b) => completeBuild(b)).join('\n') + '\n';
      // The sender waits until the test has seen the first lines reported (a bulk transaction is
      // 5,000 lines on SQLite: without the commit of a stalled input this never happens).
      await gate;
      yield completeBuild(later) + '\n';
    }
    const done = t.store.ingestNdjson(input(), { bulk: true, onResults: (rs) => seen.push(...rs) });
    try {
      await waitFor(() => seen.length === first.length, `the results of the first ${first.length} lines`, 30_000, 10);
      expect(seen.every((r) => r.status === 'stored')).toBe(true);
      // Reported stored means listed, at once.
      expect(await t.store.countBuilds({ visibility: SEE_EVERYTHING })).toBe(600);
    } finally {
      go();
    }
    const results = await done;
    expect(results).toHaveLength(601);
    expect(results[600]).toEqual({ line: 601, status: 'stored', buildId: later, complete: true });
    expect(await t.store.countBuilds({ visibility: SEE_EVERYTHING })).toBe(601);
  }, 180_000);

  it('stores everything of two bulk loads running at once on one store, and re-sends stay unchanged', async () => {
    const a = Array.from({ length: 1500 }, () => completeBuild(id()));
    const b = Array.from({ length: 1500 }, () => completeBuild(id()));
    // Inputs that yield between parts, so both loads have transactions open in turn.
    async function* slowly(lines: string[]): AsyncGenerator<string> {
      for (let i = 0; i < lines.length; i += 250) {
        yield lines.slice(i, i + 250).join('\n') + '\n';
        await new Promise((r) => setImmediate(r));
      }
    }
    const [ra, rb] = await Promise.all([t.store.ingestNdjson(slowly(a), { bulk: true }), t.store.ingestNdjson(slowly(b), { bulk: true })]);
    expect(ra.filter((r) => r.status !== 'stored')).toEqual([]);
    expect(rb.filter((r) => r.status !== 'stored')).toEqual([]);
    expect(await t.store.countBuilds({ visibility: SEE_EVERYTHING })).toBe(3000);
    const again = await t.store.ingestNdjson(slowly(a), { bulk: true });
    expect(again.every((r) => r.status === 'unchanged')).toBe(true);
    expect(await t.store.latestSeq()).toBe(3000);
  }, 180_000);
});
