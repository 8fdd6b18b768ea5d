// A failure group's page in Chromium, run by web.e2e.test.ts on its server and browser after the
// Tests pages (test/web/tests-e2e.ts added a month of one project's builds). A group of the Tests
// page opens its page over the same query: its pattern, example, the day strip holding its builds,
// its tests and builds as the API answers them, more builds on request; a test's page links back to
// the group over all builds; the trends list the groups of their range and open them; a group of
// more builds than a page shows the rest on request; an unknown group says so. Takes docs/images/web-failure-group.png.

import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { FailureGroupPage, TestsOverview } from '../../src/services/tests.js';
import type { FailureGroupRow } from '../../src/store/types.js';
import { daySeries } from '../../web/src/failure-group-text.js';
import { failureGroupUrl } from '../../web/src/logic.js';
import type { WebServer } from './harness.js';
import { TESTS_QUERY } from './tests-e2e.js';

/** `n` builds of `payments`, an hour apart over the last days, each failed by the same lock held by another process. */
function ledgerBuilds(n: number): string[] {
  const start = Date.now() - (n + 2) * 3_600_000;
  return Array.from({ length: n }, (_, i) => {
    const at = start + i * 3_600_000;
    const ev = (t: number, eventType: string, data: Record<string, unknown>) => ({ timestamp: at + t, type: { majorVersion: 1, minorVersion: 0, eventType }, data });
    const failure = { classification: 'verification', message: `Ledger lock held by pid ${4000 + i} for ${3 + (i % 40)} s` };
    return JSON.stringify({ toolType: 'native', toolVersion: '8.10.2', agentVersion: '3.19', events: [ev(0, 'BuildStarted', {}), ev(1, 'ProjectStructure', { rootProjectName: 'payments' }), ev(2_000, 'BuildFinished', { outcome: 'failed', failures: [failure] })] });
  });
}

export async function checkFailureGroupPage(server: WebServer, page: Page, images: string, consoleErrors: string[]): Promise<void> {
  const ready = () => page.waitForSelector('body[data-ready="true"]');
  const api = async <T>(path: string): Promise<T> => (await page.request.get(`${server.base}${path}`)).json() as Promise<T>;

  // The Tests page links each group to its page, over the page's query.
  await page.goto(`${server.base}/tests?query=${encodeURIComponent(TESTS_QUERY)}`);
  await ready();
  const overview = await api<TestsOverview>(`/api/tests?query=${encodeURIComponent(TESTS_QUERY)}&limit=10`);
  const group = overview.failureGroups.find((g) => g.tests > 0)!;
  expect(group).toBeDefined();
  const link = page.locator(`#failure-groups tr[data-group-id="${group.groupId}"] a.group-link`);
  expect(await link.getAttribute('href')).toBe(failureGroupUrl(group.groupId, TESTS_QUERY));
  await link.click();
  await page.waitForURL((u) => u.pathname === `/failure-groups/${group.groupId}` && u.searchParams.get('query') === TESTS_QUERY);
  await ready();
  expect(await page.getAttribute('a[data-nav="tests"]', 'aria-current')).toBe('page');

  // Its pattern, example and counts, as the API answers them for the same query.
  const detail = await api<FailureGroupPage>(`/api/failure-groups/${group.groupId}?query=${encodeURIComponent(TESTS_QUERY)}`);
  expect(detail.group).toMatchObject({ key: group.key, builds: group.builds, tests: group.tests });
  expect(await page.textContent('#group-title')).toBe(group.key);
  expect(await page.textContent('#group-sample')).toBe(group.sample);
  expect(await page.textContent('#group-stats')).toContain(`Hit ${group.builds.toLocaleString('en-US')} build`);
  expect(await page.textContent('#group-query')).toBe(TESTS_QUERY);

  // The strip: a bar for each day it hit, together holding its builds (the demo builds are of the last month).
  const strip = daySeries(detail.days, Date.now());
  const bars = page.locator('#group-days rect.day.hit');
  expect(await bars.count()).toBe(strip.filter((d) => d.builds > 0).length);
  const perBar = await bars.evaluateAll((rs) => rs.map((r) => Number(r.getAttribute('data-builds'))));
  expect(perBar.reduce((a, b) => a + b, 0)).toBe(group.builds);

  // Its tests, linking to their pages; its builds newest first, linking to theirs, more on request.
  const testLinks = await page.locator('#group-tests a.test-link').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  expect(testLinks).toEqual(detail.tests.map((t) => `/tests/${t.testId}`));
  const buildLinks = () => page.locator('#group-builds a.group-build').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  expect(await buildLinks()).toEqual(detail.builds.map((b) => `/builds/${b.buildId}`));
  if (detail.next !== null) {
    const more = await api<FailureGroupPage>(`/api/failure-groups/${group.groupId}?query=${encodeURIComponent(TESTS_QUERY)}&before=${encodeURIComponent(detail.next)}`);
    await page.click('#group-more');
    await expect.poll(async () => (await buildLinks()).length).toBe(detail.builds.length + more.builds.length);
    expect((await buildLinks()).slice(detail.builds.length)).toEqual(more.builds.map((b) => `/builds/${b.buildId}`));
  } else expect(await page.isHidden('#group-more')).toBe(true);
  await page.screenshot({ path: join(images, 'web-failure-group.png'), fullPage: true });

  // A test it hit: its page lists the group, linking to it over all the builds.
  const test = detail.tests[0]!;
  await page.click(`#group-tests tr[data-test-id="${test.testId}"] a.test-link`);
  await page.waitForURL(new RegExp(`/tests/${test.testId}$`));
  await ready();
  const back = page.locator(`#test-groups tr[data-group-id="${group.groupId}"] a.group-link`);
  expect(await back.getAttribute('href')).toBe(failureGroupUrl(group.groupId));
  await back.click();
  await page.waitForURL(new RegExp(`/failure-groups/${group.groupId}$`));
  await ready();
  expect(await page.textContent('.group-scope')).toBe('In all the builds you may see.');
  const first = detail.builds[0]!;
  await page.click(`#group-builds a.group-build[href="/builds/${first.buildId}"]`);
  await page.waitForURL(new RegExp(`/builds/${first.buildId}$`));
  await ready();

  // The trends list the groups of their builds and range; a group opens over that range.
  await page.goto(`${server.base}/trends?query=${encodeURIComponent(TESTS_QUERY)}`);
  await ready();
  const trendLinks = page.locator('#trend-groups a.group-link');
  expect(await trendLinks.count()).toBeGreaterThan(0);
  expect(await trendLinks.count()).toBeLessThanOrEqual(10);
  const top = trendLinks.first();
  const topId = await top.getAttribute('data-group-id');
  await top.click();
  await page.waitForURL(new RegExp(`/failure-groups/${topId}\\?query=`));
  await ready();
  const rangeQuery = await page.textContent('#group-query');
  expect(rangeQuery).toContain(TESTS_QUERY);
  expect(rangeQuery).toContain('buildStartTime>=');
  expect(await page.locator('#group-builds a.group-build').count()).toBeGreaterThan(0);

  // A group of more builds than a page: *More builds* appends the next page, then goes away.
  await server.store.ingestNdjson(ledgerBuilds(55).join('\n'));
  const ledger = (await api<{ groups: FailureGroupRow[] }>(`/api/failure-groups?query=${encodeURIComponent('project:payments')}`)).groups[0]!;
  expect(ledger).toMatchObject({ key: 'Ledger lock held by pid <n> for <n> s', builds: 55, tests: 0 });
  await page.goto(`${server.base}${failureGroupUrl(ledger.groupId)}`);
  await ready();
  expect(await page.textContent('#group-stats')).toContain('all of them build failures');
  expect(await page.textContent('#group-tests')).toContain('No test');
  expect((await buildLinks()).length).toBe(50);
  await page.click('#group-more');
  await expect.poll(async () => (await buildLinks()).length).toBe(55);
  expect(new Set(await buildLinks()).size).toBe(55);
  expect(await page.isHidden('#group-more')).toBe(true);

  // An unknown group: said on the page, as the API says it.
  const before = consoleErrors.length;
  await page.goto(`${server.base}/failure-groups/999999`);
  await ready();
  expect(await page.textContent('h1')).toBe('Failure group not found');
  expect(await page.textContent('#group-error')).toContain('There is no failure group 999999');
  // Chromium logs the 404 as a console error: the one error this check causes on purpose.
  expect(consoleErrors.splice(before)).toEqual([expect.stringMatching(/status of 404/)]);
}
