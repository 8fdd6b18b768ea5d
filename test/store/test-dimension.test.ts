// The test dimension (store migration 0020): the ingest writes each finished test attempt of a build
// with its test's identity and failure group in the build's transaction, and a deletion takes them
// with the build, so the rows always equal a recount from the events of the stored builds. Both
// databases.

import { describe, expect, it } from 'vitest';
import { failureGroupRollupsAndRecount, testPacksAndRepack, testRollupsAndRecount } from './test-rollups-check.js';
import fc from 'fast-check';
import { sql } from 'kysely';
import { pgAvailable } from '../support/postgres.js';
import { ev, id, line, useTestStore } from './support.js';
import { SEE_EVERYTHING, type BuildEvent } from '../../src/store/types.js';
import { parseQuery } from '../../src/query/index.js';
import { testRunsOf, buildFailuresOf, TEST_OUTCOME_CODES } from '../../src/store/events/test-runs.js';
import { failureGroupKey, normalizeMessage } from '../../src/store/events/failure-groups.js';

const dialects = pgAvailable() ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

interface Spec {
  readonly suite: string;
  readonly name: string;
  readonly outcome: 'passed' | 'failed' | 'skipped';
  readonly attempt?: number;
  readonly message?: string;
}

function testBuild(buildId: string, project: string, tests: readonly Spec[], failures: readonly string[] = [], start?: number): { line: string; events: BuildEvent[] } {
  const events: BuildEvent[] = [ev('BuildStarted', {}, start), ev('ProjectStructure', { rootProjectName: project })];
  tests.forEach((t, i) => {
    events.push(ev('TestStarted', { id: i + 1, suite: t.suite, name: t.name }));
    events.push(
      ev('TestFinished', { id: i + 1, outcome: t.outcome, attempt: t.attempt ?? 1, ...(t.message === undefined ? {} : { failure: { type: 'AssertionError', message: t.message } }) }),
    );
  });
  events.push(ev('BuildFinished', { outcome: failures.length > 0 ? 'failed' : 'succeeded', failures: failures.map((m) => ({ classification: 'non-verification', message: m })) }));
  return { line: line({ buildId, events }), events };
}

describe('test runs and failure groups of a build (pure)', () => {
  it('pairs attempts by id, with start, duration, attempt and failure group', () => {
    const events = [
      ev('BuildStarted', {}, 1000),
      ev('TestStarted', { id: 'a', suite: 's.T', name: 'm', parameters: '[1]' }, 1100),
      ev('TestFinished', { id: 'a', outcome: 'failure', failure: { type: 'E', message: 'took 5012 ms at /tmp/x/y.txt' } }, 1350),
      ev('TestStarted', { id: 'b', suite: 's.T', name: 'm', parameters: '[1]' }, 1400),
      ev('TestFinished', { id: 'b', outcome: 'passed', attempt: 2 }, 1450),
      ev('TestFinished', { id: 'c', outcome: 'weird', suite: 's.T', name: 'n' }, 1500),
      ev('TestFinished', { id: 'd', outcome: 'skipped', suite: 's.U', name: 'k' }, 1600),
      ev('BuildFinished', { failures: [{ message: 'x', cause: { type: 'BuildException', message: 'Process 1234 exited' } }] }, 1700),
    ];
    expect(testRunsOf(events)).toEqual([
      ['s.T', 'm', '[1]', TEST_OUTCOME_CODES.failed, 1, 100, 250, ['E: took <n> ms at <path>', 'took 5012 ms at /tmp/x/y.txt']],
      ['s.T', 'm', '[1]', TEST_OUTCOME_CODES.passed, 2, 400, 50, null],
      ['s.U', 'k', '', TEST_OUTCOME_CODES.skipped, 1, 600, 0, null],
    ]);
    expect(buildFailuresOf(events)).toEqual([['BuildException: Process <n> exited', 'Process 1234 exited']]);
  });

  it('groups messages that differ only in numbers, paths, hashes, timestamps and addresses', () => {
    const same = [
      ['Timeout after 5000 ms at 2026-11-02T10:11:12.345Z in /home/ci/work/a.ts', 'Timeout after 61 ms at 2025-01-01T00:00:00Z in /var/lib/b/c.ts'],
      ['acme.Order@1b6d3586 was not equal to acme.Order@4554617c', 'acme.Order@deadbeef was not equal to acme.Order@0badf00d'],
      ['object at 0x7f3a2c1b0 is gone (commit 9f8e7d6c5b4a)', 'object at 0x10 is gone (commit 0123456789abcdef)'],
      ['request 123e4567-e89b-12d3-a456-426614174000 failed', 'request 00000000-0000-0000-0000-000000000001 failed'],
    ];
    for (const [a, b] of same) expect(normalizeMessage(a!)).toBe(normalizeMessage(b!));
    expect(failureGroupKey('E', 'expected 3 to equal 2')).not.toBe(failureGroupKey('F', 'expected 3 to equal 2'));
    expect(normalizeMessage('expected value but was null')).not.toBe(normalizeMessage('expected value but was undefined'));
    expect(failureGroupKey(undefined, undefined)).toBeUndefined();
  });
});

describe.each(dialects)('the test dimension in the store (%s)', (dialect) => {
  const t = useTestStore(dialect, false);

  /** The stored runs as comparable text: build id, test identity, outcome, attempt, group key. */
  const stored = async (): Promise<string[]> => {
    const rows = await sql<{ id: string; tool_type: string; project_name: string; suite: string; name: string; outcome: number; attempt: number; group_key: string | null }>`
      SELECT b.id, t.tool_type, t.project_name, t.suite, t.name, r.outcome, r.attempt, g.group_key
      FROM test_runs AS r JOIN builds AS b ON b.seq = r.seq JOIN tests AS t ON t.id = r.test_id LEFT JOIN failure_groups AS g ON g.id = r.group_id`.execute(t.handle.db);
    return rows.rows.map((r) => `${r.id} ${r.tool_type} ${r.project_name} ${r.suite}.${r.name} ${Number(r.outcome)}/${Number(r.attempt)} ${r.group_key ?? '-'}`).sort();
  };
  const recount = (builds: ReadonlyMap<string, BuildEvent[]>, project: (id: string) => string): string[] =>
    [...builds]
      .flatMap(([bid, events]) => testRunsOf(events).map((r) => `${bid} native ${project(bid)} ${r[0]}.${r[1]} ${r[3]}/${r[4]} ${r[7]?.[0] ?? '-'}`))
      .sort();

  it('writes each test once and its runs per build, and the build failures by group', async () => {
    const a = id();
    const b = id();
    const tests: Spec[] = [
      { suite: 'acme.PriceTest', name: 'roundsHalfCents', outcome: 'failed', message: 'expected: <10.05> but was: <10.04>' },
      { suite: 'acme.PriceTest', name: 'roundsHalfCents', outcome: 'passed', attempt: 2 },
      { suite: 'acme.PriceTest', name: 'addsTax', outcome: 'passed' },
    ];
    const results = await t.store.ingestNdjson([testBuild(a, 'shop', tests, ['Process 41 failed']).line, testBuild(b, 'shop', tests, ['Process 42 failed']).line].join('\n'), { keepResults: true });
    expect(results.map((r) => r.status)).toEqual(['stored', 'stored']);
    expect(Number((await sql<{ n: number }>`SELECT count(*) AS n FROM tests`.execute(t.handle.db)).rows[0]!.n)).toBe(2);
    expect(Number((await sql<{ n: number }>`SELECT count(*) AS n FROM test_runs`.execute(t.handle.db)).rows[0]!.n)).toBe(6);
    const groups = (await sql<{ group_key: string; n: number }>`SELECT g.group_key, count(*) AS n FROM build_failures AS f JOIN failure_groups AS g ON g.id = f.group_id GROUP BY g.group_key`.execute(t.handle.db)).rows;
    expect(groups.map((g) => [g.group_key, Number(g.n)])).toEqual([['Process <n> failed', 2]]);
  });

  it("reads a test's latest runs for the empty query from the index alone, under the caller's visibility, as through the builds", async () => {
    const tests: Spec[] = [
      { suite: 'acme.CartTest', name: 'adds', outcome: 'failed', message: 'boom' },
      { suite: 'acme.CartTest', name: 'adds', outcome: 'passed', attempt: 2 },
    ];
    await t.reset();
    await t.store.ingestNdjson([testBuild(id(), 'shop', tests).line, testBuild(id(), 'shop', tests.slice(1)).line, testBuild(id(), 'docs', tests).line].join('\n'));
    const ids = (await sql<{ id: number }>`SELECT id FROM tests ORDER BY project_name DESC`.execute(t.handle.db)).rows.map((r) => Number(r.id));
    const runs = (rows: readonly { testId: number; seq: number; outcome: string }[]) => rows.map((r) => `${r.testId} ${r.seq} ${r.outcome}`).sort();
    const everyone = await t.store.tests.recentRuns(ids, { visibility: SEE_EVERYTHING }, 10);
    expect(everyone).toHaveLength(5);
    // The same as a query that names every build (read through the builds).
    const all = parseQuery('buildOutcome:failed or buildOutcome:succeeded');
    expect(runs(everyone)).toEqual(runs(await t.store.tests.recentRuns(ids, { visibility: SEE_EVERYTHING, query: all.expr! }, 10)));
    const shopOnly = await t.store.tests.recentRuns(ids, { visibility: { projects: ['shop'], withoutProject: false } }, 10);
    // ids[0]: the shop's test.
    expect(runs(shopOnly)).toEqual(runs(everyone.filter((r) => r.testId === ids[0])));
    expect(await t.store.tests.recentRuns(ids, { visibility: { projects: ['other'], withoutProject: true } }, 10)).toEqual([]);
    expect(await t.store.tests.recentRuns(ids, { visibility: SEE_EVERYTHING }, 1)).toHaveLength(2);
  });

  it('equals a recount from the events of the stored builds, and its per-test and failure group rollups and its test packs a recount of its rows, under ingests and deletions interleaved', async () => {
    const spec = fc.record({ suite: fc.constantFrom('a.A', 'a.B'), name: fc.constantFrom('x', 'y', 'z'), outcome: fc.constantFrom('passed', 'failed', 'skipped' as const), attempt: fc.integer({ min: 1, max: 3 }), message: fc.option(fc.constantFrom('boom 1', 'boom 2', 'bang at /a/b'), { nil: undefined }) });
    const step = fc.oneof(fc.record({ kind: fc.constant('ingest' as const), builds: fc.array(fc.record({
            project: fc.constantFrom('p', 'q'),
            tests: fc.array(spec, { maxLength: 5 }),
            // Builds' own failures, and starts in any order of arrival (a group's first and last start).
            failures: fc.array(fc.constantFrom('Process 1 failed', 'Process 2 failed', 'disk full'), { maxLength: 2 }),
            start: fc.option(fc.integer({ min: 1_700_000_000_000, max: 1_700_000_000_100 }), { nil: undefined }),
          }), { minLength: 1, maxLength: 3 }) }), fc.record({ kind: fc.constant('delete' as const), n: fc.integer({ min: 1, max: 3 }) }));
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 6 }), async (steps) => {
        await t.reset();
        const live = new Map<string, BuildEvent[]>();
        const projects = new Map<string, string>();
        for (const s of steps) {
          if (s.kind === 'ingest') {
            const lines = s.builds.map((b) => {
              const bid = id();
              const built = testBuild(bid, b.project, b.tests as Spec[], b.failures, b.start);
              live.set(bid, built.events);
              projects.set(bid, b.project);
              return built.line;
            });
            await t.store.ingestNdjson(lines.join('\n'));
          } else {
            for (const g of await t.store.deleteBuilds({ kind: 'oldest' }, s.n)) live.delete(g.id);
          }
        }
        expect(await stored()).toEqual(recount(live, (b) => projects.get(b)!));
        const { rolledUp, recount: rows } = await testRollupsAndRecount(t.handle.db);
        expect(rolledUp).toEqual(rows);
        const groups = await failureGroupRollupsAndRecount(t.handle.db);
        expect(groups.rolledUp).toEqual(groups.recount);
        const packs = await testPacksAndRepack(t.handle.db);
        expect(packs.stored).toEqual(packs.repacked);
      }),
      { numRuns: dialect === 'sqlite' ? 25 : 10 },
    );
  });
});
