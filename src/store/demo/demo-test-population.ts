// The tests the demo builds run (demo-tests.ts), per tool: most stable, a few slow, one broken from
// a given day, a few flaky with a known probability of failing an attempt, one failing only on
// Windows or only on one branch, and one "fragile" test that fails whenever a build failed its
// tests for no other reason (the demo's build outcomes are fixed beforehand, demo-data.ts). The
// same tests run in every project of a tool, so each project has its own history of them.

import type { ToolType } from '../../query/catalog.js';

/** A failure as a test reports it; `{ms}` and `{port}` in the message are drawn per failure (failure groups join them). */
export interface DemoFailure {
  readonly type: string;
  readonly message: string;
  readonly frames: readonly string[];
}

/** How a demo test behaves over the builds: why and when it fails. */
export type DemoBehaviour =
  | { readonly kind: 'stable' }
  /** Fails an attempt with probability `p`; a failed attempt is retried once. */
  | { readonly kind: 'flaky'; readonly p: number }
  /** Fails every run from `from` (a fraction of the demo's time window: 0.5 is day 15 of 30). */
  | { readonly kind: 'broken'; readonly from: number }
  /** Fails every run on an operating system whose name starts with `os`. */
  | { readonly kind: 'os'; readonly os: string }
  /** Fails every run on `branch`. */
  | { readonly kind: 'branch'; readonly branch: string }
  /** Fails when the build failed its tests and no other test did. */
  | { readonly kind: 'fragile' };

export interface DemoTest {
  readonly suite: string;
  readonly name: string;
  /** Typical duration in ms (each run draws ±30%). */
  readonly ms: number;
  /** The duration grows by this fraction over the time window (a test getting slower). */
  readonly drift?: number;
  readonly behaviour: DemoBehaviour;
  readonly failure: DemoFailure;
}

const stable = { kind: 'stable' } as const;
const neverFails: DemoFailure = { type: 'AssertionError', message: 'unexpected failure', frames: [] };

const JVM: readonly DemoTest[] = [
  {
    suite: 'acme.PriceTest',
    name: 'roundsHalfCents',
    ms: 12,
    behaviour: { kind: 'fragile' },
    failure: {
      type: 'org.opentest4j.AssertionFailedError',
      message: 'expected: <10.05> but was: <10.04>',
      frames: ['org.junit.jupiter.api.AssertionUtils.fail(AssertionUtils.java:55)', 'org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:1141)', 'acme.PriceTest.roundsHalfCents(PriceTest.java:42)'],
    },
  },
  { suite: 'acme.PriceTest', name: 'addsTax', ms: 8, behaviour: stable, failure: neverFails },
  { suite: 'acme.inventory.StockServiceTest', name: 'reservesStock', ms: 45, behaviour: stable, failure: neverFails },
  {
    suite: 'acme.inventory.StockServiceTest',
    name: 'releasesOnTimeout',
    ms: 1_200,
    behaviour: { kind: 'flaky', p: 0.15 },
    failure: {
      type: 'java.util.concurrent.TimeoutException',
      message: 'Stock was not released within 1000 ms (waited {ms} ms)',
      frames: ['acme.inventory.StockService.awaitRelease(StockService.java:131)', 'acme.inventory.StockServiceTest.releasesOnTimeout(StockServiceTest.java:58)'],
    },
  },
  {
    suite: 'acme.inventory.StockServiceTest',
    name: 'rejectsNegativeQuantity',
    ms: 30,
    behaviour: { kind: 'broken', from: 0.5 },
    failure: {
      type: 'java.lang.NullPointerException',
      message: 'Cannot invoke "acme.inventory.Warehouse.find(String)" because "this.warehouse" is null',
      frames: ['acme.inventory.StockService.reserve(StockService.java:88)', 'acme.inventory.StockServiceTest.rejectsNegativeQuantity(StockServiceTest.java:74)'],
    },
  },
  { suite: 'acme.auth.LoginIT', name: 'signsInWithPassword', ms: 4_000, drift: 0.8, behaviour: stable, failure: neverFails },
  {
    suite: 'acme.auth.LoginIT',
    name: 'locksAfterFiveFailures',
    ms: 7_500,
    behaviour: { kind: 'flaky', p: 0.05 },
    failure: { type: 'java.util.concurrent.TimeoutException', message: 'Login did not complete within 5000 ms', frames: ['acme.auth.LoginIT.await(LoginIT.java:120)', 'acme.auth.LoginIT.locksAfterFiveFailures(LoginIT.java:77)'] },
  },
  {
    suite: 'acme.io.PathsTest',
    name: 'normalizesSeparators',
    ms: 5,
    behaviour: { kind: 'os', os: 'Windows' },
    failure: { type: 'org.opentest4j.AssertionFailedError', message: 'expected: <a/b/c> but was: <a\\b\\c>', frames: ['acme.io.PathsTest.normalizesSeparators(PathsTest.java:23)'] },
  },
];

const JS: readonly DemoTest[] = [
  { suite: 'src/cart.test.ts', name: 'adds an item', ms: 6, behaviour: stable, failure: neverFails },
  {
    suite: 'src/cart.test.ts',
    name: 'applies a coupon',
    ms: 9,
    behaviour: { kind: 'fragile' },
    failure: { type: 'AssertionError', message: 'expected 3 to equal 2', frames: ['at src/cart.test.ts:27:18', 'at processTicksAndRejections (node:internal/process/task_queues:95:5)'] },
  },
  { suite: 'src/cart.test.ts', name: 'empties on checkout', ms: 7, behaviour: stable, failure: neverFails },
  {
    suite: 'src/api.test.ts',
    name: 'retries on 503',
    ms: 900,
    behaviour: { kind: 'flaky', p: 0.2 },
    failure: { type: 'Error', message: 'Test timed out in 5000ms.', frames: ['at src/api.test.ts:41:5'] },
  },
  {
    suite: 'e2e/checkout.spec.ts',
    name: 'pays with a card',
    ms: 8_000,
    drift: 0.5,
    behaviour: { kind: 'flaky', p: 0.08 },
    failure: { type: 'TimeoutError', message: "locator.click: Timeout 5000ms exceeded waiting for getByRole('button', { name: 'Pay' })", frames: ['at e2e/checkout.spec.ts:33:27'] },
  },
  {
    suite: 'src/paths.test.ts',
    name: 'joins paths',
    ms: 4,
    behaviour: { kind: 'os', os: 'Windows' },
    failure: { type: 'AssertionError', message: "expected 'a\\\\b' to equal 'a/b'", frames: ['at src/paths.test.ts:12:30'] },
  },
];

const PY: readonly DemoTest[] = [
  { suite: 'tests/test_pipeline.py', name: 'test_loads_csv', ms: 35, behaviour: stable, failure: neverFails },
  {
    suite: 'tests/test_pipeline.py',
    name: 'test_dedupes_rows',
    ms: 60,
    behaviour: { kind: 'fragile' },
    failure: { type: 'AssertionError', message: 'assert 41 == 42', frames: ['tests/test_pipeline.py:58: in test_dedupes_rows', '    assert len(rows) == 42'] },
  },
  {
    suite: 'tests/test_pipeline.py',
    name: 'test_handles_empty_file',
    ms: 15,
    behaviour: { kind: 'broken', from: 0.45 },
    failure: { type: 'pandas.errors.EmptyDataError', message: 'No columns to parse from file', frames: ['src/pipeline/load.py:21: in load', 'tests/test_pipeline.py:71: in test_handles_empty_file'] },
  },
  { suite: 'tests/test_db.py', name: 'test_migrates', ms: 5_000, drift: 0.6, behaviour: stable, failure: neverFails },
  {
    suite: 'tests/test_db.py',
    name: 'test_concurrent_writes',
    ms: 700,
    behaviour: { kind: 'flaky', p: 0.25 },
    failure: { type: 'sqlite3.OperationalError', message: 'database is locked', frames: ['src/pipeline/db.py:44: in write', 'tests/test_db.py:88: in test_concurrent_writes'] },
  },
  {
    suite: 'tests/test_paths.py',
    name: 'test_posix_paths',
    ms: 3,
    behaviour: { kind: 'os', os: 'Windows' },
    failure: { type: 'AssertionError', message: "assert 'a\\\\b' == 'a/b'", frames: ['tests/test_paths.py:9: in test_posix_paths'] },
  },
];

const BAZEL: readonly DemoTest[] = [
  {
    suite: '//lib/core:tests',
    name: 'CoreTest.parsesConfig',
    ms: 20,
    behaviour: { kind: 'fragile' },
    failure: { type: 'AssertionError', message: 'value of: config.timeout() expected: 30 but was: 0', frames: ['at lib.core.CoreTest.parsesConfig(CoreTest.java:19)'] },
  },
  { suite: '//lib/core:tests', name: 'CoreTest.mergesDefaults', ms: 14, behaviour: stable, failure: neverFails },
  {
    suite: '//server:tests',
    name: 'ServerTest.startsOnFreePort',
    ms: 400,
    behaviour: { kind: 'flaky', p: 0.1 },
    failure: { type: 'java.net.BindException', message: 'Address already in use: bind 0.0.0.0:{port}', frames: ['at server.Server.start(Server.java:52)', 'at server.ServerTest.startsOnFreePort(ServerTest.java:30)'] },
  },
  { suite: '//server:tests', name: 'ServerTest.servesHealth', ms: 150, behaviour: stable, failure: neverFails },
  { suite: '//client:e2e', name: 'AppE2E.checksOut', ms: 12_000, drift: 0.4, behaviour: stable, failure: neverFails },
  {
    suite: '//lib/search:tests',
    name: 'IndexTest.ranksPhrasesFirst',
    ms: 80,
    behaviour: { kind: 'branch', branch: 'feature/search' },
    failure: { type: 'AssertionError', message: 'expected [doc2, doc1] but was [doc1, doc2]', frames: ['at lib.search.IndexTest.ranksPhrasesFirst(IndexTest.java:64)'] },
  },
];

export const DEMO_TESTS: Readonly<Record<ToolType, readonly DemoTest[]>> = {
  native: JVM,
  jvmbuild: JVM,
  scalabuild: JVM,
  targetbuild: BAZEL,
  jsbuild: JS,
  pybuild: PY,
};
