// The Tests page and a test's page in Chromium, run by web.e2e.test.ts on its server and browser.
// A month of one project's builds (demo builds of Gradle and `inventory`, so that each test has a
// history of some forty builds) is added to the server's builds; then the Tests page lists a flaky
// test with its failure probability and interval as the API answers them, its link leads to the
// test's page, whose strip has one cell per run linking to that run's build, and an unknown test
// says so. Takes docs/images/web-tests.png and web-test-page.png.

import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { TestHistory, TestsOverview } from '../../src/services/tests.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { pct } from '../../web/src/test-text.js';
import type { WebServer } from './harness.js';

export const TESTS_QUERY = 'project:inventory';

/** The demo builds of one tool and project out of `n`: about n / 60 builds, over the demo's month. */
export function oneProjectHistory(n: number, now: number): string[] {
  return [...demoBuilds({ builds: n, seed: 29, now })].filter((line) => {
    const r = JSON.parse(line) as { toolType: string; events: { type: { eventType: string }; data: Record<string, unknown> }[] };
    return r.toolType === 'native' && r.events.some((e) => e.type.eventType === 'ProjectStructure' && e.data['rootProjectName'] === 'inventory');
  });
}

export async function checkTestsPages(server: WebServer, page: Page, images: string, consoleErrors: string[]): Promise<void> {
  const ready = () => page.waitForSelector('body[data-ready="true"]');
  const stored = await server.store.ingestNdjson(oneProjectHistory(2400, Date.now()).join('\n'));
  expect(stored.length).toBeGreaterThan(20);
  expect(stored.every((r) => r.status === 'stored')).toBe(true);
  const api = async <T>(path: string): Promise<T> => (await page.request.get(`${server.base}${path}`)).json() as Promise<T>;

  // From the navigation, then the query bar: the tests of one project's builds.
  await page.click('a[data-nav="tests"]');
  await page.waitForURL(/\/tests$/);
  await ready();
  expect(await page.getAttribute('a[data-nav="tests"]', 'aria-current')).toBe('page');
  await page.goto(`${server.base}/tests?query=${encodeURIComponent(TESTS_QUERY)}`);
  await ready();
  const overview = await api<TestsOverview>(`/api/tests?query=${encodeURIComponent(TESTS_QUERY)}&limit=10`);
  expect(overview.flakiest.length).toBeGreaterThan(0);
  const flaky = overview.flakiest[0]!;
  const row = page.locator('#tests-flakiest tbody tr').first();
  expect(await row.getAttribute('data-test-id')).toBe(String(flaky.testId));
  expect(await row.locator('.verdict').textContent()).toBe('flaky');
  expect(await row.locator('.test-link').textContent()).toContain(flaky.name);
  // The statistic as the API answers it: the estimate and its 95% interval.
  expect(flaky.estimate.low).toBeLessThanOrEqual(flaky.estimate.p);
  expect(flaky.estimate.p).toBeLessThanOrEqual(flaky.estimate.high);
  expect(await row.locator('.estimate-p').textContent()).toBe(pct(flaky.estimate.p));
  expect(await row.locator('.estimate-interval').textContent()).toBe(`${pct(flaky.estimate.low)}–${pct(flaky.estimate.high)}`);
  expect(await page.locator('#tests-flakiest tbody tr').count()).toBe(overview.flakiest.length);
  expect(await page.locator('#tests-slowest tbody tr').count()).toBe(overview.slowest.length);
  expect(await page.locator('#tests-newlyFailing tbody tr').count()).toBe(overview.newlyFailing.length);
  expect(await page.locator('#failure-groups tbody tr').count()).toBe(overview.failureGroups.length);
  expect(await page.textContent('#tests-summary')).toContain(`${overview.tests} tests ran`);
  await page.screenshot({ path: join(images, 'web-tests.png'), fullPage: true });
  // Each list fits its card (at the browser's 1,400 px): no column is cut off at the card's edge.
  for (const card of await page.locator('.test-card').all()) {
    const [box, table] = [await card.boundingBox(), await card.locator('table').boundingBox()];
    if (box !== null && table !== null) expect(table.x + table.width, (await card.getAttribute('id')) ?? '').toBeLessThanOrEqual(box.x + box.width);
    // Nor is a heading cut short within its column.
    const cut = await card.locator('th').evaluateAll((ths) => ths.filter((th) => th.scrollWidth > th.clientWidth).map((th) => `${th.textContent}: ${th.scrollWidth} > ${th.clientWidth}`));
    expect(cut, (await card.getAttribute('id')) ?? '').toEqual([]);
  }

  // The flaky test's link leads to its page: verdict, evidence, the strip and the duration chart.
  await row.locator('a.test-link').click();
  await page.waitForURL(new RegExp(`/tests/${flaky.testId}$`));
  await ready();
  const history = await api<TestHistory>(`/api/tests/${flaky.testId}/history`);
  expect(await page.textContent('#test-title')).toContain(flaky.name);
  expect(await page.textContent('#test-verdict')).toContain('Flaky');
  expect(await page.textContent('#test-estimate')).toContain(`${pct(history.estimate.p)} (95% interval ${pct(history.estimate.low)}–${pct(history.estimate.high)})`);
  const cells = page.locator('#run-strip a.run-cell');
  expect(await cells.count()).toBe(history.runs.length);
  expect(await page.locator('#run-strip a.run-cell.failed').count()).toBe(history.runs.filter((r) => r.outcome === 'failed').length);
  const hrefs = await cells.evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  expect(hrefs).toEqual(history.runs.map((r) => `/builds/${r.buildId}`));
  expect(await page.locator('#duration-chart circle.dot').count()).toBe(history.runs.length);
  expect(await page.locator('#test-evidence a.evidence-build').count()).toBeGreaterThan(0);
  await page.screenshot({ path: join(images, 'web-test-page.png'), fullPage: true });

  // Its builds where it was flaky, a search of the flakyTest field: every build where it failed and
  // then passed on a retry, the verdict's evidence among them.
  const flakyQuery = new URL((await page.getAttribute('#test-flaky-builds', 'href'))!, server.base).searchParams.get('query')!;
  expect(flakyQuery).toContain('flakyTest:');
  const flakyBuilds = (await api<{ id: string }[]>(`/api/builds?${new URLSearchParams({ since: '0', query: flakyQuery, maxBuilds: '1000' })}`)).map((b) => b.id);
  const retried = history.verdict.kind === 'flaky' ? history.verdict.evidence.flatMap((e) => (e.kind === 'retried' ? [e.build.buildId] : [])) : [];
  expect(retried.length).toBeGreaterThan(0);
  for (const id of retried) expect(flakyBuilds).toContain(id);

  // A failed run's cell opens its build, where the test failed.
  const failedRun = history.runs.find((r) => r.outcome === 'failed')!;
  await page.locator(`#run-strip a.run-cell.failed[data-build-id="${failedRun.buildId}"]`).first().click();
  await page.waitForURL(new RegExp(`/builds/${failedRun.buildId}$`));
  await ready();
  await expect.poll(() => page.textContent('#tests')).toContain(flaky.name);

  // An unknown test: said on the page, as the API says it.
  const before = consoleErrors.length;
  await page.goto(`${server.base}/tests/999999`);
  await ready();
  expect(await page.textContent('#test-error')).toContain('There is no test 999999');
  // Chromium logs the 404 as a console error: the one error this check causes on purpose.
  expect(consoleErrors.splice(before)).toEqual([expect.stringMatching(/status of 404/)]);
}
