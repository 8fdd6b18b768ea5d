// The test fields (`failedTest`, `flakyTest`, `hasFailedTest`), derived at ingest from TestStarted/TestFinished
// and searched on SQLite and PostgreSQL: the query of the issue ("the builds where
// acme.PriceTest.roundsHalfCents failed") is one term, exact or with wildcards. The differential
// tests (test/sql/store-differential.test.ts) compare the same fields with the reference
// evaluator on random queries; this file pins the derivation rules.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveAttributes } from '../../src/store/events/derive.js';
import { SEE_EVERYTHING, type BuildEvent } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';
import { checkedQuery, ev, line, openTestStore, type TestStore } from './support.js';
import { STORE_FIELDS } from '../../src/store/schema/migrations.js';
import { reconcileCatalog } from '../../src/store/schema/reconcile.js';
import { valueFieldCode } from '../../src/sql/value-fields.js';

const header = { toolType: 'native' as const, toolVersion: '8.10.2', agentVersion: '3.19' };
const started = (id: number, suite: string, name: string) => ev('TestStarted', { id, suite, name });
const finished = (id: number, outcome: string, extra: Record<string, unknown> = {}) => ev('TestFinished', { id, outcome, ...extra });
const build = (...events: BuildEvent[]) => [ev('BuildStarted'), ...events, ev('BuildFinished', { outcome: 'failed', failures: [] })];

describe('deriving the test fields', () => {
  it('names each failed test suite.name once, from its TestStarted, in any attempt', () => {
    const d = deriveAttributes(
      header,
      build(
        started(1, 'acme.PriceTest', 'roundsHalfCents'),
        finished(1, 'failed', { failure: { message: 'expected: <10.05> but was: <10.04>' } }),
        started(2, 'acme.PriceTest', 'roundsHalfCents'),
        finished(2, 'passed', { attempt: 2 }),
        started(3, 'acme.PriceTest', 'addsTax'),
        finished(3, 'FAILURE'),
        started(4, 'acme.StockTest', 'reserves'),
        finished(4, 'skipped', { skipReason: 'disabled' }),
        // A tool that names the test only when it ends.
        finished(5, 'failed', { suite: 'tests/test_x.py', name: 'test_y' }),
        // Neither a start nor a name: nothing to search for.
        finished(6, 'failed'),
      ),
    );
    expect(d.attributes['failedTest']).toEqual(['acme.PriceTest.roundsHalfCents', 'acme.PriceTest.addsTax', 'tests/test_x.py.test_y']);
    expect(d.attributes['hasFailedTest']).toBe(true);
    expect(d.values.filter(([f]) => f === 'failedtest').map(([, v]) => v)).toEqual(['acme.pricetest.roundshalfcents', 'acme.pricetest.addstax', 'tests/test_x.py.test_y']);
  });

  it('names each test that passed on a retry after a failed attempt as flaky, apart from the same test of other parameters', () => {
    const withParameters = (id: number, name: string, parameters: string) => ev('TestStarted', { id, suite: 'acme.RateTest', name, parameters });
    const d = deriveAttributes(
      header,
      build(
        // Failed, then passed on a retry: flaky (and a failed test, as its first attempt failed).
        started(1, 'acme.LoginIT', 'locksAfterFiveFailures'),
        finished(1, 'failed'),
        started(2, 'acme.LoginIT', 'locksAfterFiveFailures'),
        finished(2, 'passed', { attempt: 2 }),
        // Failed on every attempt: failed, not flaky.
        started(3, 'acme.PriceTest', 'addsTax'),
        finished(3, 'failed'),
        started(4, 'acme.PriceTest', 'addsTax'),
        finished(4, 'failed', { attempt: 2 }),
        // Passed, then failed: the last attempt says it failed.
        started(5, 'acme.StockTest', 'reserves'),
        finished(5, 'passed'),
        started(6, 'acme.StockTest', 'reserves'),
        finished(6, 'failed'),
        // One parameter failed, another passed: two tests, neither retried.
        withParameters(7, 'converts', '[1] EUR'),
        finished(7, 'failed'),
        withParameters(8, 'converts', '[2] USD'),
        finished(8, 'passed'),
      ),
    );
    expect(d.attributes['flakyTest']).toEqual(['acme.LoginIT.locksAfterFiveFailures']);
    expect(d.values.filter(([f]) => f === 'flakytest').map(([, v]) => v)).toEqual(['acme.loginit.locksafterfivefailures']);
    expect(d.attributes['failedTest']).toEqual(['acme.LoginIT.locksAfterFiveFailures', 'acme.PriceTest.addsTax', 'acme.StockTest.reserves', 'acme.RateTest.converts']);
  });

  it('has hasFailedTest false when every test passed or was skipped, and unknown without tests', () => {
    const passing = deriveAttributes(header, build(started(1, 'a.B', 'c'), finished(1, 'passed'), started(2, 'a.B', 'd'), finished(2, 'skipped')));
    expect(passing.attributes['hasFailedTest']).toBe(false);
    expect(passing.attributes['failedTest']).toBeUndefined();
    const none = deriveAttributes(header, build(ev('ConsoleOutput', { stream: 'stdout', text: 'hello\n' })));
    expect(none.attributes['hasFailedTest']).toBeUndefined();
  });
});

const dialects = pgAvailable() ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

describe.each(dialects)('searching the test fields (%s)', (dialect) => {
  let t: TestStore;
  const NOW = Date.now();
  const search = async (q: string) => (await t.store.listBuilds({ query: checkedQuery(q, NOW), visibility: SEE_EVERYTHING })).map((b) => b.id).sort();
  beforeAll(async () => {
    t = await openTestStore(dialect);
    const results = await t.store.ingestNdjson(
      [
        line({ buildId: 'tests00000001', events: build(started(1, 'acme.PriceTest', 'roundsHalfCents'), finished(1, 'failed')) }),
        line({ buildId: 'tests00000002', events: build(started(1, 'acme.PriceTest', 'addsTax'), finished(1, 'failed'), started(2, 'acme.PriceTest', 'roundsHalfCents'), finished(2, 'passed')) }),
        line({ buildId: 'tests00000003', events: build(started(1, 'acme.PriceTest', 'roundsHalfCents'), finished(1, 'passed')) }),
        line({ buildId: 'tests00000004', events: build() }),
        line({ buildId: 'tests00000005', events: build(started(1, 'acme.PriceTest', 'roundsHalfCents'), finished(1, 'failed'), started(2, 'acme.PriceTest', 'roundsHalfCents'), finished(2, 'passed', { attempt: 2 })) }),
      ].join('\n'),
    );
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('finds the builds where a test failed, by its exact name or a pattern, in any case', async () => {
    expect(await search('failedTest:acme.PriceTest.roundsHalfCents')).toEqual(['tests00000001', 'tests00000005']);
    expect(await search('failedTest:ACME.pricetest.ROUNDSHALFCENTS')).toEqual(['tests00000001', 'tests00000005']);
    expect(await search('failedTest:*PriceTest*')).toEqual(['tests00000001', 'tests00000002', 'tests00000005']);
    expect(await search('failedTest:*addsTax')).toEqual(['tests00000002']);
    expect(await search('failedTest:acme.*')).toEqual(['tests00000001', 'tests00000002', 'tests00000005']);
    expect(await search('-failedTest:acme.PriceTest.roundsHalfCents')).toEqual(['tests00000002', 'tests00000003', 'tests00000004']);
  });

  it('finds the builds where a test was flaky: failed, then passed on a retry', async () => {
    expect(await search('flakyTest:acme.PriceTest.roundsHalfCents')).toEqual(['tests00000005']);
    expect(await search('flakyTest:*')).toEqual(['tests00000005']);
    expect(await search('failedTest:acme.PriceTest.roundsHalfCents')).toEqual(['tests00000001', 'tests00000005']);
    expect(await search('failedTest:acme.PriceTest.roundsHalfCents -flakyTest:acme.PriceTest.roundsHalfCents')).toEqual(['tests00000001']);
  });

  it('derives the fields for builds stored before them, when the store opens (reconcileCatalog)', async () => {
    // As a database made before the fields: no values, no column values, not recorded as derived.
    await t.handle.db.deleteFrom(STORE_FIELDS).where('name', 'in', ['failedTest', 'flakyTest', 'hasFailedTest']).execute();
    await t.handle.db.deleteFrom('build_values').where('field', 'in', [valueFieldCode('failedtest'), valueFieldCode('flakytest')]).execute();
    await t.handle.db.updateTable('builds').set({ hasfailedtest: null }).execute();
    expect(await search('failedTest:*')).toEqual([]);
    expect(await search('flakyTest:*')).toEqual([]);
    const report = await reconcileCatalog(t.handle);
    expect([...report.newFields].sort()).toEqual(['failedTest', 'flakyTest', 'hasFailedTest']);
    expect(await search('failedTest:*PriceTest*')).toEqual(['tests00000001', 'tests00000002', 'tests00000005']);
    expect(await search('flakyTest:*')).toEqual(['tests00000005']);
    expect(await search('hasFailedTest:false')).toEqual(['tests00000003']);
  });

  it('tells builds with a failed test from builds whose tests passed and builds without tests', async () => {
    expect(await search('hasFailedTest')).toEqual(['tests00000001', 'tests00000002', 'tests00000005']);
    expect(await search('hasFailedTest:false')).toEqual(['tests00000003']);
    expect(await search('-hasFailedTest -hasFailedTest:false')).toEqual(['tests00000004']);
  });
});
