// The comparison page in Chromium, run by web.e2e.test.ts on its server and browser (one server
// and one browser for every page keeps `npm test` fast): a passing and a failing build of one
// project, compared from the builds list (two rows ticked), from the build page (the previous
// build on the branch, and a build picked from a list), and a build with itself.

import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { passingAndFailing } from '../services/compare-fixtures.js';
import type { WebServer } from './harness.js';

export const PASS = 'checkpass0001';
export const FAIL = 'checkfail0001';

export async function checkComparePage(server: WebServer, page: Page, images: string, consoleErrors: string[]): Promise<void> {
  const ready = () => page.waitForSelector('body[data-ready="true"]');
  const { pass, fail } = passingAndFailing('checkout', { pass: PASS, fail: FAIL }, Date.now() - 7_200_000);
  const stored = await server.store.ingestNdjson([pass, fail].join('\n'));
  expect(stored.map((r) => r.status)).toEqual(['stored', 'stored']);

  // From the builds list: tick both rows, Compare opens the older as A.
  await page.goto(`${server.base}/builds?query=project:checkout`);
  await ready();
  expect(await page.isDisabled('#compare-selected')).toBe(true);
  await page.check(`tr[data-build-id="${FAIL}"] input.compare-pick`);
  await page.check(`tr[data-build-id="${PASS}"] input.compare-pick`);
  await page.click('#compare-selected');
  await page.waitForURL(new RegExp(`/compare/${PASS}/${FAIL}$`));
  await ready();
  const summary = page.locator('#compare-summary li');
  expect(await summary.nth(0).textContent()).toContain('Outcome: succeeded → failed');
  expect(await summary.nth(1).textContent()).toMatch(/newly failing task.*Task :test: executed → failed/);
  expect(await summary.nth(2).textContent()).toMatch(/newly failing test.*acme\.PriceTest\.roundsHalfCents: passed → failed/);
  expect(await page.textContent('#compare-summary')).toContain('Requested tasks: +publish');
  // Why :compileJava ran instead of coming from the cache: the source file that changed.
  expect(await page.textContent('#compare-summary li[data-reason="cache-miss"]')).toMatch(/cache miss.*Task :compileJava: input source: src\/main\/java\/acme\/Price\.java changed/);
  expect(await page.textContent('#compare-tasks tr[data-kind="task-inputs"]')).toContain('input source: src/main/java/acme/Price.java changed');
  // The dependency that moved between the builds, in the summary and in its section.
  expect(await page.textContent('#compare-summary li[data-reason="dependency"]')).toMatch(/dependency.*Dependency acme:money \(compileClasspath\): 1\.2 → 1\.3/);
  expect(await page.textContent('#compare-dependencies tr[data-kind="dependency"]')).toMatch(/acme:money.*1\.2.*1\.3/);
  expect(await page.textContent('#compare-dependencies tr[data-kind="list"]')).toMatch(/Resolved configurations.*testCompileClasspath/);
  expect(await page.getAttribute('#compare-tests', 'open')).not.toBeNull();
  expect(await page.locator('#compare-tasks tr[data-kind="task-outcome"]').count()).toBe(2);
  await page.screenshot({ path: join(images, 'web-compare.png'), fullPage: true });

  // A build with itself: no difference, every section collapsed.
  await page.goto(`${server.base}/compare/${FAIL}/${FAIL}`);
  await ready();
  expect(await page.textContent('#compare-summary')).toContain('No differences');
  expect(await page.locator('details.compare-section[open]').count()).toBe(0);
  expect(await page.locator('details.compare-section.identical').count()).toBe(6);

  // From the build page: the previous build of the project on its branch, found by a search.
  await page.goto(`${server.base}/builds/${FAIL}`);
  await ready();
  const previous = page.locator('#compare-previous-link');
  await previous.waitFor();
  expect(await previous.textContent()).toBe('Compare with the previous build of checkout on main');
  await previous.click();
  await page.waitForURL(new RegExp(`/compare/${PASS}/${FAIL}$`));
  await ready();
  expect(await summary.nth(2).textContent()).toContain('roundsHalfCents');

  // Or any build picked from a list; the swap link turns the comparison round.
  await page.goto(`${server.base}/builds/${FAIL}`);
  await ready();
  await page.click('#compare-picker summary');
  await page.click(`.compare-candidates a[href="/compare/${PASS}/${FAIL}"]`);
  await page.waitForURL(new RegExp(`/compare/${PASS}/${FAIL}$`));
  await ready();
  await page.click('#compare-swap');
  await page.waitForURL(new RegExp(`/compare/${FAIL}/${PASS}$`));
  await ready();
  expect(await summary.nth(2).textContent()).toMatch(/fixed test.*roundsHalfCents: failed → passed/);

  // An unknown build: said on the page, as the API says it.
  const before = consoleErrors.length;
  await page.goto(`${server.base}/compare/${PASS}/nosuchbuild00`);
  await ready();
  expect(await page.textContent('#compare-error')).toContain('does not exist, or you may not see it');
  // Chromium logs the 404 as a console error: the one error this check causes on purpose.
  expect(consoleErrors.splice(before)).toEqual([expect.stringMatching(/status of 404/)]);
}
