// A task that had nothing to do (Gradle's NO-SOURCE, sent as `no-source`) keeps that outcome end
// to end on both databases: the stored task row carries its own code, the build details (the build
// page's API) and the comparison of two builds say `no-source`, not `skipped`; trends count it with
// the skipped tasks (their count columns), from the rollups and from the builds alike.

import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { compareBuilds } from '../../src/services/compare.js';
import { buildDetails } from '../../src/services/web.js';
import { buildTrends } from '../../src/store/analytics/analytics.js';
import { TASK_OUTCOME_CODES } from '../../src/store/events/tasks.js';
import { SEE_EVERYTHING } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';
import { ev, id, line, useTestStore } from './support.js';

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];

function gradleBuild(buildId: string, start: number, resources: string): string {
  return line({
    buildId,
    toolType: 'native',
    toolVersion: '4.4.1',
    events: [
      ev('BuildStarted', {}, start),
      ev('ProjectStructure', { rootProjectName: 'outcomes' }, start + 1),
      ev('TaskStarted', { id: 1, path: ':compileJava' }, start + 2),
      ev('TaskFinished', { id: 1, path: ':compileJava', outcome: 'success', cacheable: false }, start + 50),
      ev('TaskStarted', { id: 2, path: ':processResources' }, start + 51),
      ev('TaskFinished', { id: 2, path: ':processResources', outcome: resources, cacheable: false }, start + 52),
      ev('TaskStarted', { id: 3, path: ':javadoc' }, start + 53),
      ev('TaskFinished', { id: 3, path: ':javadoc', outcome: 'skipped', cacheable: false }, start + 54),
      ev('BuildFinished', { outcome: 'succeeded', failures: [] }, start + 60),
    ],
  });
}

describe.each(dialects)('task outcomes on $name', ({ name, skip }) => {
  const t = useTestStore(name, skip);

  it('keeps no-source apart from skipped in the task rows, the build details and the comparison', async () => {
    const start = t.now.value - 3_600_000;
    const a = id();
    const b = id();
    const results = await t.store.ingestNdjson([gradleBuild(a, start, 'no-source'), gradleBuild(b, start + 100_000, 'success')].join('\n'));
    expect(results.map((r) => (r.status === 'rejected' ? r.error : r.status))).toEqual(['stored', 'stored']);

    const rows = (
      await sql<{ path: string; outcome: number }>`SELECT p.path, t.outcome FROM build_tasks AS t JOIN task_paths AS p ON p.id = t.path_id
        JOIN builds AS b ON b.seq = t.seq WHERE b.id = ${a} ORDER BY t.ord`.execute(t.handle.db)
    ).rows.map((r) => [r.path, Number(r.outcome)]);
    expect(rows).toEqual([
      [':compileJava', TASK_OUTCOME_CODES.executed],
      [':processResources', TASK_OUTCOME_CODES['no-source']],
      [':javadoc', TASK_OUTCOME_CODES.skipped],
    ]);

    const details = await buildDetails(t.store, a, SEE_EVERYTHING);
    expect(details?.tasks.map((x) => [x.path, x.outcome])).toEqual([
      [':compileJava', 'executed'],
      [':processResources', 'no-source'],
      [':javadoc', 'skipped'],
    ]);

    const compared = await compareBuilds(t.store, a, b, SEE_EVERYTHING);
    const change = JSON.stringify(compared);
    expect(change).toContain('"no-source"');

    for (const rollups of [true, false]) {
      const trends = await buildTrends(t.handle, { visibility: SEE_EVERYTHING }, { from: start - 86_400_000, to: start + 86_400_000, interval: 'day', tz: 'UTC' }, { rollups });
      const tasks = trends.buckets.reduce((s, x) => ({ executed: s.executed + x.tasks.executed, skipped: s.skipped + x.tasks.skipped }), { executed: 0, skipped: 0 });
      expect(tasks).toEqual({ executed: 3, skipped: 3 });
    }
  });
});
