// Every rule of the event model (/docs/store.md) on SQLite and PostgreSQL: validation with line
// numbers and JSON paths, atomic builds, idempotent and conflicting re-sends, incomplete builds
// with appended events, unknown events kept, derived attributes.

import { describe, expect, it } from 'vitest';
import { SEE_EVERYTHING, type BuildWithAttributes } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';
import { valueFieldCode } from '../../src/sql/value-fields.js';
import { SQLITE_BULK_BATCH_SIZE } from '../../src/store/ingest/batches.js';
import { completeBuild, ev, id, line, useTestStore } from './support.js';

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];

describe.each(dialects)('ingest on $name', ({ name, skip }) => {
  const t = useTestStore(name, skip);

  const all = async (): Promise<BuildWithAttributes[]> =>
    (await t.store.listBuilds({ visibility: SEE_EVERYTHING, withAttributes: true })) as BuildWithAttributes[];

  it('stores a complete build and makes it available at the server clock', async () => {
    const b = id();
    t.now.value = 1_800_000_000_000;
    const results = await t.store.ingestNdjson(completeBuild(b) + '\n');
    expect(results).toEqual([{ line: 1, status: 'stored', buildId: b, complete: true }]);
    const [got] = await all();
    expect(got).toMatchObject({ id: b, availableAt: 1_800_000_000_000, toolType: 'native', toolVersion: '8.10.2', agentVersion: '3.19', project: 'alpha', seq: 1 });
    expect(await t.store.buildState(b, SEE_EVERYTHING)).toBe('available');
    expect(await t.store.latestSeq()).toBe(1);
  });

  it('rejects bad lines with their line number and the JSON path of the fault, keeping the other lines', async () => {
    const good1 = id();
    const good2 = id();
    const badEvents = [ev('BuildStarted'), ev('Environment'), ev('UserTag', { tag: 'x' }), { timestamp: 'yesterday', type: { majorVersion: 1, minorVersion: 0, eventType: 'BuildFinished' }, data: {} }];
    const input = [
      completeBuild(good1),
      '{not json',
      '',
      JSON.stringify({ toolType: 'native', toolVersion: '1', agentVersion: '1', events: badEvents }),
      JSON.stringify({ toolType: 'make', toolVersion: '1', agentVersion: '1', events: [] }),
      JSON.stringify({ buildId: 'TOO-SHORT', toolType: 'native', toolVersion: '1', agentVersion: '1', events: [] }),
      JSON.stringify({ toolType: 'native', agentVersion: '1', events: [] }),
      JSON.stringify({ toolType: 'native', toolVersion: '1', agentVersion: 3, events: [] }),
      JSON.stringify({ toolType: 'native', toolVersion: '1', agentVersion: '1', events: {} }),
      JSON.stringify({ toolType: 'native', toolVersion: '1', agentVersion: '1', events: [ev('BuildStarted'), { timestamp: 1, type: { majorVersion: 1, minorVersion: 0 }, data: {} }] }),
      JSON.stringify({ toolType: 'native', toolVersion: '1', agentVersion: '1', events: [{ timestamp: 1, type: { majorVersion: 1, minorVersion: 0, eventType: 'X' }, data: [] }] }),
      JSON.stringify({ toolType: 'native', toolVersion: '1', agentVersion: '1', events: [{ timestamp: 1, type: { majorVersion: -1, minorVersion: 0, eventType: 'X' }, data: {} }] }),
      JSON.stringify({ toolType: 'native', toolVersion: '1', agentVersion: '1', events: [{ timestamp: 1.5, type: { majorVersion: 1, minorVersion: 0, eventType: 'X' }, data: {} }] }),
      '[1,2,3]',
      completeBuild(good2),
    ].join('\n');
    const r = await t.store.ingestNdjson(input);
    const brief = r.map((x) => (x.status === 'rejected' ? [x.line, x.path] : [x.line, x.status]));
    expect(brief).toEqual([
      [1, 'stored'],
      [2, '$'],
      [4, '$.events[3].timestamp'],
      [5, '$.toolType'],
      [6, '$.buildId'],
      [7, '$.toolVersion'],
      [8, '$.agentVersion'],
      [9, '$.events'],
      [10, '$.events[1].type.eventType'],
      [11, '$.events[0].data'],
      [12, '$.events[0].type.majorVersion'],
      [13, '$.events[0].timestamp'],
      [14, '$'],
      [15, 'stored'],
    ]);
    const rejected = r.filter((x) => x.status === 'rejected');
    for (const x of rejected) expect(x.status === 'rejected' && x.error.length).toBeGreaterThan(10);
    expect(r[3]).toMatchObject({ error: expect.stringContaining('"make"') });
    expect((await all()).map((b) => b.id)).toEqual([good1, good2]);
  });

  it('assigns a 13-character build ID when the line has none', async () => {
    const r = await t.store.ingestNdjson(line({ events: [ev('BuildStarted'), ev('BuildFinished', { outcome: 'succeeded' })] }));
    expect(r[0]).toMatchObject({ status: 'stored', complete: true });
    const assigned = r[0]!.status === 'stored' ? r[0]!.buildId : '';
    expect(assigned).toMatch(/^[0-9a-z]{13}$/);
    expect(await t.store.getBuild(assigned, SEE_EVERYTHING)).toBeDefined();
  });

  it('treats a re-send with the same content as a no-op, whatever the JSON key order', async () => {
    const b = id();
    const text = completeBuild(b, 'alpha', [ev('UserNamedValue', { key: 'k', value: 'v' })]);
    const obj = JSON.parse(text) as Record<string, unknown>;
    // Same meaning, other key order at every level.
    const reordered = JSON.stringify({
      events: (obj['events'] as { timestamp: number; type: Record<string, unknown>; data: Record<string, unknown> }[]).map((e) => ({
        data: Object.fromEntries(Object.entries(e.data).reverse()),
        type: { eventType: e.type['eventType'], minorVersion: e.type['minorVersion'], majorVersion: e.type['majorVersion'] },
        timestamp: e.timestamp,
      })),
      agentVersion: obj['agentVersion'],
      toolVersion: obj['toolVersion'],
      toolType: obj['toolType'],
      buildId: b,
    });
    const r1 = await t.store.ingestNdjson(`${text}\n${text}`);
    expect(r1.map((x) => x.status)).toEqual(['stored', 'unchanged']);
    const r2 = await t.store.ingestNdjson(`${text}\n${reordered}`);
    expect(r2).toEqual([
      { line: 1, status: 'unchanged', buildId: b, complete: true },
      { line: 2, status: 'unchanged', buildId: b, complete: true },
    ]);
    expect(await all()).toHaveLength(1);
    expect(await t.store.latestSeq()).toBe(1);
  });

  it('rejects a re-send with other content, and one whose header disagrees', async () => {
    const b = id();
    await t.store.ingestNdjson(completeBuild(b));
    const r = await t.store.ingestNdjson(
      [completeBuild(b, 'beta'), line({ buildId: b, toolVersion: '9.0', events: [ev('UserTag', { tag: 'x' })] }), line({ buildId: b, toolType: 'jsbuild', events: [] })].join('\n'),
    );
    expect(r.map((x) => x.status === 'rejected' && [x.path, x.buildId])).toEqual([
      ['$.events', b],
      ['$.toolVersion', b],
      ['$.toolType', b],
    ]);
    const [stored] = await all();
    expect(stored!.project).toBe('alpha');
  });

  it('holds a build without BuildFinished as incomplete and appends later lines to it', async () => {
    const b = id();
    const part1 = line({ buildId: b, events: [ev('BuildStarted', {}, 1000), ev('ProjectStructure', { rootProjectName: 'Alpha' }), ev('UserTag', { tag: 'one' })] });
    const part2 = line({ buildId: b, events: [ev('UserTag', { tag: 'two' }), ev('Mystery', { x: 1 })] });
    const part3 = line({ buildId: b, events: [ev('BuildFinished', { outcome: 'failed', failures: [{ classification: 'verification', message: 'tests' }] }, 61_000)] });
    expect(await t.store.ingestNdjson(part1)).toEqual([{ line: 1, status: 'stored', buildId: b, complete: false }]);
    expect(await t.store.buildState(b, SEE_EVERYTHING)).toBe('incomplete');
    expect(await all()).toEqual([]);
    expect(await t.store.getBuild(b, SEE_EVERYTHING)).toBeUndefined();
    expect(await t.store.latestSeq()).toBe(0);
    // The same part again is a no-op; the second part appends.
    expect((await t.store.ingestNdjson(`${part1}\n${part2}`)).map((x) => x.status)).toEqual(['unchanged', 'stored']);
    // The header must agree.
    const bad = await t.store.ingestNdjson(line({ buildId: b, agentVersion: '4.0', events: [] }));
    expect(bad[0]).toMatchObject({ status: 'rejected', path: '$.agentVersion' });
    t.now.value = 1_900_000_000_000;
    expect(await t.store.ingestNdjson(part3)).toEqual([{ line: 1, status: 'stored', buildId: b, complete: true }]);
    expect(await t.store.buildState(b, SEE_EVERYTHING)).toBe('available');
    const got = await t.store.getBuild(b, SEE_EVERYTHING);
    expect(got).toMatchObject({ availableAt: 1_900_000_000_000, project: 'Alpha', seq: 1 });
    expect(got!.attributes).toMatchObject({ tag: ['one', 'two'], buildDuration: 60_000, buildOutcome: 'failed', hasVerificationFailure: true, hasNonVerificationFailure: false, project: 'Alpha' });
    const events = [];
    for await (const e of t.store.streamEvents(b)) events.push(e.type.eventType);
    expect(events).toEqual(['BuildStarted', 'ProjectStructure', 'UserTag', 'UserTag', 'Mystery', 'BuildFinished']);
    // Every part, and the whole, re-sent after the finish: unchanged. Anything else: rejected.
    const whole = line({ buildId: b, events: [...JSON.parse(part1).events, ...JSON.parse(part2).events, ...JSON.parse(part3).events] });
    expect((await t.store.ingestNdjson([part1, part2, part3, whole].join('\n'))).map((x) => x.status)).toEqual(['unchanged', 'unchanged', 'unchanged', 'unchanged']);
    expect((await t.store.ingestNdjson(line({ buildId: b, events: [ev('UserTag', { tag: 'late' })] })))[0]).toMatchObject({ status: 'rejected', path: '$.events' });
  });

  it('appends within one batch too (parts of one build on consecutive lines)', async () => {
    const b = id();
    const r = await t.store.ingestNdjson(
      [line({ buildId: b, events: [ev('BuildStarted')] }), line({ buildId: b, events: [ev('UserTag', { tag: 'a' })] }), line({ buildId: b, events: [ev('BuildFinished', { outcome: 'succeeded' })] })].join('\n'),
    );
    expect(r.map((x) => x.status === 'stored' && x.complete)).toEqual([false, false, true]);
    expect((await all())[0]!.attributes['tag']).toEqual(['a']);
  });

  it('keeps unknown event types and unknown data fields, and filters events by type case-sensitively', async () => {
    const b = id();
    await t.store.ingestNdjson(
      completeBuild(b, 'alpha', [ev('CustomThing', { nested: { a: [1, 2, { b: null }] }, 'ü': 'ß' }), ev('UserTag', { tag: 't', color: 'red' })]),
    );
    const got = [];
    for await (const e of t.store.streamEvents(b)) got.push(e);
    expect(got.map((e) => e.type.eventType)).toEqual(['BuildStarted', 'ProjectStructure', 'CustomThing', 'UserTag', 'BuildFinished']);
    expect(got[2]!.data).toEqual({ nested: { a: [1, 2, { b: null }] }, 'ü': 'ß' });
    expect(got[3]!.data).toEqual({ tag: 't', color: 'red' });
    expect(got[2]!.type).toEqual({ majorVersion: 1, minorVersion: 0, eventType: 'CustomThing' });
    const only = [];
    for await (const e of t.store.streamEvents(b, { eventTypes: ['UserTag', 'buildfinished'] })) only.push(e.type.eventType);
    expect(only).toEqual(['UserTag']);
    const none = [];
    for await (const e of t.store.streamEvents('zzzzzzzzzzzzz')) none.push(e);
    expect(none).toEqual([]);
  });

  it('derives attributes per the event model: last event wins, multi-valued collect, wrong types unknown', async () => {
    const b = id();
    await t.store.ingestNdjson(
      line({
        buildId: b,
        toolType: 'jvmbuild',
        toolVersion: '3.9.6',
        agentVersion: '1.22',
        events: [
          ev('BuildStarted', {}, 10_000),
          ev('BuildAgent', { username: 'first', publicHostname: 'h1', localHostname: 'l1', localIpAddresses: ['10.0.0.1'] }),
          ev('BuildAgent', { username: 'Renée', publicHostname: 42, localIpAddresses: ['10.0.0.2', 7, '10.0.0.3'] }),
          ev('ProjectStructure', { rootProjectName: 'Payments' }),
          ev('BuildRequestedTasks', { requested: ['clean', 'install'], excluded: [] }),
          ev('BuildRequestedTasks', { requested: ['deploy'] }),
          ev('Environment', { operatingSystem: 'Linux', numberOfCpuCores: 8, jvmMaxMemoryHeapSize: 1073741824, jreVersion: 17 }),
          ev('BuildOptions', { offlineModeEnabled: true, maxNumberOfThreads: 4, quietEnabled: 'yes' }),
          ev('BuildCache', { local: { enabled: true }, remote: { enabled: false }, hasError: false }),
          ev('ServerSettings', { buildCacheEnabled: true }),
          ev('UserTag', { tag: 'CI' }),
          ev('UserTag', { tag: 42 }),
          ev('UserNamedValue', { key: 'Git branch', value: 'Main' }),
          ev('UserNamedValue', { key: 'n', value: 3 }),
          ev('BuildFinished', { outcome: 'failed', failures: [{ classification: 'non-verification', message: 'oom' }] }, 70_000),
        ],
      }),
    );
    const a = (await t.store.getBuild(b, SEE_EVERYTHING))!.attributes;
    expect(a).toEqual({
      user: 'Renée',
      'jvmbuild.environment.localIPAddress': ['10.0.0.1', '10.0.0.2', '10.0.0.3'],
      project: 'Payments',
      'jvmbuild.topLevelProjectName': 'Payments',
      requested: ['clean', 'install', 'deploy'],
      'jvmbuild.requestedGoals': ['clean', 'install', 'deploy'],
      buildTool: 'jvmbuild',
      buildToolVersion: '3.9.6',
      'jvmbuild.extensionVersion': '1.22',
      value: [{ name: 'Git branch', value: 'Main' }],
      tag: ['CI'],
      buildOutcome: 'failed',
      buildDuration: 60_000,
      buildStartTime: 10_000,
      hasVerificationFailure: false,
      hasNonVerificationFailure: true,
      'jvmbuild.environment.operatingSystem': 'Linux',
      'jvmbuild.environment.numberOfCpuCores': 8,
      'jvmbuild.environment.jvmMaxMemoryHeapSize': 1073741824,
      'jvmbuild.buildOptions.offlineModeEnabled': true,
      'jvmbuild.buildOptions.maxNumberOfThreads': 4,
      'jvmbuild.buildCache.local.enabled': true,
      'jvmbuild.buildCache.remote.enabled': false,
      'jvmbuild.buildCache.hasError': false,
      'jvmbuild.serverSettings.buildCacheEnabled': true,
    });
    // The columns the search compiler reads: strings lower-cased, booleans 0/1, child rows.
    const row = await t.handle.db.selectFrom('builds').selectAll().where('id', '=', b).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ user: 'renée', project: 'payments', project_name: 'Payments', buildtool: 'jvmbuild', hasverificationfailure: 0, hasnonverificationfailure: 1, buildduration: 60_000, hostname: null, native_rootprojectname: null });
    expect(Number(row['jvmbuild_environment_jvmmaxmemoryheapsize'])).toBe(1073741824);
    // In either table: on SQLite the latest values of spread fields (IP addresses) and the latest
    // custom values are gathered apart (store/ingest/recent-rows.ts).
    const valuesOf = (table: 'build_values' | 'build_values_recent') => t.handle.db.selectFrom(table).select(['field', 'value']).where('seq', '=', row['seq'] as number);
    const values = await valuesOf('build_values').unionAll(valuesOf('build_values_recent')).orderBy('field').orderBy('value').execute();
    // The field as its code (store migration 0016).
    expect(values).toContainEqual({ field: valueFieldCode('requested'), value: 'deploy' });
    expect(values).toContainEqual({ field: valueFieldCode('jvmbuild_requestedgoals'), value: 'clean' });
    expect(values).toContainEqual({ field: valueFieldCode('tag'), value: 'ci' });
    expect(values.filter((v) => v.field === valueFieldCode('jvmbuild_environment_localipaddress'))).toHaveLength(3);
    const customOf = (table: 'build_custom_values' | 'build_custom_values_recent') => t.handle.db.selectFrom(table).select(['name', 'value']).where('seq', '=', row['seq'] as number);
    const custom = await customOf('build_custom_values').unionAll(customOf('build_custom_values_recent')).execute();
    expect(custom).toEqual([{ name: 'git branch', value: 'main' }]);
  });

  it('knows no failure as false, and no BuildStarted as unknown duration', async () => {
    const b = id();
    await t.store.ingestNdjson(line({ buildId: b, events: [ev('BuildFinished', { outcome: 'succeeded' })] }));
    const a = (await t.store.getBuild(b, SEE_EVERYTHING))!.attributes;
    expect(a).toEqual({ buildTool: 'native', buildToolVersion: '8.10.2', 'native.pluginVersion': '3.19', buildOutcome: 'succeeded', hasVerificationFailure: false, hasNonVerificationFailure: false });
  });

  it('assigns seq in availability order, not in arrival order', async () => {
    const a = id();
    const b = id();
    await t.store.ingestNdjson(line({ buildId: a, events: [ev('BuildStarted')] }));
    await t.store.ingestNdjson(completeBuild(b));
    await t.store.ingestNdjson(line({ buildId: a, events: [ev('BuildFinished', { outcome: 'succeeded' })] }));
    expect((await all()).map((x) => [x.id, x.seq])).toEqual([
      [b, 1],
      [a, 2],
    ]);
  });

  it('commits 500 lines per transaction, and for a bulk load as many as the database gains from', async () => {
    const n = SQLITE_BULK_BATCH_SIZE + 200;
    const lines = Array.from({ length: n }, () => completeBuild(id())).join('\n');
    const sizes = async (bulk: boolean): Promise<number[]> => {
      await t.reset();
      const seen: number[] = [];
      const r = await t.store.ingestNdjson(lines, { bulk, keepResults: false, onResults: (rs) => seen.push(rs.length) });
      expect(r).toEqual([]);
      expect(await t.store.latestSeq()).toBe(n);
      return seen;
    };
    const small = [...Array.from({ length: SQLITE_BULK_BATCH_SIZE / 500 }, () => 500), 200];
    expect(await sizes(false)).toEqual(small);
    // SQLite rewrites every index page a commit touched; PostgreSQL keeps its smaller transactions.
    expect(await sizes(true)).toEqual(name === 'sqlite' ? [SQLITE_BULK_BATCH_SIZE, 200] : small);
  }, 60_000);

  it('reads streamed input (bytes split anywhere, CRLF line ends) with correct line numbers', async () => {
    const ids = [id(), id(), id()];
    const text = `${completeBuild(ids[0]!)}\r\n\r\n{"oops"\r\n${completeBuild(ids[1]!)}\n${completeBuild(ids[2]!)}`;
    const bytes = new TextEncoder().encode(text);
    async function* chunks(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < bytes.length; i += 7) yield bytes.slice(i, i + 7);
    }
    const seen: number[] = [];
    const r = await t.store.ingestNdjson(chunks(), { batchSize: 2, onResults: (rs) => seen.push(...rs.map((x) => x.line)) });
    expect(r.map((x) => [x.line, x.status])).toEqual([
      [1, 'stored'],
      [3, 'rejected'],
      [4, 'stored'],
      [5, 'stored'],
    ]);
    expect(seen).toEqual([1, 3, 4, 5]);
  });
});
