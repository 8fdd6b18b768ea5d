// The rule for tool-specific fields (search-semantics.md, changed decision): every term on a
// tool-specific field, `!field`, `!field:*` and `field:null` included, selects only builds of that
// tool; only `-`/`not` complement over all builds. Checked on builds of several tools stored through
// the build store, on SQLite and PostgreSQL, against what the stored builds say (not against the
// reference evaluator, which the differential tests compare with).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/query/index.js';
import { SEE_EVERYTHING, type BuildWithAttributes } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';
import { ev, id, line, openTestStore, type TestStore } from './support.js';

const finished = (outcome = 'succeeded') => ev('BuildFinished', { outcome, failures: [] });

/** Builds of four tools; native ones with and without a configuration cache outcome and remote cache. */
function lines(): string[] {
  const native = (extra: ReturnType<typeof ev>[]) =>
    line({ buildId: id(), toolType: 'native', events: [ev('BuildStarted'), ev('ProjectStructure', { rootProjectName: 'app' }), ...extra, finished()] });
  return [
    native([ev('ConfigurationCache', { outcome: 'hit' }), ev('BuildCache', { local: { enabled: true }, remote: { enabled: true }, hasError: false })]),
    native([ev('ConfigurationCache', { outcome: 'miss' }), ev('BuildCache', { local: { enabled: true }, remote: { enabled: false }, hasError: false })]),
    native([ev('BuildRequestedTasks', { requested: ['clean', 'build'], excluded: [] })]),
    native([ev('BuildRequestedTasks', { requested: ['build'], excluded: [] })]),
    ...(['jvmbuild', 'jsbuild', 'pybuild'] as const).flatMap((toolType) =>
      [0, 1].map(() => line({ buildId: id(), toolType, toolVersion: '1.0', events: [ev('BuildStarted'), ev('ProjectStructure', { rootProjectName: 'lib' }), finished('failed')] })),
    ),
  ];
}

const dialects = pgAvailable() ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

describe.each(dialects)('tool-specific terms on stored builds (%s)', (dialect) => {
  let t: TestStore;
  let all: BuildWithAttributes[];
  beforeAll(async () => {
    t = await openTestStore(dialect);
    const results = await t.store.ingestNdjson(lines().join('\n'));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    all = (await t.store.listBuilds({ visibility: SEE_EVERYTHING, withAttributes: true })) as BuildWithAttributes[];
  }, 60_000);
  afterAll(async () => t?.close());

  const search = async (text: string): Promise<string[]> => {
    const r = parseQuery(text);
    expect(r.diagnostics).toEqual([]);
    return (await t.store.listBuilds({ query: r.expr!, visibility: SEE_EVERYTHING })).map((b) => b.id).sort();
  };
  const ids = (pred: (b: BuildWithAttributes) => boolean): string[] => all.filter(pred).map((b) => b.id).sort();
  const native = (b: BuildWithAttributes): boolean => b.toolType === 'native';
  const outcome = (b: BuildWithAttributes): unknown => b.attributes['native.configurationCache.outcome'];
  const remote = (b: BuildWithAttributes): unknown => b.attributes['native.buildCache.remote.enabled'];

  it('stores builds of four tools, native ones with and without the fields', () => {
    expect(new Set(all.map((b) => b.toolType))).toEqual(new Set(['native', 'jvmbuild', 'jsbuild', 'pybuild']));
    expect(all.filter(native).map(outcome).sort()).toEqual(['hit', 'miss', undefined, undefined]);
  });

  it('`field:null` and `!field:*` are the native builds whose outcome is unavailable', async () => {
    const want = ids((b) => native(b) && outcome(b) === undefined);
    expect(want).toHaveLength(2);
    expect(await search('native.configurationCache.outcome:null')).toEqual(want);
    expect(await search('!native.configurationCache.outcome:*')).toEqual(want);
  });

  it('`!field` on a Boolean is the native builds whose value is not known-true', async () => {
    const want = ids((b) => native(b) && remote(b) !== true);
    expect(want).toHaveLength(3);
    expect(await search('!native.buildCache.remote.enabled')).toEqual(want);
  });

  it('`!field:value` stays in the tool too', async () => {
    expect(await search('!native.requestedTasks:clean')).toEqual(ids((b) => native(b) && !((b.attributes['native.requestedTasks'] as string[] | undefined) ?? []).includes('clean')));
  });

  it('only `-` and `not` leave the tool: they complement over every build', async () => {
    const everyOther = ids((b) => !native(b));
    expect(everyOther).toHaveLength(6);
    expect(await search('-native.configurationCache.outcome:*')).toEqual(ids((b) => !(native(b) && outcome(b) !== undefined)));
    expect(await search('not native.configurationCache.outcome:null')).toEqual(ids((b) => !(native(b) && outcome(b) === undefined)));
    expect(await search('-native.requestedTasks:clean')).toEqual(ids((b) => !((b.attributes['native.requestedTasks'] as string[] | undefined) ?? []).includes('clean')));
    // The idiom for "native builds that did not request clean" is the `!` form.
    expect(await search('buildTool:native -native.requestedTasks:clean')).toEqual(await search('!native.requestedTasks:clean'));
  });

  it('a term and its `!` form split the tool\'s builds; with `-` they split all builds', async () => {
    for (const field of ['native.configurationCache.outcome:*', 'native.buildCache.remote.enabled', 'native.requestedTasks:clean']) {
      const yes = await search(field);
      const bang = await search(`!${field}`);
      expect([...yes, ...bang].sort(), field).toEqual(ids(native));
      expect([...yes, ...(await search(`-${field}`))].sort(), field).toEqual(ids(() => true));
    }
  });
});
